// What transformations keep per request: the `metadata` they compute (shared by the request and
// response Transforms of every transformation policy the request meets, PreRouting and
// PostRouting alike) and the response Transforms still to apply. A response Transform runs once:
// at the start of the response (onResponse: status and headers), or — when the response path
// buffers the backend's response for it (responseBodyTransformer) — on the whole response, body
// included, before it is written. A subrequest (an AI provider's attempt) starts from the
// request's metadata and adds its response Transforms to the request's, applied only while the
// subrequest is live.
import type { ResponseHead } from '../../proxy/client-response.ts';
import type { HeaderBag } from '../../routing/filters.ts';
import type { PolicyExchange } from '../exchange.ts';
import { POLICY_BODY_LIMIT } from './request-body.ts';
import { bagTarget, type CompiledTransform, type ResponseTarget, transformResponse } from './transform.ts';

interface PendingResponseTransform {
  transform: CompiledTransform;
  applied: boolean;
  /** Whose it is (a subrequest's applies only while it is live), and the metadata it sees. */
  exchange: PolicyExchange;
  metadata: Record<string, unknown>;
}

interface TransformationState {
  /** `metadata` in CEL; no prototype, so that any configured name is a plain key. */
  metadata: Record<string, unknown>;
  /** Shared by a request and its subrequests: the response is one. */
  responses: PendingResponseTransform[];
  /** A subrequest may add a Transform that changes the body: the response is buffered for it. */
  bodyExpected: boolean;
}

const states = new WeakMap<PolicyExchange, TransformationState>();

function stateOf(exchange: PolicyExchange): TransformationState {
  let state = states.get(exchange);
  if (!state) {
    const parent = exchange.parent === undefined ? undefined : stateOf(exchange.parent);
    const metadata = Object.create(null) as Record<string, unknown>;
    if (parent) Object.assign(metadata, parent.metadata);
    state = { metadata, responses: parent?.responses ?? [], bodyExpected: false };
    states.set(exchange, state);
  }
  return state;
}

/**
 * Has the response of `exchange`'s request read whole when it starts, for a response Transform
 * that changes the body and is added later — by a sub-backend's policies, once the backend has
 * chosen it (call before the response path opens).
 */
export function expectResponseBodyTransform(exchange: PolicyExchange): void {
  stateOf(exchange).bodyExpected = true;
}

function pendingApplies(pending: PendingResponseTransform): boolean {
  return !pending.applied && pending.exchange.live;
}

/** The request's transformation metadata (empty until a Transform computes some). */
export function transformationMetadata(exchange: PolicyExchange): Record<string, unknown> {
  return stateOf(exchange).metadata;
}

/**
 * Whose response Transform it is: a route's (traffic.transformation) or a backend's
 * (BackendFull.transformation), which changes the response first, being nearer the backend.
 */
export type ResponseLayer = 'route' | 'backend';

/** Applies `transform` to this request's response, once, whoever writes the response. */
export function addResponseTransform(
  exchange: PolicyExchange,
  transform: CompiledTransform,
  layer: ResponseLayer = 'route',
): void {
  const state = stateOf(exchange);
  const pending: PendingResponseTransform = { transform, applied: false, exchange, metadata: state.metadata };
  const first = layer === 'backend';
  if (first) state.responses.unshift(pending);
  else state.responses.push(pending);
  exchange.onResponse((res) => {
    if (pending.applied) return;
    pending.applied = true;
    transformResponse(transform, exchange, pending.metadata, responseTarget(res), undefined);
  }, first);
}

function responseTarget(res: ResponseHead): ResponseTarget {
  return {
    get status() {
      return res.statusCode;
    },
    set status(value: number) {
      res.statusCode = value;
    },
    get headers() {
      return res.getHeaders();
    },
    get: (name) => res.getHeader(name),
    set: (name, value) => {
      res.setHeader(name, value);
    },
    remove: (name) => {
      res.removeHeader(name);
    },
  };
}

/** What the response path does with a backend response whose body a transformation changes. */
export interface ResponseBodyTransformer {
  /** Most response body bytes to buffer; a larger body cannot be transformed (the response path answers 502). */
  readonly maxBytes: number;
  /**
   * Applies the response Transforms still pending (metadata, headers, `:status`, body; CEL sees
   * `response.body`) to the whole response before anything of it is written. `headers` is
   * changed in place — Content-Length set to the new body's length, Transfer-Encoding removed —
   * and the status and body to send are returned. The onResponse hooks then skip these
   * Transforms, so call it before res.writeHead.
   */
  apply(response: { status: number; headers: HeaderBag; body: Buffer }): { status: number; body: Buffer };
}

/**
 * For the response path, before the backend's response starts: undefined when no pending
 * response Transform of this request changes the body (stream the response as usual);
 * otherwise buffer the body (up to maxBytes) and pass it to apply() before writing the head.
 */
export function responseBodyTransformer(exchange: PolicyExchange | undefined): ResponseBodyTransformer | undefined {
  const state = exchange ? states.get(exchange) : undefined;
  if (!exchange || !state) return undefined;
  if (!state.bodyExpected && !state.responses.some((pending) => pendingApplies(pending) && pending.transform.body))
    return undefined;
  return {
    maxBytes: POLICY_BODY_LIMIT,
    apply: ({ status, headers, body }) => {
      const target = bagTarget(status, headers);
      let current = body;
      for (const pending of state.responses) {
        if (!pendingApplies(pending)) continue;
        pending.applied = true;
        current = transformResponse(pending.transform, pending.exchange, pending.metadata, target, current) ?? current;
      }
      delete headers['transfer-encoding'];
      headers['content-length'] = String(current.length);
      return { status: target.status, body: current };
    },
  };
}
