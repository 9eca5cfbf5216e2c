// One request through the gateway: pick the listener by Host, the rule by the route table, run
// the rule's filters, choose a backendRef by weight and hand the request to its backend. The
// compiled port is captured when the request arrives, so a configuration swap never changes a
// request in flight.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { NO_QUERY } from '../auth/backend/index.ts';
import type { CompiledBackendRef, CompiledListener, CompiledPort, CompiledRule } from '../config/compile.ts';
import { selectListener } from '../config/compile.ts';
import { mayBeMcpOAuthPath } from '../policies/auth/mcp-oauth/well-known.ts';
import { PolicyExchange } from '../policies/exchange.ts';
import { bufferOrStream } from '../policies/forwarding/buffer-or-stream.ts';
import { rewriteHost } from '../policies/forwarding/host-rewrite.ts';
import { responseBodyTransformer } from '../policies/http/transformation-state.ts';
import { NO_TRAFFIC_POLICY, runSteps } from '../policies/pipeline.ts';
import type { ForwardingPolicy } from '../policies/types.ts';
import {
  applyRequestFilters,
  applyResponseFilters,
  type ForwardRequest,
  type HeaderBag,
  redirectResponse,
} from '../routing/filters.ts';
import { routingHost } from '../routing/host.ts';
import { normalizePath } from '../routing/path.ts';
import type { RequestRecord } from '../telemetry/request-record.ts';
import type { FrontendTelemetry } from '../telemetry/request-telemetry.ts';
import { sendLocalResponse, sendText } from './direct-response.ts';
import { addForwardedFor, forwardedRequestHeaders, withClientHeaderCase } from './headers.ts';
import { forwardHttp, hasRequestBody, type ResponseBuffering, type RetryPlan } from './http-forward.ts';

/** What a backend handler other than plain HTTP (AI, MCP, models) receives. */
export interface RoutedRequest {
  req: IncomingMessage;
  res: ServerResponse;
  record: RequestRecord;
  listener: CompiledListener;
  rule: CompiledRule;
  backend: CompiledBackendRef | undefined;
  /** Path (normalised, after filters) and query as they go upstream, with the request headers. */
  forward: ForwardRequest;
  scheme: 'http' | 'https';
  /** The smallest of the route and backend deadlines, if any. */
  timeoutMs: number | undefined;
  /** The request's policy state when traffic policies ran (a buffered body, response hooks). */
  exchange: PolicyExchange | undefined;
}

export type RoutedHandler = (request: RoutedRequest) => Promise<void>;

export interface RequestHandlerHooks {
  /** Serves rules whose backend is GwModel "*" (the models attached to the rule or listener). */
  models?: RoutedHandler;
  /** Serves AI backends. */
  ai?: RoutedHandler;
  /** Serves MCP backends. */
  mcp?: RoutedHandler;
}

/** The shortest of the deadlines that are set (undefined and 0 mean none). */
export function minTimeout(...values: (number | undefined)[]): number | undefined {
  let result: number | undefined;
  for (const value of values)
    if (value !== undefined && value > 0 && (result === undefined || value < result)) result = value;
  return result;
}

/**
 * Records the rule routing chose; returns why it cannot serve (a policy or filter that cannot be
 * used: answered 500), or undefined.
 */
export function takeRule(record: RequestRecord, rule: CompiledRule): string | undefined {
  record.route = rule.route;
  record.rule = rule.config.name ?? '';
  if (rule.refused) return rule.refused;
  if (rule.filters.problems.length > 0) return `route filter not supported: ${rule.filters.problems[0]!.message}`;
  return undefined;
}

/** What the server needs to know about a request once routing has chosen its listener. */
export interface RequestScope {
  telemetry: FrontendTelemetry | undefined;
  /** Set when traffic policies ran: told when the request is finished. */
  exchange: PolicyExchange | undefined;
}

