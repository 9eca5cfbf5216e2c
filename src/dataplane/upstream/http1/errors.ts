// Failures of an upstream HTTP/1.1 exchange, each with a `code` that says what went wrong
// (failureOf in proxy/http-forward.ts turns codes into the client's 502/503/504).

export class UpstreamConnectTimeoutError extends Error {
  readonly code = 'UPSTREAM_CONNECT_TIMEOUT';
  constructor(ms: number) {
    super(`the upstream connection was not established within ${ms} ms`);
  }
}

/** The upstream sent nothing for too long while a response was due. */
export class UpstreamResponseTimeoutError extends Error {
  readonly code = 'UPSTREAM_RESPONSE_TIMEOUT';
  constructor(ms: number) {
    super(`the upstream sent nothing for ${ms} ms while a response was due`);
  }
}

export class UpstreamClosedError extends Error {
  readonly code = 'UPSTREAM_CLOSED';
  constructor() {
    super('the upstream closed the connection before the response was complete');
  }
}

export class UpstreamPoolClosedError extends Error {
  readonly code = 'UPSTREAM_POOL_CLOSED';
  constructor() {
    super('the connection pool is closed (its configuration was replaced)');
  }
}

/** The caller's signal aborted the exchange (its deadline, or the client going away). */
export class UpstreamAbortError extends Error {
  override readonly name = 'AbortError';
  readonly code = 'ABORT_ERR';
  constructor() {
    super('the upstream request was aborted');
  }
}
