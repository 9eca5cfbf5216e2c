// A node:http upstream for end-to-end tests: it records every request that reaches it (method,
// URL, headers, body) and answers as the test says — by default 200 "ok".
import assert from 'node:assert/strict';
import {
  createServer,
  type IncomingHttpHeaders,
  type IncomingMessage,
  type Server,
  type ServerResponse,
} from 'node:http';
import { closeServer, listen } from './http-server.ts';

export interface SeenRequest {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  /** The whole request body. */
  body: Buffer;
  /** The body as UTF-8 text. */
  text: string;
}

/** Answers one request whose body has been read and recorded. */
export type Answer = (req: IncomingMessage, res: ServerResponse, seen: SeenRequest) => void;

export interface RecordingUpstream {
  server: Server;
  port: number;
  /** Requests received, oldest first (recorded once their body is read, before the answer). */
  seen: SeenRequest[];
  /** The latest request; fails the test when none arrived. */
  last(): SeenRequest;
  /** The latest request whose URL starts with `prefix`, if any. */
  latest(prefix: string): SeenRequest | undefined;
  /** Replaces how requests are answered. */
  answer(next: Answer): void;
  close(): Promise<void>;
}

/** 200 text/plain "ok". */
export const answerOk: Answer = (_req, res) => {
  res.writeHead(200, { 'content-type': 'text/plain', 'content-length': 2 });
  res.end('ok');
};

/** Starts a recording upstream on 127.0.0.1 answering with `answer` (default answerOk). */
export async function startRecordingUpstream(answer: Answer = answerOk): Promise<RecordingUpstream> {
  const seen: SeenRequest[] = [];
  let current = answer;
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      const entry = {
        method: req.method ?? '',
        url: req.url ?? '',
        headers: req.headers,
        body,
        text: body.toString('utf8'),
      };
      seen.push(entry);
      current(req, res, entry);
    });
  });
  const port = await listen(server);
  return {
    server,
    port,
    seen,
    last: () => {
      const latest = seen.at(-1);
      assert.ok(latest, 'no request reached the upstream');
      return latest;
    },
    latest: (prefix) => seen.findLast((entry) => entry.url.startsWith(prefix)),
    answer: (next) => {
      current = next;
    },
    close: () => closeServer(server),
  };
}

/** An answer that is an OpenAI chat completion whose message is `content` (for the OpenAI SDK). */
export function chatCompletionAnswer(content: string): Answer {
  return (_req, res) => {
    const body = JSON.stringify({
      id: 'chatcmpl-1',
      object: 'chat.completion',
      created: 1_700_000_000,
      model: 'gpt-4o-mini',
      choices: [{ index: 0, message: { role: 'assistant', content }, finish_reason: 'stop', logprobs: null }],
      usage: { prompt_tokens: 3, completion_tokens: 1, total_tokens: 4 },
    });
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
    res.end(body);
  };
}
