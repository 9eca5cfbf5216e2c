// A downstream SSE stream of a session (a POST's answer stream, or the GET stream of
// server-initiated messages): numbered events kept in a bounded replay buffer, written to at most
// one client connection at a time. A client that lost the connection resumes with GET and
// Last-Event-ID and gets what it missed — from the replica that holds the buffer (docs/mcp.md
// "Resumable streams"). Event ids are `<stream key>.<number>`; stream keys start with a random
// per-process part, so ids never repeat across replicas.
import { randomBytes } from 'node:crypto';
import { systemClock } from '../../util/clock.ts';
import type { ClientResponse } from '../proxy/client-response.ts';
import type { JsonRpcMessage } from './jsonrpc.ts';

/** Most events (and bytes) a stream keeps for replay; older ones are dropped first. */
export const MAX_REPLAY_EVENTS = 256;
export const MAX_REPLAY_BYTES = 4 * 1024 * 1024;
/** A comment on idle streams, so that proxies and clients do not take a quiet stream for a dead one. */
const KEEPALIVE_MS = 25_000;

/** Random per process: stream keys (and so event ids) made here are not made by any other replica. */
const PROCESS_TAG = randomBytes(6).toString('base64url');
let streamCounter = 0;

export function newStreamKey(): string {
  streamCounter = (streamCounter + 1) % Number.MAX_SAFE_INTEGER;
  return `${PROCESS_TAG}${streamCounter.toString(36)}`;
}

/** The stream key and event number of a Last-Event-ID gw made, or undefined. */
export function parseEventId(value: string): { key: string; seq: number } | undefined {
  const at = value.lastIndexOf('.');
  if (at <= 0 || value.length > 128) return undefined;
  const seq = Number(value.slice(at + 1));
  return Number.isSafeInteger(seq) && seq >= 0 ? { key: value.slice(0, at), seq } : undefined;
}

export const SSE_HEADERS = {
  'content-type': 'text/event-stream',
  'cache-control': 'no-cache, no-transform',
  // Tells nginx-style proxies in front of gw not to buffer the stream.
  'x-accel-buffering': 'no',
} as const;

interface StoredEvent {
  seq: number;
  text: string;
}

export class EventStream {
  readonly key: string;
  readonly #now: () => number;
  #seq = 0;
  #events: StoredEvent[] = [];
  #bytes = 0;
  /** The highest event number written to a connection. */
  #delivered = 0;
  #writer: ClientResponse | undefined;
  #keepalive: NodeJS.Timeout | undefined;
  #ended = false;
  /** When the stream last had a connection or an event (ms on `now`), for retention. */
  lastActive: number;

  /** `now`: monotonic milliseconds, the clock of the session registry that retains the stream. */
  constructor(now: () => number = systemClock.monotonicMs, key: string = newStreamKey()) {
    this.#now = now;
    this.key = key;
    this.lastActive = now();
  }

  get attached(): boolean {
    return this.#writer !== undefined;
  }

  get ended(): boolean {
    return this.#ended;
  }

  /** Adds an event; written at once when a client is connected, else kept for it. */
  push(message: JsonRpcMessage): void {
    if (this.#ended) return;
    this.#seq += 1;
    const text = `id: ${this.key}.${this.#seq}\nevent: message\ndata: ${JSON.stringify(message)}\n\n`;
    this.#events.push({ seq: this.#seq, text });
    this.#bytes += text.length;
    while (this.#events.length > MAX_REPLAY_EVENTS || (this.#bytes > MAX_REPLAY_BYTES && this.#events.length > 1)) {
      this.#bytes -= this.#events.shift()!.text.length;
    }
    this.lastActive = this.#now();
    if (this.#writer) this.#write(this.#writer, text, this.#seq);
  }

  /** No more events (a POST stream after its answer): the connection is ended once it has them all. */
  end(): void {
    if (this.#ended) return;
    this.#ended = true;
    const writer = this.#writer;
    this.#detach();
    writer?.end();
  }

  /**
   * Makes `res` the stream's connection: the SSE head (unless sent), a priming event when asked,
   * the events after `afterSeq` (after those already delivered when undefined), then new ones. A
   * connection already there is closed: a message goes to one connection only.
   */
  attach(res: ClientResponse, afterSeq: number | undefined, priming: boolean, headers?: Record<string, string>): void {
    const previous = this.#writer;
    this.#detach();
    if (previous && previous !== res) previous.end();
    if (!res.headersSent) res.writeHead(200, { ...SSE_HEADERS, ...headers });
    if (priming) res.write(`id: ${this.key}.${afterSeq ?? this.#delivered}\ndata: \n\n`);
    const from = afterSeq ?? this.#delivered;
    for (const event of this.#events) if (event.seq > from) this.#write(res, event.text, event.seq);
    if (this.#ended) {
      res.end();
      return;
    }
    this.#writer = res;
    this.lastActive = this.#now();
    res.once('close', () => {
      if (this.#writer === res) this.#detach();
    });
    this.#keepalive = setInterval(() => {
      if (this.#writer === res && !res.writableEnded) res.write(': keepalive\n\n');
    }, KEEPALIVE_MS);
    this.#keepalive.unref();
  }

  /** Closes the connection without ending the stream (the client may resume). */
  close(): void {
    const writer = this.#writer;
    this.#detach();
    writer?.end();
  }

  #write(res: ClientResponse, text: string, seq: number): void {
    if (res.writableEnded || res.destroyed) return;
    res.write(text);
    if (seq > this.#delivered) this.#delivered = seq;
    // A client that does not read: its connection goes rather than gw's memory (it may resume).
    if (res.writableLength > MAX_REPLAY_BYTES) res.destroy();
  }

  #detach(): void {
    if (this.#keepalive) clearInterval(this.#keepalive);
    this.#keepalive = undefined;
    this.#writer = undefined;
    this.lastActive = this.#now();
  }
}
