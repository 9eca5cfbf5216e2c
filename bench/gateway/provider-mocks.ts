// Fixed-answer stand-ins of Amazon Bedrock (Converse, ConverseStream) and the Google Gemini API
// (generateContent, streamGenerateContent) for the gateway benchmark's translated-provider rows:
// each answers every request at once with one precomputed body of about the OpenAI mock's fixed
// size, without reading the request body, records nothing, checks no signature or key, and keeps
// idle connections as long as the OpenAI mock — so that the upstream costs what the OpenAI mock's
// fixed mode costs and the row measures gw.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { eventFrame } from '../../test/helpers/bedrock-stand-in.ts';

/** Text of the fixed answers, sized like the OpenAI mock's 1 KiB completion. */
const TEXT = `${'The quick brown fox jumps over the lazy dog. '.repeat(18)}`.trim();
const USAGE_BEDROCK = { inputTokens: 42, outputTokens: 180, totalTokens: 222 };
const USAGE_GEMINI = { promptTokenCount: 42, candidatesTokenCount: 180, totalTokenCount: 222 };

const CONVERSE = Buffer.from(
  JSON.stringify({
    output: { message: { role: 'assistant', content: [{ text: TEXT }] } },
    stopReason: 'end_turn',
    usage: USAGE_BEDROCK,
    metrics: { latencyMs: 1 },
  }),
);
const CONVERSE_STREAM = Buffer.concat([
  eventFrame('messageStart', { role: 'assistant' }),
  ...TEXT.split(/(?<=\. )/).map((text) => eventFrame('contentBlockDelta', { contentBlockIndex: 0, delta: { text } })),
  eventFrame('contentBlockStop', { contentBlockIndex: 0 }),
  eventFrame('messageStop', { stopReason: 'end_turn' }),
  eventFrame('metadata', { usage: USAGE_BEDROCK, metrics: { latencyMs: 1 } }),
]);

const geminiChunk = (text: string, last: boolean) => {
  const candidate: Record<string, unknown> = { content: { role: 'model', parts: [{ text }] }, index: 0 };
  if (last) candidate.finishReason = 'STOP';
  return {
    candidates: [candidate],
    modelVersion: 'gemini-2.5-flash',
    ...(last ? { usageMetadata: USAGE_GEMINI } : {}),
  };
};
const GEMINI = Buffer.from(JSON.stringify(geminiChunk(TEXT, true)));
const GEMINI_STREAM = Buffer.from(
  TEXT.split(/(?<=\. )/)
    .map((text, index, all) => `data: ${JSON.stringify(geminiChunk(text, index === all.length - 1))}\r\n\r\n`)
    .join(''),
);

/** One fixed answer: its body and its response headers, built once. */
export interface FixedAnswer {
  headers: Record<string, string>;
  body: Buffer;
}

export function fixedAnswer(type: string, body: Buffer): FixedAnswer {
  return { headers: { 'content-type': type, 'content-length': String(body.length) }, body };
}

/**
 * A server that answers every request at once with `answer(url)`, as the OpenAI and Anthropic
 * mocks do in fixed mode: the request body is not read (node:http discards it) and the idle
 * keep-alive timeout is theirs (65 s), so that no upstream costs more than another per request.
 */
export function fixedServer(answer: (url: string) => FixedAnswer): Server {
  const server = createServer((req, res) => {
    const { headers, body } = answer(req.url ?? '/');
    res.writeHead(200, headers);
    res.end(body);
  });
  server.keepAliveTimeout = 65_000;
  return server;
}

async function listening(server: Server): Promise<number> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return (server.address() as AddressInfo).port;
}

export interface ProviderMock {
  port: number;
  close(): Promise<void>;
}

export async function started(server: Server): Promise<ProviderMock> {
  const port = await listening(server);
  return {
    port,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** Bedrock runtime: /model/{id}/converse answers Converse JSON, /converse-stream the event stream. */
export function startBedrockMock(): Promise<ProviderMock> {
  const converse = fixedAnswer('application/json', CONVERSE);
  const stream = fixedAnswer('application/vnd.amazon.eventstream', CONVERSE_STREAM);
  return started(fixedServer((url) => (url.endsWith('/converse-stream') ? stream : converse)));
}

/** Gemini API: :generateContent answers JSON, :streamGenerateContent?alt=sse the SSE chunks. */
export function startGeminiMock(): Promise<ProviderMock> {
  const generate = fixedAnswer('application/json; charset=UTF-8', GEMINI);
  const stream = fixedAnswer('text/event-stream', GEMINI_STREAM);
  return started(fixedServer((url) => (url.includes(':streamGenerateContent') ? stream : generate)));
}
