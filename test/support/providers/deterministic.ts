// The rules that make the mocks' answers predictable, so tests can assert exact values:
// answers echo the last user text, tokens are whitespace-separated words, tool calls are asked
// for in words ("call get_weather"), arguments and embeddings follow fixed formulas.

/** The mocks' token count: whitespace-separated words. */
export function countWords(text: string): number {
  let count = 0;
  for (const _ of text.matchAll(/\S+/g)) count++;
  return count;
}

/** The default answer to a conversation whose last turn is `text`. */
export function echoAnswer(text: string): string {
  return `echo: ${text}`;
}

/** The pieces a streamed answer arrives in: one word each with the whitespace before it; they join back to `text`. */
export function wordPieces(text: string): string[] {
  return text.match(/\s*\S+|\s+$/g) ?? [];
}

/** The first `max` words of `text`, as a max-tokens limit leaves it; `cut` says whether anything was dropped. */
export function limitWords(text: string, max: number | undefined): { text: string; cut: boolean } {
  if (max === undefined || countWords(text) <= max) return { text, cut: false };
  return {
    text: (text.match(/\s*\S+/g) ?? []).slice(0, Math.max(0, max)).join(''),
    cut: true,
  };
}

/** Fixed-size pieces of a string, as tool-call arguments are streamed. */
export function chunkString(text: string, size = 8): string[] {
  const pieces: string[] = [];
  for (let at = 0; at < text.length; at += size) pieces.push(text.slice(at, at + size));
  return pieces;
}

export interface OfferedTool {
  name: string;
  /** JSON schema of the arguments. */
  parameters: unknown;
}

/** The offered tools that `text` asks for with "call <name>", in the order asked, each once. */
export function requestedTools(text: string, tools: OfferedTool[]): OfferedTool[] {
  const chosen: OfferedTool[] = [];
  for (const match of text.matchAll(/\bcall\s+([^\s]+)/gi)) {
    const name = match[1].replace(/[.,;:!?)"'`]+$/, '');
    const tool = tools.find((candidate) => candidate.name === name);
    if (tool && !chosen.includes(tool)) chosen.push(tool);
  }
  return chosen;
}

/**
 * Arguments for a tool call: every property of the schema gets a fixed value for its type
 * (the first enum value; string "example", number 1, boolean true, array [], object {}; else null).
 */
export function toolArguments(parameters: unknown): Record<string, unknown> {
  const properties = isObject(parameters) && isObject(parameters.properties) ? parameters.properties : {};
  const values: Record<string, unknown> = {};
  for (const [name, schema] of Object.entries(properties)) values[name] = exampleValue(schema);
  return values;
}

function exampleValue(schema: unknown): unknown {
  if (!isObject(schema)) return null;
  if (Array.isArray(schema.enum) && schema.enum.length > 0) return schema.enum[0];
  const type = Array.isArray(schema.type) ? schema.type.find((entry) => entry !== 'null') : schema.type;
  switch (type) {
    case 'string':
      return 'example';
    case 'number':
    case 'integer':
      return 1;
    case 'boolean':
      return true;
    case 'array':
      return [];
    case 'object':
      return {};
    default:
      return null;
  }
}

export const DEFAULT_EMBEDDING_DIMENSIONS = 8;

/**
 * The embedding of `input`: `dimensions` values in [-1, 1] drawn from a generator seeded by the
 * input's hash. Each is a multiple of 1/1024, so it survives float32 (base64) encoding exactly.
 */
export function mockEmbedding(input: string, dimensions = DEFAULT_EMBEDDING_DIMENSIONS): number[] {
  let state = fnv1a(input);
  const values: number[] = [];
  for (let i = 0; i < dimensions; i++) {
    // mulberry32
    state = (state + 0x6d2b79f5) | 0;
    let t = Math.imul(state ^ (state >>> 15), 1 | state);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    const unit = ((t ^ (t >>> 14)) >>> 0) / 4294967296;
    values.push((Math.floor(unit * 2049) - 1024) / 1024);
  }
  return values;
}

/** Little-endian float32 bytes in base64: OpenAI's `encoding_format: "base64"`. */
export function float32Base64(values: number[]): string {
  const bytes = Buffer.alloc(values.length * 4);
  for (const [index, value] of values.entries()) bytes.writeFloatLE(value, index * 4);
  return bytes.toString('base64');
}

function fnv1a(text: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    hash ^= text.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193);
  }
  return hash >>> 0;
}

/** Ids unique within one mock: prefix + a zero-padded counter, e.g. "chatcmpl-mock000001". */
export function sequentialIds(): (prefix: string) => string {
  let next = 0;
  return (prefix) => `${prefix}mock${String(++next).padStart(6, '0')}`;
}

export function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
