// One request's state as traffic policies see and change it: the request as it will go
// upstream, the CEL variables, the body once some policy has read it, and what runs when the
// response starts or the request is done. Created only for requests that meet a policy, so a
// route without policies pays nothing. A subrequest (fork) is the same request as one call to a
// sub-backend sends it — an AI provider's attempt, a request to an MCP target — changed by that
// sub-backend's policies without changing the request or another call's.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { BodyTooLargeError, DEFAULT_MAX_BUFFER_BYTES, readRequestBody } from '../proxy/body.ts';
import { onResponseHead, type ResponseHook } from '../proxy/response-head.ts';
import type { ForwardRequest } from '../routing/filters.ts';
import { type CelVariables, celContext } from '../telemetry/cel-context.ts';
import type { RequestRecord } from '../telemetry/request-record.ts';

export class PolicyExchange {
  readonly req: IncomingMessage;
  readonly res: ServerResponse;
  readonly record: RequestRecord;
  /** Path, query and headers as they go upstream; policies change them in place. */
  readonly forward: ForwardRequest;
  /** The whole request body, once a policy has read it (readBody); forwarded instead of the stream. */
  body: Buffer | undefined;
  /** Most bytes of a body gw buffers on this listener (Frontend.http.maxBufferSize, default 2 MiB). */
  readonly maxBodyBytes: number;
  protected variables: Record<string, unknown> | undefined;
  protected context: CelVariables | undefined;
  private doneHooks: ((record: RequestRecord) => void)[] | undefined;
  private reading: Promise<Buffer> | undefined;

  constructor(
    req: IncomingMessage,
    res: ServerResponse,
    record: RequestRecord,
    forward: ForwardRequest,
    maxBodyBytes: number = DEFAULT_MAX_BUFFER_BYTES,
  ) {
    this.maxBodyBytes = maxBodyBytes;
    this.req = req;
    this.res = res;
    this.record = record;
    this.forward = forward;
  }

  /**
   * The method as it goes upstream: a transformation's `:method` changes it (the forwarders send
   * req.method; the record, logs and CEL keep the client's).
   */
  get method(): string {
    return this.req.method ?? 'GET';
  }

  set method(value: string) {
    this.req.method = value;
  }

  /** Whether what this exchange's policies add to the response still applies (a subrequest's ends when its call is given up). */
  get live(): boolean {
    return true;
  }

  /** The exchange a subrequest was forked from; undefined for the request itself. */
  get parent(): PolicyExchange | undefined {
    return undefined;
  }

  /**
   * The request as one call to a sub-backend sends it: `forward` (a copy the call owns), `body`
   * and `method`, with this exchange's CEL variables as they are now. What the sub-backend's
   * policies change stays with the call; what they add to the response applies while the
   * subrequest is live.
   */
  fork(forward: ForwardRequest, body: Buffer, method: string): Subrequest {
    return new Subrequest(this, forward, body, method);
  }

  /** The CEL variables (docs/cel.md) as they are now, plus those policies set (extauthz...). */
  cel(): CelVariables {
    this.context ??= celContext(this.record, this.variables);
    return this.context;
  }

  /** Sets a CEL variable for the policies after this one (and telemetry is unaffected). */
  setVariable(name: string, value: unknown): void {
    this.variables ??= {};
    this.variables[name] = value;
    this.context = undefined;
  }

  /** Records the verified JWT's claims (`jwt.*` in CEL, the access log). */
  setJwtClaims(claims: Record<string, unknown>): void {
    this.record.jwtClaims = claims;
    this.context = undefined;
  }

  /** Records the verified API key's metadata (`apiKey.*` in CEL). */
  setApiKey(metadata: Record<string, unknown>): void {
    this.record.apiKey = metadata;
    this.context = undefined;
  }

  /**
   * The whole request body, read once (later calls get the same bytes). Rejects with
   * BodyTooLargeError past `limit` (the listener's buffer limit unless given), and with the other
   * BodyRefusedErrors of the listener's budget and deadlines; the body is then consumed and must
   * not be forwarded.
   */
  readBody(limit: number = this.maxBodyBytes): Promise<Buffer> {
    if (this.body !== undefined) {
      if (this.body.length > limit) return Promise.reject(new BodyTooLargeError(limit));
      return Promise.resolve(this.body);
    }
    this.reading ??= readRequestBody(this.req, limit).then((body) => {
      this.body = body;
      return body;
    });
    return this.reading;
  }

  /**
   * Runs `hook` when the response starts, whoever sends it (backend, AI, a policy, an error);
   * `first`: before the hooks added so far (a backend policy's, nearer the backend than the route's).
   */
  onResponse(hook: ResponseHook, first = false): void {
    onResponseHead(this.res, hook, first);
  }

  /** Runs `hook` once the request is finished (usage known), after the response. */
  onDone(hook: (record: RequestRecord) => void): void {
    this.doneHooks ??= [];
    this.doneHooks.push(hook);
  }

  /** Called by the server when the request is finished. */
  finish(): void {
    if (!this.doneHooks) return;
    for (const hook of this.doneHooks) {
      try {
        hook(this.record);
      } catch {
        // a done hook only updates counters; one failing must not stop the others
      }
    }
    this.doneHooks = undefined;
  }
}

/**
 * One call of a request to a sub-backend (PolicyExchange.fork): its own path, query, headers, body
 * and method; response hooks that run on the request's response only while the call is live — an
 * AI provider attempt given up for the next provider is abandoned, and nothing its policies set
 * for the response applies to another provider's.
 */
export class Subrequest extends PolicyExchange {
  readonly #parent: PolicyExchange;
  #method: string;
  #live = true;

  constructor(parent: PolicyExchange, forward: ForwardRequest, body: Buffer, method: string) {
    super(parent.req, parent.res, parent.record, forward, parent.maxBodyBytes);
    this.#parent = parent;
    this.#method = method;
    this.body = body;
    const inherited = (parent as Subrequest).variables;
    if (inherited) this.variables = { ...inherited };
  }

  override get method(): string {
    return this.#method;
  }

  override set method(value: string) {
    this.#method = value;
  }

  override get live(): boolean {
    return this.#live && this.#parent.live;
  }

  override get parent(): PolicyExchange {
    return this.#parent;
  }

  /** The call was given up: what its policies set for the response no longer applies. */
  abandon(): void {
    this.#live = false;
  }

  override onResponse(hook: ResponseHook, first = false): void {
    this.#parent.onResponse((res) => {
      if (this.live) hook(res);
    }, first);
  }

  override onDone(hook: (record: RequestRecord) => void): void {
    this.#parent.onDone(hook);
  }
}
