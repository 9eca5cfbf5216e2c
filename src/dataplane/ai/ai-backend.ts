// An `ai` GwBackend on the request path: its providers (one, or priority groups of named ones)
// compiled with their effective backend policy (connection, auth, health, AI request policy),
// and the request flow: read and check the body, apply the AI policies, then try providers in
// the balancer's order until one answers — failing over only while nothing has been sent to the
// client.
import type { BackendAI, RouteType } from '../../api/types/ai.ts';
import type { LLMProvider } from '../../api/types/llm-provider.ts';
import { defaultUnhealthyCondition, type ObservedResponse } from '../balancing/endpoint-health.ts';
import { PriorityGroupBalancer } from '../balancing/priority-groups.ts';
import { compileExpression, ExpressionError } from '../cel/expression.ts';
import type { AiBackendInput, BackendAuthApplier, BackendHandler } from '../config/compile.ts';
import type { RoutedRequest } from '../proxy/request-handler.ts';
import { type CompiledFilters, compileFilters } from '../routing/filters.ts';
import type { UpstreamClient } from '../upstream/client.ts';
import {
  type BackendConnectionPolicy,
  type ConnectionSettings,
  ConnectionSettingsError,
  connectionSettings,
} from '../upstream/connection-settings.ts';
import { readLlmRequest, runAttempts } from './llm-request.ts';
import { type CompiledAiRequestPolicy, compileAiRequestPolicy, compileRouteTypes } from './policies/index.ts';
import type { ModelRequestPolicies } from './policies/request-policy.ts';
import { type CompiledProvider, compileProvider, ProviderConfigError } from './providers/index.ts';

/** One provider, ready to call. */
export interface ProviderEndpoint {
  name: string;
  provider: CompiledProvider;
  client: UpstreamClient;
  requestTimeoutMs: number | undefined;
  auth: BackendAuthApplier | undefined;
  policy: CompiledAiRequestPolicy;
  unhealthy: (response: ObservedResponse) => boolean;
  /** Header changes of a GwModel's policies, applied to the upstream request and the response. */
  headers: CompiledFilters | undefined;
}

export interface AiBackend {
  readonly name: string;
  readonly balancer: PriorityGroupBalancer<ProviderEndpoint>;
  /** Every provider is tried at most once per request. */
  readonly providerCount: number;
  /** The route type of a request path (BackendAI.routes of the backend's effective policy). */
  readonly routeTypeOf: (path: string) => RouteType;
}

interface NamedProvider extends LLMProvider {
  name: string;
  policies?: unknown;
}

type Problem = { field: string; message: string };

/** Compiles an `ai` GwBackend reached through one backendRef (its effective policy is the ref's). */
export function compileAiBackend(input: AiBackendInput): BackendHandler {
  const ai = input.spec.ai as { provider?: LLMProvider; groups?: { providers: NamedProvider[] }[] };
  const groups: NamedProvider[][] = ai.provider
    ? [[{ ...ai.provider, name: input.name }]]
    : (ai.groups ?? []).map((group) => group.providers);
  const basePolicy = input.ref.policy as Record<string, unknown>;
  const built: { name: string; provider: ProviderEndpoint; health?: { eviction?: unknown } }[][] = [];
  for (const [groupIndex, group] of groups.entries()) {
    const members: (typeof built)[number] = [];
    for (const [index, named] of group.entries()) {
      const where = ai.provider ? 'spec.ai.provider' : `spec.ai.groups[${groupIndex}].providers[${index}]`;
      // A provider's effective policy: the controller merged GwPolicy < GwBackend < provider per section.
      const policy = (ai.provider ? basePolicy : (input.ref.sections?.[named.name] ?? basePolicy)) as Record<
        string,
        unknown
      >;
      const endpoint = compileEndpoint(named, policy, input);
      if ('message' in endpoint) {
        return {
          kind: 'error',
          status: 500,
          message: `GwBackend ${input.namespace}/${input.name} ${where}${endpoint.field ? `.${endpoint.field}` : ''}: ${endpoint.message}`,
        };
      }
      members.push({
        name: named.name,
        provider: endpoint,
        health: (policy.health as { eviction?: unknown }) ?? undefined,
      });
    }
    built.push(members);
  }
  const backend: AiBackend = {
    name: `${input.namespace}/${input.name}`,
    balancer: new PriorityGroupBalancer(built as never, { now: () => performance.now(), random: Math.random }),
    providerCount: built.reduce((count, group) => count + group.length, 0),
    routeTypeOf: compileRouteTypes((basePolicy.ai as BackendAI | undefined)?.routes),
  };
  return { kind: 'ai', backend };
}

