// External authorization (traffic.extAuth): each request is checked by an authorization server,
// over Envoy's gRPC ext_authz protocol (the default) or plain HTTP, before it goes on. The
// server's decision allows it (changing headers and query on the way, setting the CEL variable
// `extauthz`) or answers the client; a server that cannot be used fails the request closed
// (403) or lets it through (FailOpen). Decisions may be cached by a CEL key; `conditional`
// picks per request which settings apply (docs/policies/ext-authz.md).
import type { Pool } from 'undici';
import type { ExtAuth, ExtAuthOrConditional } from '../../../api/types/inbound-auth.ts';
import { undici } from '../../../util/undici.ts';
import { byteSize, durationMs } from '../../../util/units.ts';
import { BodyTooLargeError } from '../../proxy/body.ts';
import { choose, compileChoice } from '../conditional.ts';
import {
  endpointBackendPolicy,
  endpointConnectionSettings,
  type ResolvedEndpoint,
  resolveEndpoint,
} from '../endpoint.ts';
import type { PolicyExchange } from '../exchange.ts';
import { unreadBodyAnswer } from '../http/request-body.ts';
import {
  type CompiledPolicy,
  isProblem,
  type PolicyCompileContext,
  type PolicyCompiler,
  type PolicyProblem,
  type RequestStep,
  type StepResult,
} from '../types.ts';
import { type CompiledCache, compileCache } from './cache.ts';
import { applyDecision, CheckFailure, type Decision } from './decision.ts';
import { compileGrpcMode } from './grpc-mode.ts';
import { type CheckDispatcher, compileHttpMode } from './http-mode.ts';

/** Deadline of one check when the endpoint's GwBackend sets no policies.http.requestTimeout. */
export const DEFAULT_CHECK_DEADLINE_MS = 10_000;

const FAILED: StepResult = { status: 403, body: 'external authorization failed', own: 'refusal' };
const BODY_TOO_LARGE: StepResult = {
  status: 413,
  // The rest of the body was discarded unread: the connection cannot carry another request.
  headers: { connection: 'close' },
  body: 'the request body is larger than external authorization takes (traffic.extAuth forwardBody.maxSize)',
  own: 'refusal',
};

export const compileExtAuth: PolicyCompiler<ExtAuthOrConditional> = (value, context) => {
  const { conditional, ...inline } = value;
  const choice = compileChoice<ExtAuth, RequestStep>(
    inline as ExtAuth,
    conditional,
    `${context.path}.extAuth`,
    (policy, field, place) => compileOne(policy, context, field, place),
  );
  if (isProblem(choice)) return choice;
  // Nothing chosen (no condition holds and no fallback) means no check.
  const request: RequestStep = (exchange) => choose(choice, () => exchange.cel())?.(exchange);
  return { request } satisfies CompiledPolicy;
};

/** One ExtAuth's settings as the step that checks a request. */
function compileOne(
  policy: ExtAuth,
  context: PolicyCompileContext,
  field: string,
  position: string,
): RequestStep | PolicyProblem {
  // Over HTTP the GwBackend's connection policies apply; over gRPC only its request timeout.
  const endpoint = resolveEndpoint(policy, context, field, policy.http ? ['tcp', 'tls', 'http', 'tunnel'] : ['http']);
  if (isProblem(endpoint)) return endpoint;
  const backendPolicy = endpointBackendPolicy(policy, context);
  const deadlineMs = backendPolicy?.http?.requestTimeout
    ? durationMs(backendPolicy.http.requestTimeout)
    : DEFAULT_CHECK_DEADLINE_MS;

  let check: (exchange: PolicyExchange, body: Buffer | undefined) => Promise<Decision>;
  if (policy.http) {
    const dispatcher = httpDispatcher(policy, endpoint, context, field);
    if (isProblem(dispatcher)) return dispatcher;
    const compiled = compileHttpMode(policy.http, endpoint, dispatcher, deadlineMs, field);
    if (isProblem(compiled)) return compiled;
    check = compiled;
  } else {
    const compiled = compileGrpcMode(policy.grpc, endpoint, deadlineMs, context, field);
    if (isProblem(compiled)) return compiled;
    check = compiled;
  }

  let bodyLimit: number | undefined;
  // A computed HTTP body replaces the forwarded one, so the request body is not read for it.
  if (policy.forwardBody && !policy.http?.body) {
    try {
      bodyLimit = byteSize(policy.forwardBody.maxSize);
    } catch (error) {
      return { field: `${field}.forwardBody.maxSize`, message: (error as Error).message };
    }
  }

  let cache: CompiledCache | undefined;
  if (policy.cache) {
    // Keyed by where the policy applies and all its settings: a reload that keeps both keeps the cache.
    const identity = `${context.scope} ${position} ${JSON.stringify(policy)}`;
    const compiled = compileCache(policy.cache, context, field, identity);
    if (isProblem(compiled)) return compiled;
    cache = compiled;
  }
  const failOpen = policy.failureMode === 'FailOpen';
  // Epoch ms: a ttl expression may give an expiry timestamp.
  const now = context.runtime.clock.epochMs;

  return async (exchange) => {
    let key: string | undefined;
    if (cache) {
      key = cache.keyOf(exchange);
      const cached = key === undefined ? undefined : cache.store.get(key, now());
      if (cached) return applyDecision(exchange, cached);
    }
    let body: Buffer | undefined;
    if (bodyLimit !== undefined) {
      try {
        body = await exchange.readBody(bodyLimit);
      } catch (error) {
        return error instanceof BodyTooLargeError ? BODY_TOO_LARGE : unreadBodyAnswer(error);
      }
    }
    let decision: Decision;
    try {
      decision = await check(exchange, body);
    } catch (error) {
      if (!(error instanceof CheckFailure)) throw error;
      if (failOpen) return undefined;
      exchange.record.error = `extAuth ${endpoint.name}: ${error.message}`;
      return FAILED;
    }
    const answer = applyDecision(exchange, decision);
    if (cache && key !== undefined && decision.cacheable) {
      // After the decision is applied: the ttl expression may read `extauthz`.
      const decidedAt = now();
      const ttl = cache.ttlMs(exchange, decidedAt);
      if (ttl !== undefined) cache.store.set(key, decision, decidedAt + ttl);
    }
    return answer;
  };
}

/** The connection pool of an HTTP authorization server, shared across reloads. */
function httpDispatcher(
  policy: ExtAuth,
  endpoint: ResolvedEndpoint,
  context: PolicyCompileContext,
  field: string,
): CheckDispatcher | PolicyProblem {
  const settings = endpointConnectionSettings(policy, endpoint, context, context.data, field);
  if (isProblem(settings)) return settings;
  return context.runtime.use(
    `extauthz http ${settings.key}`,
    (): Pool => new (undici().Pool)(settings.origin, settings.options),
  ) as unknown as CheckDispatcher;
}
