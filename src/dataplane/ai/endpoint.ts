// One LLM provider ready to call: its planner (the family's wire format), its client and
// connection settings, backend auth, AI request policy, health judgement and a GwModel's header
// changes — compiled once from a provider and its effective backend policy. An `ai` GwBackend's
// providers and a GwModel's concrete models are both endpoints (ai-backend.ts, models.ts).

import type { AIPromptGuard } from '../../api/types/ai.ts';
import type { BackendFull } from '../../api/types/backend-policies.ts';
import type { NamedLLMProvider } from '../../api/types/llm-provider.ts';
import type { HeaderModifiers } from '../../api/types/traffic.ts';
import { genAiProviderName } from '../../api/vendors.ts';
import { type FieldNamespaces, fieldNamespace } from '../../contract/dataplane-config.ts';
import { AuthConfigError, type CompiledBackendAuth, compileBackendAuth } from '../auth/backend/index.ts';
import { backendAuthOptions } from '../backends/auth-options.ts';
import type { BackendCompileContext } from '../backends/backend.ts';
import type { ObservedResponse } from '../balancing/endpoint-health.ts';
import { compileUnhealthyCondition } from '../balancing/unhealthy-condition.ts';
import { ExpressionError } from '../cel/expression.ts';
import type { NamedStep } from '../policies/pipeline.ts';
import { type CompiledFilters, compileFilters } from '../routing/filters.ts';
import type { UpstreamClient } from '../upstream/client.ts';
import {
  type ConnectionSettings,
  ConnectionSettingsError,
  connectionSettings,
  type SocketSettings,
} from '../upstream/connection-settings.ts';
import type { Destination } from '../upstream/destination.ts';
import { serviceDestination } from '../upstream/destinations.ts';
import { MESH_ROUTE_BACKENDS_ONLY } from '../upstream/mesh-refusals.ts';
import { type CompiledPromptGuards, compilePromptGuards } from './guards/prompt-guard.ts';
import { compilePoolRouting, type PoolRouting } from './inference-pool/pool-routing.ts';
import { InlineModeration } from './inline-moderation.ts';
import { type CompiledAiRequestPolicy, compileAiRequestPolicy } from './policies/index.ts';
import type { ModelRequestPolicies } from './policies/request-policy.ts';
import { type CompiledProvider, compileProvider, ProviderConfigError } from './providers/index.ts';
import type { Origin } from './providers/types.ts';

/** One provider, ready to call. */
export interface ProviderEndpoint {
  name: string;
  provider: CompiledProvider;
  /** The vendor as telemetry's `gen_ai.provider.name` says it (src/api/vendors.ts). */
  genAiProviderName: string;
  client: UpstreamClient;
  /** Pools of the provider's other origins (CompiledProvider.routeOrigins), by `host:port`: see `upstreamClient`. */
  routeClients?: ReadonlyMap<string, UpstreamClient>;
  /** How a connection to the provider is opened (TLS, connect deadline): for a Realtime session's own. */
  connection: SocketSettings;
  requestTimeoutMs: number | undefined;
  auth: CompiledBackendAuth | undefined;
  policy: CompiledAiRequestPolicy;
  /** The provider's prompt guards (ai.promptGuard); undefined when it has none. */
  guards?: CompiledPromptGuards | undefined;
  /** An alpha provider's inline moderation (alpha.moderation); undefined without it. */
  moderation?: InlineModeration | undefined;
  unhealthy: (response: ObservedResponse) => boolean;
  /** Header changes of a GwModel's policies, applied to the upstream request and the response. */
  headers: CompiledFilters | undefined;
  /**
   * A custom provider's InferencePool: each request goes to the member its endpoint picker names
   * (`client` is then never used: it stands for the pool's nominal origin).
   */
  pool?: PoolRouting;
  /**
   * The provider's own request policies (extAuth, transformation), run on each of its attempts
   * (decision 0045); undefined when the backend's run once for all its providers.
   */
  requestPolicies?: readonly NamedStep[];
}

/** Why an endpoint cannot be compiled: the field path under the provider and what is wrong. */
export type EndpointProblem = { field: string; message: string };

/** A GwModel's policies that act on its requests: body transformations, header changes and prompt guards. */
interface ModelEndpointPolicies extends ModelRequestPolicies {
  headers?: HeaderModifiers;
  promptGuard?: AIPromptGuard;
}

/** Where an endpoint is compiled: the namespace its references resolve in, and the configuration. */
export interface EndpointInput {
  /** The provider's namespace (the GwBackend's or GwModel's): its own references resolve there. */
  namespace: string;
  /** Fields of the policy set by an object of another namespace, whose references resolve there. */
  namespaces?: FieldNamespaces | undefined;
  context: BackendCompileContext;
}

