// Shared by the stream tests: fixtures, feeding a processor in pieces, a seeded PRNG, and an
// independent SSE parse (eventsource-parser) of what a client would receive.
import { readFileSync, writeFileSync } from 'node:fs';
import { createParser, type EventSourceMessage } from 'eventsource-parser';
import type { ClientChatFormat, ProviderChatFormat, StreamProcessor } from '../../../src/dataplane/ai/formats/index.ts';
import { eventFrame, exceptionFrame } from '../../helpers/bedrock-stand-in.ts';

const FIXTURES = new URL('../../fixtures/formats/', import.meta.url);

/**
 * A recorded provider stream's bytes. ConverseStream recordings are kept readable as JSON
 * (`*.events.json`: one `{event, payload}` or `{exception, message}` per frame) and framed here
 * in AWS event-stream frames as Bedrock sends them; every other fixture is the bytes as sent.
 */
export function fixture(name: string): Uint8Array {
  const bytes = new Uint8Array(readFileSync(new URL(name, FIXTURES)));
  if (!name.endsWith('.events.json')) return bytes;
  const frames = (JSON.parse(new TextDecoder().decode(bytes)) as ConverseFrame[]).map((frame) =>
    'exception' in frame ? exceptionFrame(frame.exception, frame.message) : eventFrame(frame.event, frame.payload),
  );
  return new Uint8Array(Buffer.concat(frames));
}

type ConverseFrame = { event: string; payload: unknown } | { exception: string; message: string };

/** The expected output file; with UPDATE_GOLDEN=1 the actual output is written instead. */
export function golden(name: string, actual: string): string {
  const url = new URL(`expected/${name}`, FIXTURES);
  if (process.env.UPDATE_GOLDEN === '1') writeFileSync(url, actual);
  return readFileSync(url, 'utf8');
}

/** Feeds the pieces, then ends the stream; returns everything the client received. */
export function feed(processor: StreamProcessor, pieces: Iterable<Uint8Array>): string {
  let out = '';
  for (const piece of pieces) out += processor.write(piece);
  return out + processor.end();
}

/** Splits bytes at the given offsets (ascending). */
export function splitAt(bytes: Uint8Array, offsets: number[]): Uint8Array[] {
  const pieces: Uint8Array[] = [];
  let start = 0;
  for (const offset of offsets) {
    pieces.push(bytes.subarray(start, offset));
    start = offset;
  }
  pieces.push(bytes.subarray(start));
  return pieces;
}

/** Seeded: the fuzz cases are the same on every run. */
export { seededRandom as prng } from '../../helpers/random.ts';

export function randomSplits(bytes: Uint8Array, random: () => number, maxPieces: number): Uint8Array[] {
  const count = Math.floor(random() * maxPieces);
  const offsets = Array.from({ length: count }, () => Math.floor(random() * (bytes.length + 1))).sort((a, b) => a - b);
  return splitAt(bytes, offsets);
}

/**
 * What gw makes up per translation: chunk and response timestamps (the time of translation) and
 * the ids of translated Converse streams (Converse has none); goldens hold 0 and bedrock-ID.
 */
export function normalizeCreated(text: string): string {
  return text
    .replace(/"(created|created_at)":\d+/g, '"$1":0')
    .replace(/bedrock-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g, 'bedrock-ID');
}

export function parseSse(text: string): EventSourceMessage[] {
  const events: EventSourceMessage[] = [];
  const parser = createParser({ onEvent: (event) => events.push(event) });
  parser.feed(text);
  return events;
}

/** Each recorded provider stream, the direction it is translated in, and its expected client stream. */
export interface GoldenCase {
  input: string;
  from: ProviderChatFormat;
  to: ClientChatFormat;
  includeUsage?: boolean;
  /** The model the client asked for (gw passes it; a Converse stream names none). */
  model?: string;
  expected: string;
}

export const GOLDEN_CASES: GoldenCase[] = [
  { input: 'messages-text.sse', from: 'messages', to: 'completions', expected: 'messages-text.to-completions.sse' },
  {
    input: 'messages-text.sse',
    from: 'messages',
    to: 'completions',
    includeUsage: true,
    expected: 'messages-text.to-completions-usage.sse',
  },
  { input: 'messages-tools.sse', from: 'messages', to: 'completions', expected: 'messages-tools.to-completions.sse' },
  {
    input: 'messages-tools.sse',
    from: 'messages',
    to: 'completions',
    includeUsage: true,
    expected: 'messages-tools.to-completions-usage.sse',
  },
  { input: 'messages-error.sse', from: 'messages', to: 'completions', expected: 'messages-error.to-completions.sse' },
  { input: 'completions-text.sse', from: 'completions', to: 'messages', expected: 'completions-text.to-messages.sse' },
  {
    input: 'completions-tools.sse',
    from: 'completions',
    to: 'messages',
    expected: 'completions-tools.to-messages.sse',
  },
  {
    input: 'completions-no-usage.sse',
    from: 'completions',
    to: 'messages',
    expected: 'completions-no-usage.to-messages.sse',
  },
  {
    input: 'completions-error.sse',
    from: 'completions',
    to: 'messages',
    expected: 'completions-error.to-messages.sse',
  },
  ...translatedToEveryClient(
    'completions',
    ['completions-text.sse', 'completions-tools.sse', 'completions-error.sse'],
    ['responses', 'gemini'],
  ),
  ...translatedToEveryClient(
    'messages',
    ['messages-text.sse', 'messages-tools.sse', 'messages-error.sse'],
    ['responses', 'gemini'],
  ),
  ...translatedToEveryClient(
    'converse',
    ['converse-text.events.json', 'converse-tools.events.json', 'converse-error.events.json'],
    ['completions', 'messages', 'responses', 'gemini'],
  ),
  ...translatedToEveryClient(
    'responses',
    ['responses-provider-text.sse', 'responses-provider-tools.sse', 'responses-incomplete.sse', 'responses-failed.sse'],
    ['completions', 'messages', 'gemini'],
  ),
  ...translatedToEveryClient(
    'gemini',
    ['gemini-text.sse', 'gemini-tools.sse', 'gemini-error.sse'],
    ['completions', 'messages', 'responses'],
  ),
];

/** Each input translated to each of `clients`, Chat Completions with the usage chunk asked for. */
function translatedToEveryClient(
  from: ProviderChatFormat,
  inputs: string[],
  clients: ClientChatFormat[],
): GoldenCase[] {
  return inputs.flatMap((input) =>
    clients.map((to) => ({
      input,
      from,
      to,
      ...(to === 'completions' ? { includeUsage: true } : {}),
      ...(from === 'converse' ? { model: 'us.anthropic.claude-sonnet-4-5-20250929-v1:0' } : {}),
      expected: `${input.replace(/\.(sse|events\.json)$/, '')}.to-${to}.sse`,
    })),
  );
}
