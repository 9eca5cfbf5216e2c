// Shared by the stream tests: fixtures, feeding a processor in pieces, a seeded PRNG, and an
// independent SSE parse (eventsource-parser) of what a client would receive.
import { readFileSync, writeFileSync } from 'node:fs';
import { createParser, type EventSourceMessage } from 'eventsource-parser';
import type { ClientChatFormat, ProviderChatFormat, StreamProcessor } from '../../../src/dataplane/ai/formats/index.ts';

const FIXTURES = new URL('../../fixtures/formats/', import.meta.url);

export function fixture(name: string): Uint8Array {
  return new Uint8Array(readFileSync(new URL(name, FIXTURES)));
}

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

/** Chunk timestamps are the time of translation; goldens hold 0. */
export function normalizeCreated(text: string): string {
  return text.replace(/"created":\d+/g, '"created":0');
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
  // A Gemini client (streamGenerateContent?alt=sse) of an Anthropic and an OpenAI provider.
  { input: 'messages-text.sse', from: 'messages', to: 'gemini', expected: 'messages-text.to-gemini.sse' },
  { input: 'messages-tools.sse', from: 'messages', to: 'gemini', expected: 'messages-tools.to-gemini.sse' },
  { input: 'messages-error.sse', from: 'messages', to: 'gemini', expected: 'messages-error.to-gemini.sse' },
  { input: 'completions-tools.sse', from: 'completions', to: 'gemini', expected: 'completions-tools.to-gemini.sse' },
  { input: 'completions-error.sse', from: 'completions', to: 'gemini', expected: 'completions-error.to-gemini.sse' },
];
