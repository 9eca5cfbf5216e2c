// The JSONPath subset of printer columns (CRD additionalPrinterColumns): `.a.b`, `['key']`,
// `[n]`, `[*]` and filters `[?(@.type=='Accepted')]` (with == or !=, string or number values).
// Evaluation yields every match in document order; columns show the first.
import { isPlainObject } from '../util/values.ts';

type Step =
  | { kind: 'field'; name: string }
  | { kind: 'index'; index: number }
  | { kind: 'all' }
  | { kind: 'filter'; path: string[]; negated: boolean; value: unknown };

export type CompiledPath = (root: unknown) => unknown[];

function parseLiteral(text: string): unknown {
  const trimmed = text.trim();
  if (/^'.*'$/.test(trimmed)) return trimmed.slice(1, -1);
  if (/^".*"$/.test(trimmed)) return JSON.parse(trimmed);
  if (trimmed === 'true' || trimmed === 'false') return trimmed === 'true';
  const number = Number(trimmed);
  if (trimmed !== '' && Number.isFinite(number)) return number;
  throw new Error(`unsupported filter value ${trimmed}`);
}

function parse(path: string): Step[] {
  const steps: Step[] = [];
  let i = 0;
  const text = path.trim().replace(/^\{(.*)\}$/, '$1');
  while (i < text.length) {
    const char = text[i];
    if (char === '.') {
      const match = /^[^.[\]]+/.exec(text.slice(i + 1));
      if (!match) throw new Error(`a field name is expected at ${i + 1} in ${path}`);
      steps.push({ kind: 'field', name: match[0] });
      i += 1 + match[0].length;
    } else if (char === '[') {
      const end = text.indexOf(']', i);
      if (end === -1) throw new Error(`unclosed [ in ${path}`);
      // A filter's own brackets do not occur in the subset, so the first ] closes it.
      const inner = text.slice(i + 1, end).trim();
      i = end + 1;
      if (inner === '*') steps.push({ kind: 'all' });
      else if (/^\d+$/.test(inner)) steps.push({ kind: 'index', index: Number(inner) });
      else if (/^'.*'$/.test(inner) || /^".*"$/.test(inner))
        steps.push({ kind: 'field', name: String(parseLiteral(inner)) });
      else {
        const filter = /^\?\(@((?:\.[^.=!\s]+)+)\s*(==|!=)\s*(.+)\)$/.exec(inner);
        if (!filter) throw new Error(`unsupported expression [${inner}] in ${path}`);
        steps.push({
          kind: 'filter',
          path: filter[1]!.slice(1).split('.'),
          negated: filter[2] === '!=',
          value: parseLiteral(filter[3]!),
        });
      }
    } else if (char === '$' && i === 0) {
      i++;
    } else {
      throw new Error(`unexpected "${char}" at ${i} in ${path}`);
    }
  }
  return steps;
}

function apply(step: Step, value: unknown): unknown[] {
  switch (step.kind) {
    case 'field':
      return isPlainObject(value) && value[step.name] !== undefined ? [value[step.name]] : [];
    case 'index':
      return Array.isArray(value) && step.index < value.length ? [value[step.index]] : [];
    case 'all':
      if (Array.isArray(value)) return value;
      return isPlainObject(value) ? Object.values(value) : [];
    case 'filter': {
      const items = Array.isArray(value) ? value : [];
      return items.filter((item) => {
        let current: unknown = item;
        for (const name of step.path) current = isPlainObject(current) ? current[name] : undefined;
        return (current === step.value) !== step.negated;
      });
    }
  }
}

/** Compiles a JSONPath once; throws on syntax outside the subset. */
export function compileJsonPath(path: string): CompiledPath {
  const steps = parse(path);
  return (root) => {
    let values: unknown[] = [root];
    for (const step of steps) values = values.flatMap((value) => apply(step, value));
    return values;
  };
}