/** A GwModel's policies that act on its requests: body transformations and header changes. */
interface ModelEndpointPolicies extends ModelRequestPolicies {
  headers?: { request?: unknown; response?: unknown };
}

/** One provider with its effective policy, and a GwModel's own `modelPolicies`. */
export function compileEndpoint(
  named: NamedProvider,
  policy: Record<string, unknown>,
  input: Pick<AiBackendInput, 'namespace' | 'data' | 'context' | 'client'>,
  modelPolicies?: ModelEndpointPolicies,
): ProviderEndpoint | Problem {
  const { namespace, data, context } = input;
  const { name, policies: _inline, ...providerFields } = named;
  const provider = compileProvider(providerFields as LLMProvider, { name, namespace });
  if (provider instanceof ProviderConfigError) return { field: provider.field, message: provider.message };
  if (provider.service)
    return {
      field: 'custom.backendRef',
      message: 'a custom provider backendRef to a Service is not served in file mode; set host and port',
    };
  let settings: ConnectionSettings;
  try {
    // A tls policy originates TLS even to a host and port that would be plain by default.
    const destination =
      policy.tls !== undefined ? { ...provider.origin, protocol: 'https:' as const } : provider.origin;
    settings = connectionSettings(destination, policy as BackendConnectionPolicy, data, namespace);
  } catch (error) {
    if (error instanceof ConnectionSettingsError) return { field: `policies.${error.field}`, message: error.message };
    throw error;
  }
  let auth: BackendAuthApplier | undefined;
  if (context.compileBackendAuth) {
    const compiled = context.compileBackendAuth(policy.auth, data, namespace, provider.keyStyle);
    if (compiled && 'message' in compiled)
      return { field: `policies.auth.${compiled.field}`, message: compiled.message };
    auth = compiled;
  }
  const requestPolicy = compileAiRequestPolicy(policy.ai as BackendAI | undefined, modelPolicies);
  if (Array.isArray(requestPolicy))
    return { field: `policies.${requestPolicy[0]!.path}`, message: requestPolicy[0]!.message };
  const health = policy.health as { unhealthyCondition?: string } | undefined;
  let unhealthy = defaultUnhealthyCondition;
  if (health?.unhealthyCondition) {
    const expression = compileExpression(health.unhealthyCondition);
    if (expression instanceof ExpressionError)
      return { field: 'policies.health.unhealthyCondition', message: expression.message };
    unhealthy = (response) => {
      try {
        return (
          expression.evaluate({
            response: { code: BigInt(response.status ?? 0) },
            connectionFailed: response.connectionFailed === true,
          }) === true
        );
      } catch {
        return defaultUnhealthyCondition(response);
      }
    };
  }
  const client = input.client(settings);
  const headers = modelPolicies?.headers;
  const headerFilters = headers
    ? compileFilters(
        [
          ...(headers.request ? [{ type: 'RequestHeaderModifier', requestHeaderModifier: headers.request }] : []),
          ...(headers.response ? [{ type: 'ResponseHeaderModifier', responseHeaderModifier: headers.response }] : []),
        ],
        [],
      )
    : undefined;
  return {
    headers: headerFilters,
    name,
    provider,
    client,
    requestTimeoutMs: settings.requestTimeoutMs,
    auth,
    policy: requestPolicy,
    unhealthy,
  };
}

/** Serves a request routed to an AI backend. */
export async function serveAi(routed: RoutedRequest, backend: AiBackend): Promise<void> {
  const routeType = backend.routeTypeOf(routed.forward.path);
  const request = await readLlmRequest(routed, routeType, routed.listener.maxBufferBytes);
  if (!request) return;
  const attempts = backend.balancer.startRequest();
  await runAttempts(routed, request, backend.providerCount, () => {
    const selected = attempts.next();
    if (!selected) return undefined;
    return {
      endpoint: selected.provider,
      report: (outcome) => backend.balancer.report(selected, outcome),
    };
  });
}
