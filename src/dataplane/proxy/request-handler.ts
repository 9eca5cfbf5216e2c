// One request through the gateway, the same for every backend kind: pick the listener by Host,
// run the PreRouting policies, pick the rule by the route table (or the listener's GwModels), run
// the rule's traffic policies and filters, choose a backend by weight, run its backend request
// policies and hand the request to it (backends/backend.ts) through the one response path
// (./response-path.ts). The compiled port is captured when the request arrives, so a configuration
// swap never changes a request in flight.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Backend, RoutedRequest } from '../backends/backend.ts';
import type { CompiledBackendRef, CompiledListener, CompiledPort, CompiledRule } from '../config/compile.ts';
import { selectListener } from '../config/compile.ts';
import { mayBeMcpOAuthPath } from '../policies/auth/mcp-oauth/well-known.ts';
import { PolicyExchange } from '../policies/exchange.ts';
import { modifyResponseHeaders } from '../policies/http/header-modifiers.ts';
import { expectResponseBodyTransform } from '../policies/http/transformation-state.ts';
import { NO_TRAFFIC_POLICY, runSteps } from '../policies/pipeline.ts';
import { applyRequestFilters, type ForwardRequest, type HeaderBag, redirectResponse } from '../routing/filters.ts';
import { routingHost } from '../routing/host.ts';
import { normalizePath } from '../routing/path.ts';
import { pickUsable } from '../routing/weighted-choice.ts';
import type { RequestRecord } from '../telemetry/request-record.ts';
import type { FrontendTelemetry } from '../telemetry/request-telemetry.ts';
import { type GatewayAnswers, PLAIN_ANSWERS } from './answers.ts';
import { sendLocalResponse, sendText } from './direct-response.ts';
import { forwardedRequestHeaders } from './headers.ts';
import { sendOwnFailure } from './own-failure.ts';
import { onResponseHead, type ResponseHook } from './response-head.ts';
import { openResponsePath, type ResponsePath } from './response-path.ts';

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
  /** How gw words its own answers once a rule is chosen (an LLM route's client format); unset: plain text. */
  answers?: GatewayAnswers;
}

