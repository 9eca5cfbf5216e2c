// A webhook prompt guard service on 127.0.0.1, speaking agentgateway's guardrails webhook API as
// a user's service would: POST /request with {"body":{"messages":[...]}} and POST /response with
// {"body":{"choices":[{"message":...}]}}, answered {"action":...}. Its rules read the texts:
// one holding FORBIDDEN_WORD is rejected (REJECT_STATUS, REJECT_MESSAGE), SECRET-<code> is masked
// as <SECRET>, anything else passes. Every call is recorded (path, headers, body); `delayMs`
// makes it slow and `override` answers one call differently (a status, a raw body). With `tls`
// it serves HTTPS with that key and certificate.
import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http';
import { createServer, type Server } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';

export const FORBIDDEN_WORD = 'forbidden';
export const REJECT_STATUS = 451;
export const REJECT_MESSAGE = 'The webhook guard refuses forbidden topics';
export const SECRET = /SECRET-[A-Z0-9]+/g;

export interface WebhookCall {
  path: string;
  headers: IncomingHttpHeaders;
  body: { body: { messages?: WebhookMessage[]; choices?: { message: WebhookMessage }[] } };
}

export interface WebhookMessage {
  role: string;
  content: string;
}

/** An answer other than the rules': a status and a body as it is sent. */
export interface RawAnswer {
  status: number;
  body: string;
}

export interface WebhookGuardServer {
  readonly port: number;
  readonly calls: WebhookCall[];
  /** Milliseconds before each answer. */
  delayMs: number;
  /** When set, answers the next calls instead of the rules. */
  override: ((call: WebhookCall) => RawAnswer) | undefined;
  close(): Promise<void>;
}

/** What the rules say about `messages`: the action object. */
export function ruleAction(messages: readonly WebhookMessage[], side: 'request' | 'response'): unknown {
  if (messages.some((message) => message.content.includes(FORBIDDEN_WORD)))
    return { body: REJECT_MESSAGE, status_code: REJECT_STATUS, reason: 'forbidden topic' };
  if (!messages.some((message) => new RegExp(SECRET.source).test(message.content))) return { reason: 'clean' };
  const masked = messages.map((message) => ({ ...message, content: message.content.replace(SECRET, '<SECRET>') }));
  return {
    body: side === 'request' ? { messages: masked } : { choices: masked.map((message) => ({ message })) },
    reason: 'secret codes',
  };
}

export async function startWebhookGuardServer(
  options: { tls?: { key: string; cert: string } } = {},
): Promise<WebhookGuardServer> {
  const calls: WebhookCall[] = [];
  const state: { delayMs: number; override: WebhookGuardServer['override'] } = { delayMs: 0, override: undefined };
  const handle = (req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const call: WebhookCall = {
        path: req.url ?? '',
        headers: req.headers,
        body: JSON.parse(Buffer.concat(chunks).toString('utf8')),
      };
      calls.push(call);
      const answer = (): RawAnswer => {
        if (state.override) return state.override(call);
        if (req.method !== 'POST' || (call.path !== '/request' && call.path !== '/response'))
          return { status: 404, body: 'not found' };
        const side = call.path === '/request' ? 'request' : 'response';
        const messages =
          side === 'request'
            ? (call.body.body.messages ?? [])
            : (call.body.body.choices ?? []).map((choice) => choice.message);
        return { status: 200, body: JSON.stringify({ action: ruleAction(messages, side) }) };
      };
      setTimeout(() => {
        if (res.destroyed) return;
        const { status, body } = answer();
        res.writeHead(status, { 'content-type': 'application/json' }).end(body);
      }, state.delayMs);
    });
  };
  const server: Server = options.tls ? createHttpsServer(options.tls, handle) : createServer(handle);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as AddressInfo).port,
    calls,
    get delayMs() {
      return state.delayMs;
    },
    set delayMs(value: number) {
      state.delayMs = value;
    },
    get override() {
      return state.override;
    },
    set override(value) {
      state.override = value;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