export async function handleRequest(
  req: IncomingMessage,
  res: ServerResponse,
  port: CompiledPort,
  scheme: 'http' | 'https',
  record: RequestRecord,
  hooks: RequestHandlerHooks,
  scope: RequestScope,
): Promise<void> {
  const rawHost = req.headers.host ?? '';
  const host = routingHost(rawHost);
  const listener = selectListener(port, host);
  if (!listener) return void sendText(res, 404, 'no listener for this host');
  record.listener = listener.config.name;
  scope.telemetry = listener.telemetry;
  listener.telemetry?.start(record, req.headers);
  if (listener.refused) return void sendText(res, 500, listener.refused);
  // The server has split the request target into the record's path and query already.
  const normalized = normalizePath(record.path);
  if (normalized === undefined) return void sendText(res, 400, 'invalid request path');
  // MCP OAuth discovery and registration (docs/policies/mcp-oauth.md): their well-known paths are
  // under no route, and they must answer before any policy asks for a token.
  if (
    listener.mcpOAuth !== undefined &&
    mayBeMcpOAuthPath(normalized) &&
    (await listener.mcpOAuth.serve(req, res, record, normalized, scheme))
  )
    return;
  let forward: ForwardRequest | undefined;
  let exchange: PolicyExchange | undefined;
  if (listener.preRouting !== NO_TRAFFIC_POLICY) {
    // PreRouting policies see (and may change) the request before a route is chosen.
    forward = { path: normalized, query: record.query, headers: forwardedRequestHeaders(req.headers) as HeaderBag };
    exchange = scope.exchange = new PolicyExchange(req, res, record, forward, listener.maxBufferBytes);
    const answer =
      (await runSteps(listener.preRouting.beforeFilters, exchange)) ??
      (await runSteps(listener.preRouting.afterFilters, exchange));
    if (answer) return void sendLocalResponse(res, answer);
  }
  const path = forward?.path ?? normalized;
  const query = forward?.query ?? record.query;
  const match = listener.table.match({
    host: rawHost,
    path,
    query,
    method: req.method ?? 'GET',
    headers: (forward?.headers ?? req.headers) as typeof req.headers,
  });
  const rule = match ? listener.rules.get(match.rule)! : listener.modelRule;
  if (!rule) return void sendText(res, 404, 'no route matches this request');
  const unusable = takeRule(record, rule);
  if (unusable) return void sendText(res, 500, unusable);
  forward ??= { path, query, headers: forwardedRequestHeaders(req.headers) as HeaderBag };
  // A traced request's span continues upstream.
  if (record.traceparent !== undefined) forward.headers.traceparent = record.traceparent;
  const policies = rule.policies;
  if (policies !== NO_TRAFFIC_POLICY) {
    exchange ??= scope.exchange = new PolicyExchange(req, res, record, forward, listener.maxBufferBytes);
    const answer = await runSteps(policies.beforeFilters, exchange);
    if (answer) return void sendLocalResponse(res, answer);
  }
  if (rule.filters.redirect) {
    const redirect = redirectResponse(rule.filters.redirect, {
      scheme,
      host: rawHost,
      path: forward.path,
      query: forward.query,
      listenerPort: port.port,
    });
    return void sendText(res, redirect.statusCode, 'redirect', { location: redirect.location });
  }
  applyRequestFilters(rule.filters, forward);
  if (exchange && policies.afterFilters.length > 0) {
    const answer = await runSteps(policies.afterFilters, exchange);
    if (answer) return void sendLocalResponse(res, answer);
  }
  const timeoutMs = minTimeout(rule.requestTimeoutMs, rule.backendRequestTimeoutMs);
  if (rule.models) {
    if (!hooks.models) return void sendText(res, 500, 'models are not available');
    return hooks.models({ req, res, record, listener, rule, backend: undefined, forward, scheme, timeoutMs, exchange });
  }
  const backend = rule.backends.pick();
  if (!backend) return void sendText(res, 500, 'the route has no usable backend');
  record.backend = backend.name;
  if (backend.filters.problems.length > 0)
    return void sendText(res, 500, `backend filter not supported: ${backend.filters.problems[0]!.message}`);
  applyRequestFilters(backend.filters, forward);
  const handler = backend.handler;
  record.backendType =
    handler.kind === 'ai' || handler.kind === 'mcp'
      ? handler.kind
      : backend.name.startsWith('Service')
        ? 'service'
        : 'static';
  if (handler.kind === 'error') return void sendText(res, handler.status, handler.message);
  if (handler.kind === 'ai') {
    if (!hooks.ai) return void sendText(res, 500, 'AI backends are not available');
    return hooks.ai({ req, res, record, listener, rule, backend, forward, scheme, timeoutMs, exchange });
  }
  if (handler.kind === 'mcp') {
    if (!hooks.mcp) return void sendText(res, 500, 'MCP backends are not available');
    return hooks.mcp({ req, res, record, listener, rule, backend, forward, scheme, timeoutMs, exchange });
  }
  const upstreamHeaders = forward.headers as Record<string, string | string[]>;
  // The client as gw knows it: the PROXY protocol header's source when the port takes one.
  addForwardedFor(upstreamHeaders, record.clientAddress, scheme);
  const forwarding = rule.policies.forwarding;
  // Before backend auth: a signature over the request covers the Host the backend gets.
  rewriteHost(forwarding.hostRewrite, handler.settings, upstreamHeaders, req.headers.host);
  let search = forward.query;
  if (handler.auth && (search !== '' || handler.auth.writesQuery)) {
    const params = new URLSearchParams(search);
    handler.auth.apply({ headers: upstreamHeaders, query: params }, req);
    search = params.toString();
  } else handler.auth?.apply({ headers: upstreamHeaders, query: NO_QUERY }, req);
  let body: IncomingMessage | Buffer | undefined = exchange?.body ?? (hasRequestBody(req) ? req : undefined);
  // HTTPRoute backendRequest and BackendHTTP.requestTimeout: each attempt.
  const attemptTimeoutMs = shorterTimeout(rule.backendRequestTimeoutMs, handler.settings.requestTimeoutMs);
  let retry: RetryPlan | undefined;
  if (forwarding.retry !== undefined && exchange !== undefined && (forwarding.retry.precondition?.(exchange) ?? true)) {
    if (body === req) {
      // Every attempt sends the same body: read it whole (up to the listener's buffer limit); a
      // larger body is sent once, streamed, without retries.
      let buffered: Buffer | undefined;
      try {
        buffered = await bufferOrStream(req, exchange.maxBodyBytes, req.headers['content-length']);
      } catch {
        return void sendText(res, 400, 'the request body could not be read', { connection: 'close' });
      }
      if (buffered !== undefined) body = exchange.body = buffered;
    }
    if (body !== req) retry = { policy: forwarding.retry, exchange, attemptTimeoutMs };
  }
  const upstreamStart = process.hrtime.bigint();
  record.upstreamStartTime = upstreamStart;
  // HTTPRoute timeouts.request or traffic.timeouts.request: the whole request from its arrival —
  // policies, a delay and every retry included.
  const requestTimeoutMs = remainingMs(rule.requestTimeoutMs, record.startTime, upstreamStart);
  const outcome = await forwardHttp(res, {
    pool: handler.pool,
    method: req.method ?? 'GET',
    path: search ? `${forward.path}?${search}` : forward.path,
    headers:
      port.connection.http1HeaderCase === 'Preserve' && req.httpVersionMajor === 1
        ? withClientHeaderCase(upstreamHeaders, req.rawHeaders)
        : upstreamHeaders,
    body,
    timeoutMs: retry ? requestTimeoutMs : shorterTimeout(requestTimeoutMs, attemptTimeoutMs),
    onResponseHeaders: (responseHeaders) => {
      applyResponseFilters(rule.filters, responseHeaders);
      applyResponseFilters(backend.filters, responseHeaders);
    },
    retry,
    responseBuffering: exchange && responseBuffering(forwarding.responseBuffer, exchange),
  });
  record.upstreamEndTime = process.hrtime.bigint();
  if (outcome.failure) record.error = `upstream ${outcome.failure}${retriesText(outcome.retries)}`;
  else if (outcome.error) record.error = outcome.error;
}

