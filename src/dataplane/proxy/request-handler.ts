// One request through the gateway: pick the listener by Host, the rule by the route table, run
// the rule's filters, choose a backendRef by weight and hand the request to its backend. The
// compiled port is captured when the request arrives, so a configuration swap never changes a
// request in flight.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { CompiledBackendRef, CompiledListener, CompiledPort, CompiledRule } from '../config/compile.ts';
import { selectListener } from '../config/compile.ts';
import { PolicyExchange } from '../policies/exchange.ts';
import { NO_TRAFFIC_POLICY, runSteps } from '../policies/pipeline.ts';
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
import { addForwardedFor, forwardedRequestHeaders } from './headers.ts';
import { forwardHttp, hasRequestBody } from './http-forward.ts';

/** What a backend handler other than plain HTTP (AI, models) receives. */
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
}

/** The shortest of the deadlines that are set (undefined and 0 mean none). */
export function minTimeout(...values: (number | undefined)[]): number | undefined {
  let result: number | undefined;
  for (const value of values)
    if (value !== undefined && value > 0 && (result === undefined || value < result)) result = value;
  return result;
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
  record.route = rule.route;
  record.rule = rule.config.name ?? '';
  if (rule.refused) return void sendText(res, 500, rule.refused);
  if (rule.filters.problems.length > 0)
    return void sendText(res, 500, `route filter not supported: ${rule.filters.problems[0]!.message}`);
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
  record.backendType = handler.kind === 'ai' ? 'ai' : backend.name.startsWith('Service') ? 'service' : 'static';
  if (handler.kind === 'error') return void sendText(res, handler.status, handler.message);
  if (handler.kind === 'ai') {
    if (!hooks.ai) return void sendText(res, 500, 'AI backends are not available');
    return hooks.ai({ req, res, record, listener, rule, backend, forward, scheme, timeoutMs, exchange });
  }
  const upstreamHeaders = forward.headers as Record<string, string | string[]>;
  addForwardedFor(upstreamHeaders, req.socket.remoteAddress, scheme);
  let search = forward.query;
  if (handler.auth) {
    const params = new URLSearchParams(search);
    handler.auth.apply({ headers: upstreamHeaders, query: params }, req);
    search = params.toString();
  }
  record.upstreamStartTime = process.hrtime.bigint();
  const outcome = await forwardHttp(res, {
    pool: handler.pool,
    method: req.method ?? 'GET',
    path: search ? `${forward.path}?${search}` : forward.path,
    headers: upstreamHeaders,
    body: exchange?.body ?? (hasRequestBody(req) ? req : undefined),
    timeoutMs: minTimeout(timeoutMs, handler.settings.requestTimeoutMs),
    onResponseHeaders: (responseHeaders) => {
      applyResponseFilters(rule.filters, responseHeaders);
      applyResponseFilters(backend.filters, responseHeaders);
    },
  });
  record.upstreamEndTime = process.hrtime.bigint();
  if (outcome.failure) record.error = `upstream ${outcome.failure}`;
}
