// The sessions of one MCP backend held in this replica's memory: the live parts of a session
// (streams, SSE connections, name caches) that its sealed id does not carry. Bounded: idle
// sessions are dropped after a while and the least recently used go first when there are too
// many; either can be resumed from its id later (its live parts are rebuilt). Kept across
// configuration changes (PolicyRuntime) and closed when the backend leaves the configuration.
// Every time here is the registry's clock (monotonic ms): its sessions and their streams read it.
import { systemClock } from '../../util/clock.ts';
import type { EventStream } from './event-stream.ts';

/** What the registry needs of a session (Session, session.ts). */
export interface RegisteredSession {
  readonly id: string | undefined;
  lastUsed: number;
  /** The client's standalone stream (GET): a session a client listens to is not idle. */
  readonly standalone: EventStream;
  /** Answer streams kept for resumption, by key. */
  readonly streams: Map<string, EventStream>;
  /** Set while a legacy SSE client's stream is the session's transport. */
  readonly legacySink: unknown;
  close(deleteUpstream: boolean): void;
}

/** Most sessions a backend keeps in memory per replica. */
export const MAX_SESSIONS = 10_000;
/** A session nobody used (and no client listens to) for this long is dropped from memory. */
export const SESSION_IDLE_MS = 30 * 60_000;
/** Ended answer streams are kept this long for a client that lost the connection just before the end. */
export const STREAM_RETENTION_MS = 5 * 60_000;
/** Most answer streams a session keeps for resumption. */
const MAX_STREAMS_PER_SESSION = 32;
/** Ids of sessions ended here (DELETE), refused afterwards; the oldest are forgotten first. */
const MAX_TERMINATED = 10_000;
export const SWEEP_MS = 60_000;
/** Uses closer together than this do not move a session in the recency order. */
const RECENCY_MS = 1000;

export class SessionRegistry<Session extends RegisteredSession = RegisteredSession> {
  /** Monotonic milliseconds: what lastUsed and the streams' lastActive are on. */
  readonly now: () => number;
  readonly #sessions = new Map<string, Session>();
  readonly #terminated = new Set<string>();
  /** Sessions of legacy SSE clients: they live as long as their stream (sse-server.ts). */
  readonly #legacy = new Set<Session>();
  readonly #sweeper: NodeJS.Timeout;

  constructor(now: () => number = systemClock.monotonicMs) {
    this.now = now;
    this.#sweeper = setInterval(() => this.sweep(), SWEEP_MS);
    this.#sweeper.unref();
  }

  get size(): number {
    return this.#sessions.size;
  }

  /**
   * The session, marked used (most recently used last; a session used within the last second
   * keeps its place, which spares a busy session a map update per request).
   */
  get(id: string): Session | undefined {
    const session = this.#sessions.get(id);
    if (!session) return undefined;
    const now = this.now();
    if (now - session.lastUsed >= RECENCY_MS) {
      this.#sessions.delete(id);
      this.#sessions.set(id, session);
    }
    session.lastUsed = now;
    return session;
  }

  isTerminated(id: string): boolean {
    return this.#terminated.has(id);
  }

  add(session: Session): void {
    const id = session.id!;
    session.lastUsed = this.now();
    this.#sessions.set(id, session);
    while (this.#sessions.size > MAX_SESSIONS) {
      const [oldest, evicted] = this.#sessions.entries().next().value as [string, Session];
      this.#sessions.delete(oldest);
      evicted.close(false);
    }
  }

  /** A session the client ended: dropped, and its id refused from now on (by this replica). */
  terminate(session: Session): void {
    const id = session.id!;
    this.#sessions.delete(id);
    this.#terminated.add(id);
    if (this.#terminated.size > MAX_TERMINATED) this.#terminated.delete(this.#terminated.values().next().value!);
    session.close(true);
  }

  /** A legacy SSE client's session, held until its stream closes (or the backend goes). */
  holdLegacy(session: Session): void {
    this.#legacy.add(session);
  }

  /** A legacy SSE session whose stream closed. */
  releaseLegacy(session: Session): void {
    this.#legacy.delete(session);
  }

  /**
   * Drops idle sessions and old answer streams (every SWEEP_MS). A session a client listens to is
   * in use: its idle time starts again at each sweep, so it runs from when the listener left (to
   * within a sweep), not from the last request before a long listen.
   */
  sweep(): void {
    const now = this.now();
    for (const [id, session] of this.#sessions) {
      if (session.standalone.attached || session.legacySink) session.lastUsed = now;
      else if (now - session.lastUsed > SESSION_IDLE_MS) {
        this.#sessions.delete(id);
        session.close(false);
        continue;
      }
      retainStreams(session, now);
    }
  }

  close(): void {
    clearInterval(this.#sweeper);
    for (const session of this.#sessions.values()) session.close(false);
    this.#sessions.clear();
    for (const session of this.#legacy) session.close(true);
    this.#legacy.clear();
  }
}

/**
 * A session's answer streams: ended, unattached ones go after a while; past the bound the oldest
 * ended ones go first, then (a client with that many streams open at once) the oldest of all.
 */
export function retainStreams(session: RegisteredSession, now: number): void {
  for (const [key, stream] of session.streams) {
    if (!stream.attached && stream.ended && now - stream.lastActive > STREAM_RETENTION_MS) session.streams.delete(key);
  }
  if (session.streams.size <= MAX_STREAMS_PER_SESSION) return;
  for (const [key, stream] of session.streams) {
    if (session.streams.size <= MAX_STREAMS_PER_SESSION) return;
    if (stream.ended && !stream.attached) session.streams.delete(key);
  }
  for (const [key, stream] of session.streams) {
    if (session.streams.size <= MAX_STREAMS_PER_SESSION) return;
    stream.close();
    session.streams.delete(key);
  }
}