/** minTimeout of two, without the rest array (once per proxied request). */
function shorterTimeout(a: number | undefined, b: number | undefined): number | undefined {
  if (a === undefined || a <= 0) return b !== undefined && b > 0 ? b : undefined;
  return b !== undefined && b > 0 && b < a ? b : a;
}

/** What is left of a deadline of `timeoutMs` that started at `since` (at least 1 ms: an expired one fires at once). */
function remainingMs(timeoutMs: number | undefined, since: bigint, now: bigint): number | undefined {
  if (timeoutMs === undefined || timeoutMs <= 0) return undefined;
  return Math.max(1, timeoutMs - Number(now - since) / 1e6);
}

/**
 * How the response is read whole before it is written, when something needs it: traffic.buffer
 * response (its maxBytes, else the listener's limit) and a response Transform that changes the
 * body (at most its own limit; over it 502 — a body cannot be transformed in part).
 */
function responseBuffering(
  buffer: ForwardingPolicy['responseBuffer'],
  exchange: PolicyExchange,
): ResponseBuffering | undefined {
  const transformer = responseBodyTransformer(exchange);
  if (transformer === undefined) {
    if (buffer === undefined) return undefined;
    return { maxBytes: buffer.maxBytes ?? exchange.maxBodyBytes, failOpen: buffer.failOpen };
  }
  const bufferLimit = buffer === undefined ? transformer.maxBytes : (buffer.maxBytes ?? exchange.maxBodyBytes);
  return {
    maxBytes: Math.min(bufferLimit, transformer.maxBytes),
    failOpen: false,
    transform: (response) => transformer.apply(response),
  };
}

function retriesText(retries: number | undefined): string {
  return !retries ? '' : retries === 1 ? ' after 1 retry' : ` after ${retries} retries`;
}
