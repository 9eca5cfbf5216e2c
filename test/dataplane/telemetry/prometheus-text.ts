// A small parser of the Prometheus text format (0.0.4) for the tests: samples with their labels,
// and the TYPE of each family; it rejects malformed lines and duplicate series.
export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

export interface Exposition {
  samples: Sample[];
  types: Map<string, string>;
}

const SAMPLE = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/;
const LABEL = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"(?:,|$)/y;

export function parseExposition(text: string): Exposition {
  const samples: Sample[] = [];
  const types = new Map<string, string>();
  const seen = new Set<string>();
  for (const line of text.split('\n')) {
    if (line === '') continue;
    if (line.startsWith('# TYPE ')) {
      const [name, type] = line.slice(7).split(' ');
      if (!name || !type || types.has(name)) throw new Error(`bad or repeated TYPE line: ${line}`);
      types.set(name, type);
      continue;
    }
    if (line.startsWith('#')) continue;
    const match = SAMPLE.exec(line);
    if (!match) throw new Error(`malformed sample line: ${line}`);
    const labels: Record<string, string> = {};
    const body = match[2] ?? '';
    LABEL.lastIndex = 0;
    while (LABEL.lastIndex < body.length) {
      const label = LABEL.exec(body);
      if (!label) throw new Error(`malformed labels: ${line}`);
      const name = label[1] as string;
      if (name in labels) throw new Error(`repeated label ${name}: ${line}`);
      labels[name] = (label[2] as string).replace(/\\(.)/g, (_, c: string) => (c === 'n' ? '\n' : c));
    }
    const key = `${match[1]}{${Object.entries(labels)
      .sort()
      .map(([k, v]) => `${k}=${v}`)
      .join(',')}}`;
    if (seen.has(key)) throw new Error(`duplicate series: ${line}`);
    seen.add(key);
    const raw = match[3] as string;
    const value = raw === '+Inf' ? Number.POSITIVE_INFINITY : raw === '-Inf' ? Number.NEGATIVE_INFINITY : Number(raw);
    if (Number.isNaN(value) && raw !== 'NaN') throw new Error(`bad value: ${line}`);
    samples.push({ name: match[1] as string, labels, value });
  }
  return { samples, types };
}

/** Samples of `name` whose labels include every pair of `labels`. */
export function find(exposition: Exposition, name: string, labels: Record<string, string> = {}): Sample[] {
  return exposition.samples.filter(
    (sample) => sample.name === name && Object.entries(labels).every(([k, v]) => sample.labels[k] === v),
  );
}

/** The one sample of `name` with those labels (throws when there is not exactly one). */
export function value(exposition: Exposition, name: string, labels: Record<string, string> = {}): number {
  const found = find(exposition, name, labels);
  if (found.length !== 1) throw new Error(`expected one ${name} ${JSON.stringify(labels)}, found ${found.length}`);
  return (found[0] as Sample).value;
}
