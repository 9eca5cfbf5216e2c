// The traffic-policy pipeline: which traffic fields run, in which order, and how a request goes
// through them. The order follows agentgateway's: CORS, the authentications (JWT, basic, API
// key), external authorization, CEL authorization, rate limits, external processing,
// transformation, CSRF and header modifiers — then the route's own filters (URL rewrite,
// redirect) — then direct response, delay and request buffering. PreRouting policies run this
// same order before a route is chosen, PostRouting ones after (docs/policies.md).
import { compileApiKeyAuthentication } from './auth/api-key.ts';
import { compileAuthorization } from './auth/authorization.ts';
import { compileBasicAuthentication } from './auth/basic.ts';
import { compileJwtAuthentication } from './auth/jwt.ts';
import type { PolicyExchange } from './exchange.ts';
import { compileExtAuth } from './ext-authz/ext-authz.ts';
import { compileExtProc } from './ext-proc/ext-proc.ts';
import { compileBuffer } from './forwarding/buffer.ts';
import { compileHostRewrite } from './forwarding/host-rewrite.ts';
import { compileRetry } from './forwarding/retry.ts';
import { compileTimeouts } from './forwarding/timeouts.ts';
import { compileCors } from './http/cors.ts';
import { compileCsrf } from './http/csrf.ts';
import { compileDelay } from './http/delay.ts';
import { compileDirectResponse } from './http/direct-response.ts';
import { compileHeaderModifiers } from './http/header-modifiers.ts';
import { compileTransformation } from './http/transformation.ts';
import { compileRateLimit } from './rate-limit/rate-limit.ts';
import {
  type ForwardingPolicy,
  isProblem,
  type PolicyCompileContext,
  type PolicyCompiler,
  type PolicyProblem,
  type RequestStep,
  type StepResult,
} from './types.ts';

/** Where a step runs: before the route's filters (URL rewrite, redirect) or after them. */
type Stage = 'beforeFilters' | 'afterFilters';

interface PipelineEntry {
  field: string;
  stage: Stage;
  compile: PolicyCompiler<never>;
}

/** Every traffic field, in pipeline order. `phase` is not a policy: it chose this pipeline. */
const PIPELINE: readonly PipelineEntry[] = [
  { field: 'cors', stage: 'beforeFilters', compile: compileCors },
  { field: 'jwtAuthentication', stage: 'beforeFilters', compile: compileJwtAuthentication },
  { field: 'basicAuthentication', stage: 'beforeFilters', compile: compileBasicAuthentication },
  { field: 'apiKeyAuthentication', stage: 'beforeFilters', compile: compileApiKeyAuthentication },
  { field: 'extAuth', stage: 'beforeFilters', compile: compileExtAuth },
  { field: 'authorization', stage: 'beforeFilters', compile: compileAuthorization },
  { field: 'rateLimit', stage: 'beforeFilters', compile: compileRateLimit },
  { field: 'extProc', stage: 'beforeFilters', compile: compileExtProc },
  { field: 'transformation', stage: 'beforeFilters', compile: compileTransformation },
  { field: 'csrf', stage: 'beforeFilters', compile: compileCsrf },
  { field: 'headerModifiers', stage: 'beforeFilters', compile: compileHeaderModifiers },
  { field: 'directResponse', stage: 'afterFilters', compile: compileDirectResponse },
  { field: 'delay', stage: 'afterFilters', compile: compileDelay },
  { field: 'buffer', stage: 'afterFilters', compile: compileBuffer },
  { field: 'hostRewrite', stage: 'afterFilters', compile: compileHostRewrite },
  { field: 'timeouts', stage: 'afterFilters', compile: compileTimeouts },
  { field: 'retry', stage: 'afterFilters', compile: compileRetry },
] as PipelineEntry[];

const KNOWN_FIELDS = new Set(['phase', ...PIPELINE.map((entry) => entry.field)]);

export interface NamedStep {
  /** The policy field, for errors and logs: a traffic field ('cors'), or a backend one ('backend.extAuth'). */
  field: string;
  run: RequestStep;
}

export interface CompiledTraffic {
  readonly beforeFilters: readonly NamedStep[];
  readonly afterFilters: readonly NamedStep[];
  readonly forwarding: ForwardingPolicy;
  /** Fields that cannot be used; requests the policy covers are refused (500) while any remain. */
  readonly problems: readonly PolicyProblem[];
}

export const NO_TRAFFIC_POLICY: CompiledTraffic = Object.freeze({
  beforeFilters: [],
  afterFilters: [],
  forwarding: {},
  problems: [],
});

/** Compiles an effective traffic section (the controller's merge) into the pipeline. */
export function compileTraffic(traffic: Record<string, unknown>, context: PolicyCompileContext): CompiledTraffic {
  const fields = Object.keys(traffic);
  if (fields.length === 0 || (fields.length === 1 && fields[0] === 'phase')) return NO_TRAFFIC_POLICY;
  const beforeFilters: NamedStep[] = [];
  const afterFilters: NamedStep[] = [];
  const forwarding: ForwardingPolicy = {};
  const problems: PolicyProblem[] = [];
  for (const field of fields) {
    if (!KNOWN_FIELDS.has(field))
      problems.push({
        field: `${context.path}.${field}`,
        message: 'is not a traffic policy field this data plane knows',
      });
  }
  for (const entry of PIPELINE) {
    const value = traffic[entry.field];
    if (value === undefined) continue;
    let compiled: ReturnType<PolicyCompiler<never>>;
    try {
      const namespace = context.namespaces?.[entry.field];
      compiled = entry.compile(value as never, namespace === undefined ? context : { ...context, namespace });
    } catch (error) {
      compiled = {
        field: `${context.path}.${entry.field}`,
        message: `cannot be compiled: ${(error as Error).message}`,
      };
    }
    if (isProblem(compiled)) {
      problems.push(compiled);
      continue;
    }
    if (compiled.request)
      (entry.stage === 'beforeFilters' ? beforeFilters : afterFilters).push({
        field: entry.field,
        run: compiled.request,
      });
    if (compiled.forwarding) Object.assign(forwarding, compiled.forwarding);
  }
  return { beforeFilters, afterFilters, forwarding, problems };
}

/** A step that throws answers this (fail closed); the reason goes to the log, not the client. */
export class PolicyFailure extends Error {
  readonly field: string;
  constructor(field: string, cause: unknown) {
    const path = field.startsWith('backend.') ? field : `traffic.${field}`;
    super(`${path} failed: ${(cause as Error)?.message ?? String(cause)}`);
    this.field = field;
  }
}

/** Runs steps in order until one answers; a step that throws becomes a PolicyFailure. */
export async function runSteps(steps: readonly NamedStep[], exchange: PolicyExchange): Promise<StepResult> {
  for (const step of steps) {
    let result: StepResult | Promise<StepResult>;
    try {
      result = step.run(exchange);
      if (result instanceof Promise) result = await result;
    } catch (error) {
      throw new PolicyFailure(step.field, error);
    }
    if (result) return result;
  }
  return undefined;
}