export async function handleRequest(
  req: IncomingMessage,
  res: ServerResponse,
  port: CompiledPort,
  scheme: 'http' | 'https',
  record: RequestRecord,
  scope: RequestScope,
): Promise<void> {
  const rawHost = req.headers.host ?? '';
  const listener = selectListener(port, routingHost(rawHost));
  if (!listener) return void sendText(res, 404, 'no listener for this host');
  record.listener = listener.config.name;
  scope.telemetry = listener.telemetry;
  listener.telemetry?.start(record, req.headers);
  if (listener.refused) return void sendOwnFailure(res, record, listener.refused);
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
  const rule = routeOf(listener, rawHost, path, query, req, forward);
  if (!rule) return void sendText(res, 404, 'no route matches this request');
  const answers = answersOf(rule, path);
  scope.answers = answers;
  const unusable = takeRule(record, rule);
  if (unusable) return void answers.ownFailure(res, record, unusable);
  forward ??= { path, query, headers: forwardedRequestHeaders(req.headers) as HeaderBag };
  // A traced request's span continues upstream.
  if (record.traceparent !== undefined) forward.headers.traceparent = record.traceparent;
  const policies = rule.policies;
  if (policies !== NO_TRAFFIC_POLICY) {
    exchange ??= scope.exchange = new PolicyExchange(req, res, record, forward, listener.maxBufferBytes);
    const answer = await runSteps(policies.beforeFilters, exchange);
    if (answer) return void answers.local(res, answer);
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
    if (answer) return void answers.local(res, answer);
  }
  let chosen = rule.backends.pick();
  if (!chosen) return void answers.ownFailure(res, record, 'the route has no usable backend');
  // An evicted backend (passive health) gets requests only when every backend of the rule is evicted.
  if (chosen.backend.available?.() === false && rule.backends.items.length > 1)
    chosen = pickUsable(rule.backends, isAvailable)!;
  record.backend = chosen.name;
  record.backendType = chosen.backend.type;
  if (chosen.filters.problems.length > 0)
    return void answers.ownFailure(res, record, `backend filter not supported: ${chosen.filters.problems[0]!.message}`);
  applyRequestFilters(chosen.filters, forward);
  // The backend's own request policies (extAuth, transformation: backends/backend-policies.ts),
  // for every kind, once per request routed to it — before the response path opens, so that a
  // response Transform that changes the body is read by it.
  if (chosen.policies.steps.length > 0) {
    exchange ??= scope.exchange = new PolicyExchange(req, res, record, forward, listener.maxBufferBytes);
    const answer = await runSteps(chosen.policies.steps, exchange);
    if (answer) return void answers.local(res, answer);
  }
  // A provider's or MCP target's own request policies run on its calls, on forks of this exchange
  // (decision 0045); a response Transform one adds that changes the body needs the body read whole.
  const subBackend = chosen.subBackendPolicies;
  if (subBackend) {
    exchange ??= scope.exchange = new PolicyExchange(req, res, record, forward, listener.maxBufferBytes);
    if (subBackend.transformsResponseBody) expectResponseBodyTransform(exchange);
  }
  // The route's and the backendRef's ResponseHeaderModifier filters, on whatever answers from here.
  const ruleHeaders = rule.filters.response;
  const refHeaders = chosen.filters.response;
  const routeHead: ResponseHook | undefined =
    ruleHeaders || refHeaders
      ? (response) => {
          if (ruleHeaders) modifyResponseHeaders(ruleHeaders, response);
          if (refHeaders) modifyResponseHeaders(refHeaders, response);
        }
      : undefined;
  const routed: RoutedRequest = { req, res, record, forward, scheme, route: rule.context, exchange };
  return serve(chosen.backend, routed, res, routeHead);
}

/**
 * Hands the request to its backend through the response path: the kind writes to the client's
 * response `res` (routed.res) when nothing works on the body — no more than a call on that path —
 * else to the path's capture.
 */
function serve(
  backend: Backend,
  routed: RoutedRequest,
  res: ServerResponse,
  routeHead: ResponseHook | undefined,
): Promise<void> {
  const path = openResponsePath(res, routed.exchange, routed.route.forwarding, routeHead);
  if (!path) {
    if (routeHead) onResponseHead(res, routeHead);
    return backend.serve(routed);
  }
  return serveThrough(path, backend, routed);
}

async function serveThrough(path: ResponsePath, backend: Backend, routed: RoutedRequest): Promise<void> {
  let threw = true;
  try {
    await backend.serve({ ...routed, res: path.capture });
    threw = false;
  } finally {
    path.served(threw);
  }
}

/**
 * How gw words its own answers on a rule: as its first LLM backend's clients expect (the rule's
 * backends are one kind in practice; a rule mixing LLM and plain backends takes the LLM words).
 */
function answersOf(rule: CompiledRule, path: string): GatewayAnswers {
  for (const item of rule.backends.items) if (item.backend.answersFor) return item.backend.answersFor(path);
  return PLAIN_ANSWERS;
}

function isAvailable(ref: CompiledBackendRef): boolean {
  return ref.backend.available?.() !== false;
}

/** The rule routing chooses: the route table's match, else the listener's models when it has some. */
function routeOf(
  listener: CompiledListener,
  host: string,
  path: string,
  query: string,
  req: IncomingMessage,
  forward: ForwardRequest | undefined,
): CompiledRule | undefined {
  const match = listener.table.match({
    host,
    path,
    query,
    method: req.method ?? 'GET',
    headers: (forward?.headers ?? req.headers) as typeof req.headers,
  });
  return match ? listener.rules.get(match.rule)! : listener.modelRule;
}
