// The API's Duration ("1m30s", "500ms") and ByteSize ("2Mi", "16kb", 1024) values as numbers.
// Admission has already checked their shape; these only convert.

const DURATION_PART = /([0-9]+)(h|ms|m|s)/g;
const DURATION_UNIT_MS: Record<string, number> = { h: 3_600_000, m: 60_000, s: 1000, ms: 1 };

/** Milliseconds of an API Duration ("3s", "1h30m", "250ms"). */
export function durationMs(value: string): number {
  let total = 0;
  let consumed = 0;
  for (const match of value.matchAll(DURATION_PART)) {
    if (match.index !== consumed) break;
    total += Number(match[1]) * DURATION_UNIT_MS[match[2]!]!;
    consumed += match[0].length;
  }
  if (consumed === 0 || consumed !== value.length) throw new Error(`"${value}" is not a duration such as 3s or 1m30s`);
  return total;
}

const BYTE_SUFFIX: Record<string, number> = {
  '': 1,
  k: 1e3,
  kb: 1e3,
  m: 1e6,
  mb: 1e6,
  g: 1e9,
  gb: 1e9,
  ki: 1024,
  kib: 1024,
  mi: 1024 ** 2,
  mib: 1024 ** 2,
  gi: 1024 ** 3,
  gib: 1024 ** 3,
  t: 1e12,
  tb: 1e12,
  ti: 1024 ** 4,
  tib: 1024 ** 4,
};

/** Bytes of an API ByteSize: a number, or a quantity with a decimal or binary suffix ("2Mi", "16kb"). */
export function byteSize(value: number | string): number {
  if (typeof value === 'number') return value;
  const match = /^([0-9]*\.?[0-9]+(?:[eE][+-]?[0-9]+)?)\s*([a-zA-Z]*)$/.exec(value.trim());
  const factor = match ? BYTE_SUFFIX[match[2]!.toLowerCase()] : undefined;
  if (!match || factor === undefined) throw new Error(`"${value}" is not a byte size such as 2Mi or 16kb`);
  return Math.floor(Number(match[1]) * factor);
}