/** One provider with its effective policy, and a GwModel's own `modelPolicies`. */
export function compileEndpoint(
  named: NamedLLMProvider,
  policy: BackendFull,
  input: EndpointInput,
  modelPolicies?: ModelEndpointPolicies,
): ProviderEndpoint | EndpointProblem {
  const { namespace, context } = input;
  const data = context.data;
  const { name, policies: _inline, ...providerFields } = named;
  const tls = policy.tls !== undefined;
  const resolveService = (service: string, port: number) => {
    const object = context.backends[`Service ${namespace}/${service}`];
    if (object?.kind !== 'Service') return 'does not exist';
    return object.mesh ? MESH_ROUTE_BACKENDS_ONLY : serviceDestination(object.spec, port, tls);
  };
  const resolvePool = (pool: string) => {
    const object = context.backends[`InferencePool ${namespace}/${pool}`];
    return object?.kind === 'InferencePool' ? { port: object.spec.targetPorts[0]!.number } : 'does not exist';
  };
  const provider = compileProvider(providerFields, { name, namespace, resolveService, resolvePool });
  if (provider instanceof ProviderConfigError) return { field: provider.field, message: provider.message };
  let settings: ConnectionSettings;
  const routeSettings = new Map<string, ConnectionSettings>();
  let pool: PoolRouting | undefined;
  try {
    // A tls policy originates TLS even to a host and port that would be plain by default; a
    // Service's destination already says (and carries its port's HTTP version).
    const destination = (origin: Origin) => (tls ? { ...origin, protocol: 'https:' as const } : origin);
    const tlsNamespace = fieldNamespace(input.namespaces, 'tls', namespace);
    const tunnelScope = {
      backends: context.backends,
      namespace: fieldNamespace(input.namespaces, 'tunnel', namespace),
    };
    const service = provider.service;
    settings = connectionSettings(
      service?.kind === 'Service' ? service.destination : destination(provider.origin),
      policy,
      data,
      tlsNamespace,
      tunnelScope,
    );
    // An InferencePool's members are reached with the provider's policy, each at its own address.
    if (service?.kind === 'InferencePool') {
      const key = `InferencePool ${service.namespace}/${service.name}`;
      const config = context.backends[key];
      if (config?.kind !== 'InferencePool') return { field: 'custom.backendRef', message: `${key} does not exist` };
      const connect = (to: Destination) =>
        context.client(connectionSettings(to, policy, data, tlsNamespace, tunnelScope));
      const routing = compilePoolRouting(key, config, service.namespace, connect, tls, context);
      if (typeof routing === 'string') return { field: 'custom.backendRef', message: routing };
      pool = routing;
    }
    // Another host of the provider's (a rerank API's) is reached with the same policy: TLS
    // to it names its own host (SNI, certificate check), as its requests' Host does.
    const main = originKey(provider.origin);
    for (const origin of provider.routeOrigins ?? []) {
      const key = originKey(origin);
      if (key !== main && !routeSettings.has(key)) {
        routeSettings.set(key, connectionSettings(destination(origin), policy, data, tlsNamespace, tunnelScope));
      }
    }
  } catch (error) {
    if (error instanceof ConnectionSettingsError) return { field: `policies.${error.field}`, message: error.message };
    throw error;
  }
  const authNamespace = fieldNamespace(input.namespaces, 'auth', namespace);
  const host = provider.credentialHost ?? provider.origin.host;
  const target =
    provider.region === undefined
      ? { host, family: provider.family }
      : { host, family: provider.family, region: provider.region };
  const auth = compileBackendAuth(
    policy.auth ?? defaultBackendAuth(provider),
    data,
    authNamespace,
    backendAuthOptions(context, authNamespace, target, provider.keyStyle),
  );
  if (auth instanceof AuthConfigError) return { field: `policies.auth.${auth.field}`, message: auth.message };
  const requestPolicy = compileAiRequestPolicy(policy.ai, modelPolicies);
  if (Array.isArray(requestPolicy))
    return { field: `policies.${requestPolicy[0]!.path}`, message: requestPolicy[0]!.message };
  // A GwModel's own promptGuard wins over one its GwPolicies give (its fields win field by field);
  // its references (a webhook's backendRef) resolve in the model's namespace.
  const guards =
    modelPolicies?.promptGuard !== undefined
      ? compilePromptGuards(modelPolicies.promptGuard, 'promptGuard', { ...input, namespaces: undefined })
      : compilePromptGuards(policy.ai?.promptGuard, 'ai.promptGuard', input);
  if (guards !== undefined && 'path' in guards) return { field: `policies.${guards.path}`, message: guards.message };
  const unhealthy = compileUnhealthyCondition(policy.health);
  if (unhealthy instanceof ExpressionError)
    return { field: 'policies.health.unhealthyCondition', message: unhealthy.message };
  const client = context.client(settings);
  const routeClients = new Map([...routeSettings].map(([key, each]) => [key, context.client(each)] as const));
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
    ...(pool ? { pool } : {}),
    genAiProviderName: genAiProviderName(provider.family),
    client,
    ...(routeClients.size > 0 ? { routeClients } : {}),
    connection: settings.socket,
    requestTimeoutMs: settings.requestTimeoutMs,
    auth,
    policy: requestPolicy,
    ...(guards === undefined ? {} : { guards }),
    ...(providerFields.alpha?.moderation === undefined
      ? {}
      : { moderation: new InlineModeration(providerFields.alpha.moderation) }),
    unhealthy,
  };
}

/** An origin's `host:port`: what tells a provider's origins apart (the scheme follows the port). */
function originKey(origin: Origin): string {
  return `${origin.host}:${origin.port}`;
}

/** The pool of the endpoint's connections to `origin`, a plan's: the provider's own, or another of its hosts. */
export function upstreamClient(endpoint: ProviderEndpoint, origin: Origin): UpstreamClient {
  return endpoint.routeClients?.get(originKey(origin)) ?? endpoint.client;
}

/**
 * The backend auth of a provider whose policies set none: a zeta (Bedrock) provider signs with
 * the ambient AWS credentials (docs/decisions/0019-bedrock.md), an epsilon (Vertex AI) one
 * sends an access token of the ambient Google credentials (docs/decisions/0021-vertex.md) and a
 * beta (Azure AI Foundry) one an Entra ID token of gw's environment
 * (docs/decisions/0022-azure-ai-foundry.md), as agentgateway does; the others send no credentials.
 */
function defaultBackendAuth(provider: CompiledProvider): BackendFull['auth'] {
  if (provider.family === 'zeta') return { cloudone: {} };
  if (provider.family === 'epsilon') return { cloudtwo: {} };
  if (provider.family === 'beta') return { beta: {} };
  return undefined;
}
