// The legacy HTTP+SSE client gw is to a target (MCP 2024-11-05 transport): a GET opens the
// target's event stream, whose first `endpoint` event names where messages are POSTed; every
// answer and every server message then arrives on that one stream. The connection is the upstream
// session, so it lives in the replica that opened it (docs/mcp.md "Legacy SSE targets").
import type { Readable } from 'node:stream';
import { idKey, isResponse, type JsonRpcMessage, type JsonRpcRequest, type JsonRpcResponse } from './jsonrpc.ts';
import type { McpTarget } from './targets.ts';
import {
  discard,
  mediaType,
  SETUP_TIMEOUT_MS,
  StreamMessages,
  targetEvents,
  targetRequest,
  type UpstreamContext,
} from './upstream-http.ts';
import type { OnTargetMessage, PostOutcome } from './upstream-streamable.ts';

/** Most requests awaiting their answer on one connection. */
const MAX_PENDING = 1024;

interface Pending {
  resolve: (outcome: PostOutcome) => void;
  timer: NodeJS.Timeout;
}

export class SseTargetConnection {
  readonly target: McpTarget;
  readonly #endpoint: string;
  readonly #body: Readable;
  readonly #pending = new Map<string, Pending>();
  #closed = false;
  #onClose: (() => void) | undefined;

  private constructor(target: McpTarget, endpoint: string, body: Readable) {
    this.target = target;
    this.#endpoint = endpoint;
    this.#body = body;
  }

  get closed(): boolean {
    return this.#closed;
  }

  /**
   * Opens the target's stream and waits (SETUP_TIMEOUT_MS at most) for its endpoint, which must be
   * on the target's own origin. Messages that are not answers go to `onMessage`; `onClose` is told
   * when the stream ends.
   */
  static async open(
    target: McpTarget,
    context: UpstreamContext,
    onMessage: OnTargetMessage,
    onClose: () => void,
  ): Promise<SseTargetConnection | { failure: string; httpStatus?: number }> {
    const response = await targetRequest(
      target,
      'GET',
      { ...context, timeoutMs: SETUP_TIMEOUT_MS, streaming: true },
      { accept: 'text/event-stream' },
    );
    if ('failure' in response) return response;
    if (response.statusCode !== 200 || mediaType(response.headers) !== 'text/event-stream') {
      discard(response.body);
      return { failure: `HTTP ${response.statusCode} to the SSE stream`, httpStatus: response.statusCode };
    }
    const events = targetEvents(response.body);
    const endpoint = await firstEndpoint(events, target);
    if ('failure' in endpoint) {
      response.body.destroy();
      return endpoint;
    }
    const connection = new SseTargetConnection(target, endpoint.path, response.body);
    connection.#onClose = onClose;
    void connection.#read(events, onMessage);
    return connection;
  }

  async #read(events: AsyncGenerator<{ event?: string; data?: string }>, onMessage: OnTargetMessage): Promise<void> {
    const messages = new StreamMessages();
    try {
      for await (const event of events) {
        const message = messages.of(event);
        // A target that speaks something else ends the connection, as a broken stream does.
        if (messages.broken) break;
        if (message === undefined) continue;
        const pending = isResponse(message) && message.id !== null ? this.#pending.get(idKey(message.id)) : undefined;
        if (pending) {
          this.#pending.delete(idKey((message as JsonRpcResponse).id!));
          clearTimeout(pending.timer);
          pending.resolve({ kind: 'response', message: message as JsonRpcResponse, sessionId: undefined });
        } else {
          onMessage(message);
        }
      }
    } catch {
      // a broken stream ends the connection like a closed one
    }
    this.close();
  }

  /** Sends a request and waits for its answer on the stream. */
  request(message: JsonRpcRequest, context: UpstreamContext): Promise<PostOutcome> {
    if (this.#closed) return Promise.resolve({ kind: 'expired' });
    const key = idKey(message.id);
    if (this.#pending.size >= MAX_PENDING || this.#pending.has(key))
      return Promise.resolve({ kind: 'failed', reason: 'too many requests in flight' });
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.#pending.delete(key);
        resolve({ kind: 'failed', reason: 'timeout' });
      }, context.timeoutMs);
      this.#pending.set(key, { resolve, timer });
      void this.send(message, context).then((outcome) => {
        if (outcome.kind === 'accepted') return;
        const pending = this.#pending.get(key);
        if (!pending) return;
        this.#pending.delete(key);
        clearTimeout(pending.timer);
        resolve(outcome);
      });
    });
  }

  /** POSTs a message to the endpoint; `accepted` once the target took it. */
  async send(message: JsonRpcMessage, context: UpstreamContext): Promise<PostOutcome> {
    if (this.#closed) return { kind: 'expired' };
    const response = await targetRequest(
      this.target,
      'POST',
      context,
      { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      JSON.stringify(message),
      this.#endpoint,
    );
    if ('failure' in response) return { kind: 'failed', reason: response.failure };
    discard(response.body);
    if (response.statusCode === 404) {
      this.close();
      return { kind: 'expired' };
    }
    if (response.statusCode < 200 || response.statusCode >= 300)
      return { kind: 'failed', reason: `HTTP ${response.statusCode}` };
    return { kind: 'accepted' };
  }

  /** Ends the connection: the stream is dropped and every waiting request told the session is gone. */
  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#body.destroy();
    for (const pending of this.#pending.values()) {
      clearTimeout(pending.timer);
      pending.resolve({ kind: 'expired' });
    }
    this.#pending.clear();
    this.#onClose?.();
  }
}

/** The first event must be `endpoint`: a URL (usually relative) on the target's origin. */
async function firstEndpoint(
  events: AsyncGenerator<{ event?: string; data?: string }>,
  target: McpTarget,
): Promise<{ path: string } | { failure: string }> {
  const timeout = new Promise<{ failure: string }>((resolve) =>
    setTimeout(() => resolve({ failure: 'no endpoint event in time' }), SETUP_TIMEOUT_MS).unref(),
  );
  const first = (async () => {
    try {
      // next() by hand: a for-await loop would close the generator the connection goes on reading.
      for (let step = await events.next(); !step.done; step = await events.next()) {
        if (step.value.event !== 'endpoint') continue;
        const base = new URL(target.path, target.origin);
        let url: URL;
        try {
          url = new URL((step.value.data ?? '').trim(), base);
        } catch {
          return { failure: 'an endpoint that is not a URL' };
        }
        if (url.origin !== base.origin) return { failure: 'an endpoint on another origin' };
        return { path: url.pathname + url.search };
      }
    } catch {
      return { failure: 'the SSE stream broke before its endpoint' };
    }
    return { failure: 'the SSE stream ended before its endpoint' };
  })();
  return Promise.race([first, timeout]);
}
