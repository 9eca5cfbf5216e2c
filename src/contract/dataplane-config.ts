// The contract between the controller and the data plane: the configuration of one gw Gateway,
// plain versioned JSON (it travels to worker processes and proxy replicas) with everything
// resolved — listeners with their effective frontend policy, routes and rules with their
// effective traffic policy, backend references with their effective backend policy, the specs of
// the backends they name, the programmed GwModels, and the data of every Secret and ConfigMap the
// configuration names. The data plane never looks anything up on the hot path.
//
// Every policy and spec here has the type the schema gives it (src/api): the controller builds
// these values by merging admitted objects per field, so the data plane reads them as typed values,
// never as `unknown` bags it casts back. Both sides import this module; it imports only the API.
import type { ServiceSpec } from '../api/kinds/core/service.ts';
import type {
  HTTPHeaderMatch,
  HTTPQueryParamMatch,
  HTTPRouteFilter,
  HTTPRouteTimeouts,
} from '../api/kinds/gateway-api/http-route.ts';
import type { GwBackendSpec } from '../api/kinds/gw-backend.ts';
import type { GwModelSpec } from '../api/kinds/gw-model.ts';
import type { InferencePoolSpec } from '../api/kinds/inference/inference-pool.ts';
import type { BackendFull } from '../api/types/backend-policies.ts';
import type { Frontend } from '../api/types/frontend.ts';
import type { APIKeyAuthentication } from '../api/types/inbound-auth.ts';
import type { Traffic } from '../api/types/traffic.ts';

export const DATAPLANE_CONFIG_VERSION = 'gw.dev/dataplane/v1alpha1';

/** Service annotations of MCP selector targets (docs/mcp.md "Selector targets"). */
export const MCP_PATH_ANNOTATION = 'gw.dev/mcp-path';
export const MCP_TARGET_NAME_ANNOTATION = 'gw.dev/mcp-target-name';

/**
 * An HTTPRoute match as the controller hands it over: the path always set (Gateway API's default
 * PathPrefix `/` filled in), header and query conditions with their type.
 */
export interface RouteMatch {
  path: { type: 'Exact' | 'PathPrefix' | 'RegularExpression'; value: string };
  headers?: (Omit<HTTPHeaderMatch, 'type'> & { type: NonNullable<HTTPHeaderMatch['type']> })[];
  queryParams?: (Omit<HTTPQueryParamMatch, 'type'> & { type: NonNullable<HTTPQueryParamMatch['type']> })[];
  method?: string;
}

/**
 * traffic.apiKeyAuthentication as the data plane receives it. With a secretSelector or
 * configMapSelector, `selected` lists the objects the selector chose ("Kind ns/name", by name;
 * their data is in `data`): the data plane has no labels to match.
 */
export type ApiKeyAuthenticationConfig = APIKeyAuthentication & { selected?: string[] };

/** An effective traffic section (GwPolicy `traffic`, merged per field along the request's path). */
export type TrafficConfig = Omit<Traffic, 'apiKeyAuthentication'> & {
  apiKeyAuthentication?: ApiKeyAuthenticationConfig;
};

/** An effective backend section (GwPolicy `backend` and the backend's inline policies, merged per field). */
export type BackendPolicyConfig = BackendFull;

/**
 * For each field of an effective section, the policy it came from and what that policy targets
 * ("GwPolicy ns/p on Gateway ns/gw", "GwBackend ns/b on GwBackend ns/b"): state a policy keeps
 * (rate-limit buckets) is shared by every rule the same attachment reaches, and a field the data
 * plane refuses is reported on the object that set it.
 */
export type FieldSources = Record<string, string>;

/**
 * For each field of an effective section set by an object of another namespace than the one the
 * section resolves in by default (a GwPolicy on a Gateway reaching a route or backend of another
 * namespace): that namespace. The Secrets, ConfigMaps and endpoint references of the field
 * resolve there — in the namespace of the object that named them, as a Local reference means.
 */
export type FieldNamespaces = Record<string, string>;

/** The namespace `field` of a section resolves its references in. */
export function fieldNamespace(namespaces: FieldNamespaces | undefined, field: string, home: string): string {
  return namespaces?.[field] ?? home;
}

/** The FieldNamespaces of the policy a backendRef's sub-backend (provider, MCP target) gets: its section's, else the whole backend's. */
export function sectionNamespaces(ref: BackendRefConfig, section: string | undefined): FieldNamespaces | undefined {
  if (section !== undefined && ref.sections?.[section] !== undefined) return ref.sectionNamespaces?.[section];
  return ref.policyNamespaces;
}

