// What a client may cost gw: the deadlines of each phase of a downstream exchange and the budget
// of request-body bytes buffered while they arrive. These are the process's (`gw run` options), not
// a Frontend's: no Frontend field covers them (docs/security.md, decision 0011). A Frontend field
// that covers a neighbouring phase keeps doing so: tls.handshakeTimeout the handshake,
// http1IdleTimeout the wait for the next request on a keep-alive connection.

export interface DownstreamLimits {
  /** From a connection's start (or a request's first byte on a kept-alive one) to the end of its headers. */
  readonly requestHeaderTimeoutMs: number;
  /** Longest silence of a client that owes request-body bytes gw is waiting for, until gw answers. */
  readonly requestBodyIdleTimeoutMs: number;
  /** A body gw buffers whole must have arrived this long after the request did. */
  readonly requestBodyTimeoutMs: number;
  /** Longest time bytes gw has written to a client may wait there without any write completing. */
  readonly responseWriteTimeoutMs: number;
  /** Request-body bytes being received into memory, for the whole process. */
  readonly maxBufferedBytes: number;
  /** The same for one listener port (by default 3/4 of the process's, so one port cannot take it all). */
  readonly maxBufferedBytesPerListener: number;
}

export const DEFAULT_DOWNSTREAM_LIMITS: DownstreamLimits = Object.freeze({
  requestHeaderTimeoutMs: 10_000,
  requestBodyIdleTimeoutMs: 30_000,
  requestBodyTimeoutMs: 60_000,
  responseWriteTimeoutMs: 30_000,
  maxBufferedBytes: 64 * 1024 * 1024,
  maxBufferedBytesPerListener: 48 * 1024 * 1024,
});

/** HTTP/2: streams a client may have open at once on one connection (SETTINGS_MAX_CONCURRENT_STREAMS). */
export const HTTP2_MAX_CONCURRENT_STREAMS = 100;
/**
 * HTTP/2: RST_STREAM frames a client may send in a burst, then per second (node's
 * streamResetBurst/streamResetRate, nghttp2's token bucket); past it the connection is closed.
 */
export const HTTP2_STREAM_RESET_BURST = 200;
export const HTTP2_STREAM_RESET_RATE = 33;

/** The limits with `overrides` (gw run options) applied; a problem names the field. */
export function downstreamLimits(overrides: Partial<DownstreamLimits> = {}): DownstreamLimits | string {
  const limits = { ...DEFAULT_DOWNSTREAM_LIMITS, ...overrides };
  if (overrides.maxBufferedBytesPerListener === undefined)
    limits.maxBufferedBytesPerListener = Math.floor((limits.maxBufferedBytes * 3) / 4);
  for (const [name, value] of Object.entries(limits))
    if (!Number.isSafeInteger(value) || value <= 0) return `${name} must be a positive whole number, not ${value}`;
  return Object.freeze(limits);
}

/** How often stalls are looked for: a quarter of the shortest deadline, at most once a second. */
export function watchIntervalMs(limits: DownstreamLimits): number {
  const shortest = Math.min(
    limits.requestHeaderTimeoutMs,
    limits.requestBodyIdleTimeoutMs,
    limits.requestBodyTimeoutMs,
    limits.responseWriteTimeoutMs,
  );
  return Math.max(10, Math.min(1000, Math.floor(shortest / 4)));
}