/** A Service an MCP selector target chose (docs/mcp.md "Selector targets"). */
export interface McpSelectedService {
  /** "Service ns/name": a key into `backends`. */
  service: string;
  /** The gw.dev/mcp-path annotation: the MCP path on the Service's ports. */
  path?: string;
  /** The gw.dev/mcp-target-name annotation: the target name its tools are prefixed with. */
  targetName?: string;
}

export interface BackendRefConfig {
  /** Key into `backends`: "GwBackend ns/name" or "Service ns/name". */
  backend: string;
  port?: number;
  weight: number;
  filters?: HTTPRouteFilter[];
  /** Why the reference cannot be used (its share of requests is answered with 500). */
  problem?: string;
  /** The effective backend policy on this path (rule to backend). */
  policy: BackendPolicyConfig;
  /** Where each field of `policy` came from. */
  policySources?: FieldSources;
  /** Fields of `policy` that resolve in another namespace than the backend's. */
  policyNamespaces?: FieldNamespaces;
  /**
   * For a GwBackend with AI provider groups or MCP targets: the effective backend policy on this
   * path for each provider or target, by name (GwPolicies on that section and its inline policies
   * included).
   */
  sections?: Record<string, BackendPolicyConfig>;
  /** Where each field of each section's policy came from, by section name. */
  sectionSources?: Record<string, FieldSources>;
  /** Fields of each section's policy that resolve in another namespace than the backend's, by section name. */
  sectionNamespaces?: Record<string, FieldNamespaces>;
  /**
   * For a GwBackend with MCP selector targets: the Services each selector target chose, by target
   * name (sorted by key; their specs are in `backends`), with what their annotations say.
   */
  mcpServices?: Record<string, McpSelectedService[]>;
}

/**
 * The GwModels a rule (whose backend is GwModel "*") or a listener serves, and the effective
 * backend policy on the way to them: GwPolicy `backend` sections attached to the Gateway, the
 * listener, the route or the rule. A model's own `spec.policies` win over it, field by field.
 */
export interface ModelsConfig {
  /** Keys into the configuration's `models`, sorted. */
  keys: string[];
  policy: BackendPolicyConfig;
  policySources?: FieldSources;
  /** The namespace of every field of `policy` (the models are of many namespaces); a model's own policies resolve in its own. */
  policyNamespaces?: FieldNamespaces;
}

export interface RuleConfig {
  name?: string;
  matches: RouteMatch[];
  filters?: HTTPRouteFilter[];
  timeouts?: HTTPRouteTimeouts;
  /** The effective PostRouting traffic policy. */
  traffic: TrafficConfig;
  trafficSources?: FieldSources;
  /** Fields of `traffic` that resolve in another namespace than the route's (the Gateway's for a listener's models). */
  trafficNamespaces?: FieldNamespaces;
  backendRefs: BackendRefConfig[];
  /** For a rule whose backend is GwModel "*": the models attached to it. */
  models?: ModelsConfig;
}

export interface RouteConfig {
  /** "namespace/name" */
  route: string;
  hostnames: string[];
  rules: RuleConfig[];
}

export interface ListenerTlsConfig {
  mode: 'Terminate' | 'Passthrough';
  /** "Secret ns/name" keys into `data`. */
  certificates: string[];
}

export interface ListenerConfig {
  name: string;
  port: number;
  protocol: string;
  hostname?: string;
  tls?: ListenerTlsConfig;
  frontend: Frontend;
  /** Where each frontend field came from. */
  frontendSources?: FieldSources;
  /** Frontend fields that resolve in another namespace than the Gateway's (a ListenerSet's policies). */
  frontendNamespaces?: FieldNamespaces;
  /** The effective PreRouting traffic policy: runs on every request before a route is chosen. */
  preRouting: TrafficConfig;
  preRoutingSources?: FieldSources;
  preRoutingNamespaces?: FieldNamespaces;
  routes: RouteConfig[];
  /**
   * Models attached to the listener directly (Gateway or ListenerSet parents): a rule of no route
   * that serves the requests no route matches, with the listener's effective PostRouting traffic
   * policy (GwPolicies on the Gateway and the listener) — the same policy every route there gets.
   */
  modelRule?: RuleConfig;
}

/** A ready pod of a Service in Istio's ambient mesh (decision 0035 part 3), reached over HBONE. */
export interface MeshEndpointConfig {
  /** The pod's IP address (its EndpointSlice endpoint's first). */
  address: string;
  /** The pod's namespace and ServiceAccount: its SPIFFE ID, with the mesh's trust domain. */
  namespace: string;
  serviceAccount: string;
  /** The pod's port for each Service port, by the Service port's number. */
  ports: Record<string, number>;
}

/** A Service in the ambient mesh: its ready pods in the mesh (none: nothing may be sent). */
export interface ServiceMeshConfig {
  endpoints: MeshEndpointConfig[];
  /**
   * The waypoint the Service's traffic must go through (label istio.io/use-waypoint): gw does not
   * send through waypoints, so nothing is sent (endpoints is empty).
   */
  waypoint?: string;
}

/**
 * An InferencePool a custom provider's backendRef names (docs/decisions/0049-inference-pool.md):
 * its spec, and the IP addresses of the Pods it selects that are ready (sorted; none: nothing can
 * be sent). Its endpoint picker's Service, when it names one, is in `backends` too.
 */
export interface InferencePoolConfig {
  kind: 'InferencePool';
  spec: InferencePoolSpec;
  endpoints: string[];
}

/**
 * A backend a configuration names: a GwBackend's or a Service's spec; a Service in the ambient
 * mesh with its mesh endpoints; an InferencePool with its ready Pods.
 */
export type BackendObjectConfig =
  | { kind: 'GwBackend'; spec: GwBackendSpec }
  | { kind: 'Service'; spec: ServiceSpec; mesh?: ServiceMeshConfig }
  | InferencePoolConfig;

export interface DataPlaneConfig {
  apiVersion: typeof DATAPLANE_CONFIG_VERSION;
  gateway: { namespace: string; name: string };
  /** The store revision the configuration was made from. */
  revision: string;
  listeners: ListenerConfig[];
  /**
   * GwBackend specs and Service specs, by "Kind ns/name": those routes send to, and those policy
   * endpoint references name (ExtAuth, ExtProc, rate limit services, JWKS, OTLP collectors); the
   * InferencePools custom providers send to.
   */
  backends: Record<string, BackendObjectConfig>;
  /** Programmed GwModels, by "ns/name". */
  models: Record<string, GwModelSpec>;
  /** Decoded data of the Secrets and ConfigMaps named anywhere above, by "Kind ns/name". */
  data: Record<string, Record<string, string>>;
  /**
   * The model cost catalog of the Gateway's own GwParameters (`spec.modelCatalog`), parsed and
   * validated by the controller; absent when they set none.
   */
  modelCatalog?: ModelCatalogConfig;
}

/**
 * Prices of one model, USD per 1,000,000 tokens, as decimal text with at most 6 fractional digits
 * ("2.5", "0.075"). A rate left out is not priced: cached or reasoning tokens then cost the input
 * or output rate.
 */
export interface ModelRates {
  input?: string;
  output?: string;
  /** Input tokens read from the provider's prompt cache. */
  cacheRead?: string;
  /** Input tokens written to the provider's prompt cache. */
  cacheWrite?: string;
  /** Output tokens spent on reasoning. */
  reasoning?: string;
}

/** A model's prices: base rates, and the rates that replace them above a context size. */
export interface ModelPricing {
  rates: ModelRates;
  /** Sorted by contextOver, strictly increasing; the highest one below a request's input tokens applies over the base rates. */
  tiers?: { contextOver: number; rates: ModelRates }[];
}

/** GwParameters `spec.modelCatalog` resolved: the prices of the sources that could be read, merged in order. */
export interface ModelCatalogConfig {
  /** The GwParameters it comes from, "ns/name". */
  parameters: string;
  /** The sources whose prices are here, in order (a later one wins per model and rate): "ConfigMap ns/name key". */
  sources: string[];
  /** Prices by provider (`gen_ai.provider.name`: openai, anthropic...), then by model name. */
  providers: Record<string, Record<string, ModelPricing>>;
  /** Sources that could not be used and why (a missing ConfigMap, invalid JSON...): the data plane logs them. */
  problems?: string[];
}

/** The namespace of a "Kind ns/name" key ("GwBackend team-a/openai" → "team-a"). */
export function namespaceOfKey(key: string): string {
  return key.slice(key.indexOf(' ') + 1).split('/')[0]!;
}

/** The name of a "Kind ns/name" key ("GwBackend team-a/openai" → "openai"). */
export function nameOfKey(key: string): string {
  return key.slice(key.lastIndexOf('/') + 1);
}
