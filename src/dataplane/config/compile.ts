// Compiles a Gateway's data-plane configuration once, when it arrives: listeners grouped by port,
// route tables, filters, traffic policies, weighted backend choices and the backends themselves
// (each by its kind: backends/registry.ts). Requests then only look things up in the compiled
// form. Anything that cannot be used is compiled into an error answer for the requests that reach
// it (and a problem line for the log), never a crash.

import type { CORS } from '../../api/types/traffic.ts';
import type {
  BackendObjectConfig,
  BackendRefConfig,
  DataPlaneConfig,
  ListenerConfig,
  ModelsConfig,
  RuleConfig,
  TrafficConfig,
} from '../../contract/dataplane-config.ts';
import { namespaceOfKey } from '../../contract/dataplane-config.ts';
import {
  backendPlace,
  sectionOwnFields,
  sectionPlace,
  servedKindOf,
  trafficPlaces,
} from '../../contract/enforcement/consumers.ts';
import type { PlaceName } from '../../contract/enforcement/places.ts';
import { refusalsIn } from '../../contract/enforcement/walk.ts';
import { shorterTimeout } from '../../util/deadlines.ts';
import { byteSize, durationMs } from '../../util/units.ts';
import { ModelPrices } from '../ai/model-prices.ts';
import {
  type Backend,
  type BackendCompileContext,
  backendRefusal,
  isRefusal,
  type RouteContext,
} from '../backends/backend.ts';
import {
  backendPolicyProblem,
  type CompiledBackendPolicies,
  compileBackendPolicies,
  NO_BACKEND_POLICIES,
  placeRequestPolicies,
  transformsResponseBody,
} from '../backends/backend-policies.ts';
import { RefusedBackend } from '../backends/refused.ts';
import {
  backendTypeOf,
  compileBackendRef,
  compileModelsBackend,
  refusedAnswersOf,
  refusedModelAnswers,
} from '../backends/registry.ts';
import type { MeshTransport } from '../mesh/transport.ts';
import { compileMcpBackendAuthentication } from '../policies/auth/mcp-oauth/backend-authentication.ts';
import { compileTrafficMcpEndpoint, type McpOAuthEndpoint } from '../policies/auth/mcp-oauth/endpoint.ts';
import { McpOAuthRoutes, type RoutedEndpoint } from '../policies/auth/mcp-oauth/routes.ts';
import { type CompiledTraffic, compileTraffic } from '../policies/pipeline.ts';
import type { PolicyRuntime } from '../policies/runtime.ts';
import { isProblem, type PolicyCompileContext } from '../policies/types.ts';
import { DEFAULT_MAX_BUFFER_BYTES } from '../proxy/body.ts';
import { type CompiledFilters, compileFilters, compileRuleFilters } from '../routing/filters.ts';
import { compileRouteTable, type RouteTable } from '../routing/route-table.ts';
import { compileWeightedChoice, type WeightedChoice } from '../routing/weighted-choice.ts';
import {
  type ConnectionOptions,
  compileConnectionOptions,
  connectionFieldsKey,
  DEFAULT_CONNECTION_OPTIONS,
} from '../server/listener-options.ts';
import type { FrontendTelemetry, Telemetry } from '../telemetry/request-telemetry.ts';
import type { AddressLookup } from '../upstream/address-lookup.ts';
import type { DataLookup } from '../upstream/connection-settings.ts';
import type { UpstreamPools } from '../upstream/pools.ts';

export interface CompiledBackendRef {
  readonly weight: number;
  readonly filters: CompiledFilters;
  readonly backend: Backend;
  /** The effective backend policy's request policies (extAuth, transformation), run before the backend serves. */
  readonly policies: CompiledBackendPolicies;
  /**
   * Set when an AI provider or MCP target runs request policies of its own on its calls
   * (decision 0045): they fork the request's PolicyExchange, and when one may add a response
   * Transform that changes the body, the response is read whole for it.
   */
  readonly subBackendPolicies?: { readonly transformsResponseBody: boolean };
  /** "GwBackend ns/name", "Service ns/name" or "GwModel *", for telemetry. */
  readonly name: string;
}

export interface CompiledRule {
  readonly config: RuleConfig;
  /** "namespace/name" of the route; '' for a listener's models. */
  readonly route: string;
  readonly filters: CompiledFilters;
  readonly backends: WeightedChoice<CompiledBackendRef>;
  /** What the rule tells the backend that serves a request (deadlines, forwarding, limits). */
  readonly context: RouteContext;
  /** The effective PostRouting traffic policy. */
  readonly policies: CompiledTraffic;
  /** Why the rule cannot be served as configured (a traffic policy that cannot be used): answered with 500. */
  readonly refused: string | undefined;
}

export interface CompiledListener {
  readonly config: ListenerConfig;
  readonly table: RouteTable;
  readonly rules: ReadonlyMap<RuleConfig, CompiledRule>;
  /** Serves requests no route matches when models are attached to the listener itself. */
  readonly modelRule: CompiledRule | undefined;
  /** The effective PreRouting traffic policy: runs before a route is chosen. */
  readonly preRouting: CompiledTraffic;
  /** Access log and metrics as the listener's effective Frontend policy sets them. */
  readonly telemetry: FrontendTelemetry | undefined;
  /** Most bytes of a request body buffered (Frontend.http.maxBufferSize, default 2 MiB). */
  readonly maxBufferBytes: number;
  /** Why the listener cannot be served as configured (a Frontend field not enforced yet): answered with 500. */
  readonly refused: string | undefined;
  /** Lower-case hostname without a wildcard's "*" ("*.example.com" keeps ".example.com"), or undefined. */
  readonly hostname: string | undefined;
  /** The connection-level Frontend settings (tcp, networkAuthorization, tls, http, proxyProtocol, connect). */
  readonly connection: ConnectionOptions;
  /** MCP OAuth well-known endpoints of the listener's MCP URLs, answered before routing; undefined when none. */
  readonly mcpOAuth: McpOAuthRoutes | undefined;
}

export interface CompiledPort {
  readonly port: number;
  readonly protocol: 'HTTP' | 'HTTPS';
  /** Most specific hostname first: exact names, then wildcards (longest first), then none. */
  readonly listeners: readonly CompiledListener[];
  /** Certificates of HTTPS listeners: hostname ('' for none) → PEM key and certificate. */
  readonly certificates: ReadonlyMap<string, { key: string; cert: string }>;
  /**
   * Connection settings of the port: its first listener's (they act before the Host header picks a
   * listener; listeners of a port that disagree are logged).
   */
  readonly connection: ConnectionOptions;
  /** The Gateway's model catalog (its requests' LLM cost), if its GwParameters set one. */
  readonly modelPrices: ModelPrices | undefined;
}

export interface CompiledGateway {
  readonly key: string;
  readonly config: DataPlaneConfig;
  readonly ports: ReadonlyMap<number, CompiledPort>;
  /** What could not be compiled, one line each ("listener http route ns/r rule 0: ..."). */
  readonly problems: readonly string[];
  /** Connection pools this configuration uses (the rest can be closed). */
  readonly poolKeys: ReadonlySet<string>;
  /** Policy state this configuration uses (PolicyRuntime keys; the rest can be dropped). */
  readonly runtimeKeys: ReadonlySet<string>;
}

/** The parts of the data plane a compile uses: shared pools and state kept across configurations. */
export interface CompileContext {
  pools: UpstreamPools;
  /** State of traffic policies and backends kept across configurations. */
  policyRuntime: PolicyRuntime;
  /** State kept for the life of the data plane (BackendCompileContext.lifetime). */
  lifetime<T>(key: string, create: () => T): T;
  /** Whether this data plane listens on a port now (BackendCompileContext.servesPort). */
  servesPort(port: number): boolean;
  /** BackendCompileContext.resolveHost. */
  resolveHost: AddressLookup;
  telemetry?: Telemetry;
  /** The way into the ambient mesh, when this process has the mesh environment. */
  mesh?: MeshTransport;
}

/** What the enforcement registry refuses in `value` at `place`, as one line ("traffic.retry: why; ..."), or undefined. */
function refusalText(place: PlaceName, value: unknown, prefix: string): string | undefined {
  const refusals = refusalsIn(place, value);
  if (refusals.length === 0) return undefined;
  return refusals.map((refusal) => `${prefix}${refusal.path}: ${refusal.reason}`).join('; ');
}

/** Whether `host` (routing form) matches a listener hostname (exact, or "*." wildcard). */
export function listenerMatches(listener: CompiledListener, host: string): boolean {
  const hostname = listener.hostname;
  if (hostname === undefined) return true;
  if (hostname.charCodeAt(0) === 46 /* . */) return host.length > hostname.length && host.endsWith(hostname);
  return host === hostname;
}

/** The listener on a port that takes a request for `host` (already in routing form). */
export function selectListener(port: CompiledPort, host: string): CompiledListener | undefined {
  const listeners = port.listeners;
  if (listeners.length === 1) return listenerMatches(listeners[0]!, host) ? listeners[0] : undefined;
  for (const listener of listeners) if (listenerMatches(listener, host)) return listener;
  return undefined;
}

function hostnameRank(listener: ListenerConfig): number {
  const hostname = listener.hostname?.toLowerCase();
  if (hostname === undefined) return 0;
  return hostname.startsWith('*.') ? hostname.length : 100_000 + hostname.length;
}

export function compileGateway(key: string, config: DataPlaneConfig, context: CompileContext): CompiledGateway {
  context.policyRuntime.beginCompile();
  try {
    return compileGatewayParts(key, config, context);
  } finally {
    // (the keys are read inside; this only guards against a throw leaving recording on)
    context.policyRuntime.endCompile();
  }
}

/** One configuration's compile: its problems, the pools it uses, what its backends are offered. */
interface Compiling {
  readonly config: DataPlaneConfig;
  readonly context: CompileContext;
  readonly data: DataLookup;
  readonly problems: string[];
  readonly backends: BackendCompileContext;
}

/** A port's listeners before they are compiled. */
interface PortPlan {
  protocol: 'HTTP' | 'HTTPS';
  listeners: ListenerConfig[];
  certificates: Map<string, { key: string; cert: string }>;
}

function compileGatewayParts(key: string, config: DataPlaneConfig, context: CompileContext): CompiledGateway {
  const problems: string[] = [];
  const reported = new Set<string>();
  const poolKeys = new Set<string>();
  const data: DataLookup = (ref) => config.data[ref];
  const backends: BackendCompileContext = {
    gateway: `${config.gateway.namespace}/${config.gateway.name}`,
    data,
    backends: config.backends,
    models: config.models,
    pool: (settings) => {
      poolKeys.add(settings.key);
      return context.pools.get(settings);
    },
    currentPool: (settings) => context.pools.get(settings),
    client: (settings) => {
      poolKeys.add(settings.key);
      return context.pools.client(settings);
    },
    runtime: context.policyRuntime,
    mesh: context.mesh,
    lifetime: (name, create) => context.lifetime(name, create),
    servesPort: (port) => context.servesPort(port),
    resolveHost: context.resolveHost,
    report: (problem) => {
      if (!reported.has(problem)) {
        reported.add(problem);
        problems.push(problem);
      }
    },
  };
  const compiling: Compiling = { config, context, data, problems, backends };
  // A catalog source that could not be read is the GwParameters' status; the log says it too.
  for (const problem of config.modelCatalog?.problems ?? [])
    problems.push(
      `model catalog of GwParameters ${config.modelCatalog!.parameters}: ${problem}; requests are served without its prices`,
    );
  const modelPrices = config.modelCatalog ? new ModelPrices(config.modelCatalog) : undefined;
  const ports = new Map<number, CompiledPort>();
  for (const [number, plan] of planPorts(config, data, problems)) {
    // Listeners of a port: the most specific hostname first; the first one's connection settings apply.
    plan.listeners.sort((a, b) => hostnameRank(b) - hostnameRank(a));
    const first = plan.listeners[0]!;
    const firstKey = connectionFieldsKey(first.frontend);
    for (const listener of plan.listeners.slice(1))
      if (connectionFieldsKey(listener.frontend) !== firstKey)
        problems.push(
          `listener ${listener.name}: its frontend connection settings differ from listener ${first.name}'s; port ${number} applies listener ${first.name}'s`,
        );
    const listeners: CompiledListener[] = [];
    for (const listener of plan.listeners) listeners.push(compileListener(compiling, listener, listeners[0]));
    const connection = listeners[0]?.connection ?? DEFAULT_CONNECTION_OPTIONS;
    ports.set(number, {
      port: number,
      protocol: plan.protocol,
      listeners,
      certificates: plan.certificates,
      connection,
      modelPrices,
    });
  }
  return { key, config, ports, problems, poolKeys, runtimeKeys: context.policyRuntime.endCompile() };
}

/** Listeners grouped by port, with the certificates of HTTPS ports; listeners that cannot be served are left out. */
function planPorts(config: DataPlaneConfig, data: DataLookup, problems: string[]): Map<number, PortPlan> {
  const ports = new Map<number, PortPlan>();
  for (const listener of config.listeners) {
    if (listener.protocol !== 'HTTP' && listener.protocol !== 'HTTPS') {
      problems.push(`listener ${listener.name}: protocol ${listener.protocol} is not served by this data plane`);
      continue;
    }
    let port = ports.get(listener.port);
    if (!port) {
      port = { protocol: listener.protocol, listeners: [], certificates: new Map() };
      ports.set(listener.port, port);
    } else if (port.protocol !== listener.protocol) {
      problems.push(`listener ${listener.name}: port ${listener.port} already serves ${port.protocol}`);
      continue;
    }
    if (listener.protocol === 'HTTPS') {
      const certificate = listenerCertificate(listener, data);
      if (typeof certificate === 'string') {
        problems.push(`listener ${listener.name}: ${certificate}`);
        continue;
      }
      port.certificates.set(listener.hostname?.toLowerCase() ?? '', certificate);
    }
    port.listeners.push(listener);
  }
  for (const [number, port] of ports) if (port.listeners.length === 0) ports.delete(number);
  return ports;
}

function listenerCertificate(listener: ListenerConfig, data: DataLookup): { key: string; cert: string } | string {
  if (listener.tls?.mode === 'Passthrough') return 'TLS Passthrough is not served by this data plane';
  const ref = listener.tls?.certificates[0];
  if (!ref) return 'an HTTPS listener needs a certificate';
  const secret = data(ref);
  if (!secret?.['tls.crt'] || !secret['tls.key']) return `${ref} needs tls.crt and tls.key`;
  return { key: secret['tls.key'], cert: secret['tls.crt'] };
}

/** Frontend.http.maxBufferSize of a listener (default 2 MiB): the most of a body gw buffers. */
function listenerMaxBufferBytes(listener: ListenerConfig): number {
  const size = listener.frontend.http?.maxBufferSize;
  return size !== undefined ? byteSize(size) : DEFAULT_MAX_BUFFER_BYTES;
}

/** What to answer while a traffic policy cannot be used (its problems, field paths first). */
function policyRefusal(policies: CompiledTraffic): string | undefined {
  if (policies.problems.length === 0) return undefined;
  return `traffic policy ${policies.problems.map((problem) => `${problem.field} ${problem.message}`).join('; ')}`;
}

/** What a listener's rules share while they are compiled. */
interface ListenerScope {
  readonly listener: ListenerConfig;
  readonly maxBufferBytes: number;
  /** The PreRouting CORS policy, whose origins the MCP origin check admits on every rule. */
  readonly preRoutingCors: CORS | undefined;
  /** Frontend.http.http1HeaderCase of the port (its first listener's). */
  readonly preserveHeaderCase: boolean;
}

/** Compiles a listener; `firstOfPort` is its port's first listener (whose connection settings the port applies), if not this one. */
function compileListener(
  compiling: Compiling,
  listener: ListenerConfig,
  firstOfPort: CompiledListener | undefined,
): CompiledListener {
  const { config, context, problems } = compiling;
  const connection = compileConnectionOptions(listener.frontend);
  if (!firstOfPort) for (const note of connection.notes) problems.push(`listener ${listener.name}: ${note}`);
  const portConnection = firstOfPort?.connection ?? connection.options;
  const scope: ListenerScope = {
    listener,
    maxBufferBytes: listenerMaxBufferBytes(listener),
    preRoutingCors: listener.preRouting.cors,
    preserveHeaderCase: portConnection.http1HeaderCase === 'Preserve',
  };
  const table = compileRouteTable(listener.routes, listener.hostname);
  for (const problem of table.problems) {
    problems.push(
      `listener ${listener.name} route ${problem.route} rule ${problem.ruleIndex} ${problem.field}: ${problem.message}`,
    );
  }
  const rules = new Map<RuleConfig, CompiledRule>();
  const mcpEndpoints = new Map<RuleConfig, RoutedEndpoint>();
  for (const route of listener.routes) {
    const namespace = route.route.split('/')[0]!;
    route.rules.forEach((rule, index) => {
      const where = `listener ${listener.name} route ${route.route} rule ${rule.name ?? index}`;
      const compiled = compileRule(compiling, scope, rule, route.route, namespace, where);
      rules.set(rule, compiled.rule);
      if (compiled.mcpEndpoint)
        mcpEndpoints.set(rule, { endpoint: compiled.mcpEndpoint, route: route.route, rule: rule.name ?? '' });
    });
  }
  const modelRule =
    listener.modelRule &&
    compileRule(compiling, scope, listener.modelRule, '', config.gateway.namespace, `listener ${listener.name} models`)
      .rule;
  const preRoutingScope = `Gateway ${config.gateway.namespace}/${config.gateway.name} listener ${listener.name} PreRouting`;
  const preRoutingContext: PolicyCompileContext = {
    path: 'traffic',
    namespace: config.gateway.namespace,
    data: compiling.data,
    backends: config.backends,
    namespaces: listener.preRoutingNamespaces,
    scope: preRoutingScope,
    owner: (field) => listener.preRoutingSources?.[field] ?? preRoutingScope,
    runtime: context.policyRuntime,
  };
  const preRoutingMcpOAuth = withTrafficMcpEndpoint(
    listener.preRouting,
    compileTraffic(listener.preRouting, preRoutingContext),
    preRoutingContext,
  );
  const preRouting = preRoutingMcpOAuth.policies;
  const refusedPreRouting = refusalText('traffic', listener.preRouting, 'traffic.');
  const preRoutingRefusal = refusedPreRouting ? `traffic policy ${refusedPreRouting}` : policyRefusal(preRouting);
  if (preRoutingRefusal)
    problems.push(`listener ${listener.name} PreRouting: ${preRoutingRefusal}; the listener answers 500`);
  const telemetry = context.telemetry?.forFrontend(
    listener.frontend,
    { backends: config.backends, namespace: config.gateway.namespace },
    listener.frontendNamespaces,
  );
  const refusedFrontend = refusalText('frontend', listener.frontend, 'frontend.');
  const frontendRefusal = refusedFrontend && `frontend policy ${refusedFrontend}`;
  if (frontendRefusal) problems.push(`listener ${listener.name}: ${frontendRefusal}; the listener answers 500`);
  const connectionRefusal =
    connection.problems.length > 0 ? `frontend policy ${connection.problems.join('; ')}` : undefined;
  if (connectionRefusal) problems.push(`listener ${listener.name}: ${connectionRefusal}; the listener answers 500`);
  for (const problem of telemetry?.problems ?? []) problems.push(`listener ${listener.name} frontend: ${problem}`);
  const hostname = listener.hostname?.toLowerCase();
  return {
    config: listener,
    table,
    rules,
    modelRule,
    preRouting,
    telemetry,
    maxBufferBytes: scope.maxBufferBytes,
    refused: frontendRefusal ?? connectionRefusal ?? preRoutingRefusal,
    hostname: hostname?.startsWith('*.') ? hostname.slice(1) : hostname,
    connection: connection.options,
    mcpOAuth: mcpOAuthRoutes(mcpEndpoints, preRoutingMcpOAuth.endpoint, table),
  };
}

/**
 * A rule: its filters, traffic policies and backends (its backendRefs by weight, or its GwModels).
 * A listener's models are a rule too: of no route, matching what no route matches.
 */
function compileRule(
  compiling: Compiling,
  scope: ListenerScope,
  rule: RuleConfig,
  route: string,
  namespace: string,
  where: string,
): { rule: CompiledRule; mcpEndpoint: McpOAuthEndpoint | undefined } {
  const { config, context, problems } = compiling;
  const filters = compileRuleFilters(rule);
  for (const problem of filters.rule.problems) problems.push(`${where} filter ${problem.type}: ${problem.message}`);
  const gatewayScope = `Gateway ${config.gateway.namespace}/${config.gateway.name} ${where}`;
  const policyContext: PolicyCompileContext = {
    path: 'traffic',
    namespace,
    data: compiling.data,
    backends: config.backends,
    namespaces: rule.trafficNamespaces,
    scope: gatewayScope,
    owner: (field) => rule.trafficSources?.[field] ?? gatewayScope,
    runtime: context.policyRuntime,
  };
  const mcpOAuth = withMcpOAuth(rule, config, compileTraffic(rule.traffic, policyContext), policyContext);
  const policies = mcpOAuth.policies;
  const refused = trafficRefusal(rule, config) ?? policyRefusal(policies);
  if (refused) problems.push(`${where}: ${refused}; the rule answers 500`);
  const backends: CompiledBackendRef[] = rule.models
    ? [
        {
          weight: 1,
          filters: compileFilters(undefined, rule.matches),
          ...compileModels(compiling, rule.models, namespace, `${gatewayScope} GwModel *`, where),
          name: 'GwModel *',
        },
      ]
    : rule.backendRefs.map((ref, index) => {
        const refFilters = filters.backendRefs[index]!;
        for (const problem of refFilters.problems)
          problems.push(`${where} backendRef ${index} filter ${problem.type}: ${problem.message}`);
        return {
          weight: ref.weight,
          filters: refFilters,
          ...compileRef(compiling, ref, `${gatewayScope} ${ref.backend}`, where),
          name: ref.backend,
        };
      });
  const timeouts = rule.timeouts ?? {};
  const requestTimeoutMs = timeouts.request ? durationMs(timeouts.request) : policies.forwarding.requestTimeoutMs;
  const backendRequestTimeoutMs = timeouts.backendRequest ? durationMs(timeouts.backendRequest) : undefined;
  const cors = [rule.traffic.cors, scope.preRoutingCors].filter((value): value is CORS => value !== undefined);
  return {
    rule: {
      config: rule,
      route,
      filters: filters.rule,
      backends: compileWeightedChoice(backends),
      context: {
        maxBufferBytes: scope.maxBufferBytes,
        requestTimeoutMs,
        backendRequestTimeoutMs,
        timeoutMs: shorterTimeout(requestTimeoutMs, backendRequestTimeoutMs),
        forwarding: policies.forwarding,
        cors,
        preserveHeaderCase: scope.preserveHeaderCase,
      },
      policies,
      refused,
    },
    mcpEndpoint: mcpOAuth.endpoint,
  };
}

/** What the registry refuses in a rule's traffic policy, at the place of each kind of backend it serves. */
function trafficRefusal(rule: RuleConfig, config: DataPlaneConfig): string | undefined {
  const lines = new Set<string>();
  for (const place of trafficPlaces(rule, config.backends)) {
    for (const refusal of refusalsIn(place, rule.traffic)) lines.add(`traffic.${refusal.path}: ${refusal.reason}`);
  }
  return lines.size > 0 ? `traffic policy ${[...lines].join('; ')}` : undefined;
}

/**
 * What the registry refuses for one backendRef: the backend's spec (its kind, its providers), the
 * effective backend policy, and what each AI provider or MCP target sets itself.
 */
function backendRefusalText(ref: BackendRefConfig, object: BackendObjectConfig): string | undefined {
  const found: string[] = [];
  if (object.kind === 'GwBackend') {
    const spec = refusalText('backend-spec', object.spec, 'spec.');
    if (spec) found.push(`${ref.backend} ${spec}`);
  }
  const policy = refusalText(backendPlace(object), ref.policy, 'backend.');
  if (policy) found.push(`backend policy ${policy}`);
  const place = sectionPlace(object);
  for (const [name, section] of Object.entries(ref.sections ?? {})) {
    if (!place) break;
    const own = refusalText(place, sectionOwnFields(section, ref.policy), 'backend.');
    if (own) found.push(`backend policy of ${name} ${own}`);
  }
  return found.length > 0 ? found.join('; ') : undefined;
}

/** A backend as a rule uses it: what serves its requests and the backend request policies before it. */
interface BackendWithPolicies {
  backend: Backend;
  policies: CompiledBackendPolicies;
  subBackendPolicies?: { readonly transformsResponseBody: boolean };
}

/** The backend of one backendRef, or what answers for it when it cannot be served. */
function compileRef(compiling: Compiling, ref: BackendRefConfig, scope: string, where: string): BackendWithPolicies {
  const object = compiling.config.backends[ref.backend];
  const type = object ? backendTypeOf(object) : 'unknown';
  const refuse = (message: string) => {
    compiling.problems.push(`${where} ${ref.backend}: ${message}`);
    return {
      backend: new RefusedBackend(type, 500, message, refusedAnswersOf(object, ref)),
      policies: NO_BACKEND_POLICIES,
    };
  };
  if (ref.problem) return refuse(`backend ${ref.backend}: ${ref.problem}`);
  if (!object) return refuse(`backend ${ref.backend} is not in the configuration`);
  const refused = backendRefusalText(ref, object);
  if (refused) return refuse(refused);
  const namespace = namespaceOfKey(ref.backend);
  // What runs at the seam, and what each provider or MCP target runs on its own calls (decision 0045).
  const placement = placeRequestPolicies(ref, servedKindOf(object));
  const policies = compileBackendPolicies(
    placement.backend,
    { namespace, namespaces: ref.policyNamespaces, scope, sources: ref.policySources },
    policyBase(compiling),
  );
  const unusable = backendPolicyProblem(policies);
  if (unusable) return refuse(unusable);
  const subBackendPolicies = new Map<string, CompiledBackendPolicies>();
  for (const [section, policy] of placement.sections) {
    const compiled = compileBackendPolicies(
      policy,
      {
        namespace,
        namespaces: ref.sectionNamespaces?.[section],
        scope: `${scope} section ${section}`,
        sources: ref.sectionSources?.[section],
      },
      policyBase(compiling),
    );
    const problem = backendPolicyProblem(compiled);
    if (problem) return refuse(`${problem} (of ${section})`);
    if (compiled.steps.length > 0) subBackendPolicies.set(section, compiled);
  }
  const compiled = compileBackendRef({
    key: ref.backend,
    namespace,
    name: ref.backend.slice(ref.backend.lastIndexOf('/') + 1),
    object,
    ref,
    subBackendPolicies,
    context: compiling.backends,
  });
  if (isRefusal(compiled)) {
    compiling.problems.push(`${where} ${ref.backend}: ${compiled.message}`);
    return {
      backend: new RefusedBackend(type, compiled.status, compiled.message, refusedAnswersOf(object, ref)),
      policies: NO_BACKEND_POLICIES,
    };
  }
  if (subBackendPolicies.size === 0) return { backend: compiled, policies };
  const transformsBody = [...placement.sections.values()].some((policy) =>
    transformsResponseBody(policy.transformation),
  );
  return { backend: compiled, policies, subBackendPolicies: { transformsResponseBody: transformsBody } };
}

/**
 * The GwModels a rule or listener serves, or what answers for them when the backend policy on the
 * way is refused. A GwModel's own policies set neither extAuth nor transformation (ModelPolicies),
 * so the way's policy alone gives them; its references resolve in `namespace` (the route's, or
 * the Gateway's for a listener's models) unless a field came from another.
 */
function compileModels(
  compiling: Compiling,
  models: ModelsConfig,
  namespace: string,
  scope: string,
  where: string,
): BackendWithPolicies {
  const refused = refusalText('backend:models', models.policy, 'backend.');
  const policies = refused
    ? NO_BACKEND_POLICIES
    : compileBackendPolicies(
        models.policy,
        { namespace, namespaces: models.policyNamespaces, scope, sources: models.policySources },
        policyBase(compiling),
      );
  const unusable = backendPolicyProblem(policies);
  const compiled = refused
    ? backendRefusal(`backend policy ${refused}`)
    : unusable
      ? backendRefusal(unusable)
      : compileModelsBackend({ models, context: compiling.backends });
  if (!isRefusal(compiled)) return { backend: compiled, policies };
  compiling.problems.push(`${where} GwModels: ${compiled.message}`);
  return {
    backend: new RefusedBackend('ai', compiled.status, compiled.message, refusedModelAnswers()),
    policies: NO_BACKEND_POLICIES,
  };
}

/** What every policy compiled in this configuration shares: its data, backends and long-lived state. */
function policyBase(compiling: Compiling): Pick<PolicyCompileContext, 'data' | 'backends' | 'runtime'> {
  return { data: compiling.data, backends: compiling.config.backends, runtime: compiling.context.policyRuntime };
}

/** A rule's (or PreRouting) traffic policies with what MCP OAuth adds, and its MCP OAuth endpoint. */
interface WithMcpOAuth {
  policies: CompiledTraffic;
  endpoint: McpOAuthEndpoint | undefined;
}

/**
 * MCP OAuth of a rule (docs/policies/mcp-oauth.md): the endpoint of traffic.jwtAuthentication.mcp,
 * else of the deprecated backend.mcp.authentication of the rule's MCP backends — whose JWT check
 * then runs after the rule's traffic policies. What cannot be used joins the policies' problems.
 */
function withMcpOAuth(
  rule: RuleConfig,
  config: DataPlaneConfig,
  policies: CompiledTraffic,
  context: PolicyCompileContext,
): WithMcpOAuth {
  const traffic = withTrafficMcpEndpoint(rule.traffic, policies, context);
  const backends = rule.backendRefs.map((ref) => ({
    key: ref.backend,
    object: config.backends[ref.backend],
    policy: ref.policy,
  }));
  const backendAuth = compileMcpBackendAuthentication(backends, context);
  if (backendAuth === undefined) return traffic;
  if (isProblem(backendAuth))
    return { ...traffic, policies: { ...traffic.policies, problems: [...traffic.policies.problems, backendAuth] } };
  const step = { field: 'backend.mcp.authentication', run: backendAuth.step };
  return {
    policies: { ...traffic.policies, afterFilters: [...traffic.policies.afterFilters, step] },
    endpoint: traffic.endpoint ?? backendAuth.endpoint,
  };
}

/** The MCP OAuth endpoint of traffic.jwtAuthentication.mcp in `traffic`, if any. */
function withTrafficMcpEndpoint(
  traffic: TrafficConfig,
  policies: CompiledTraffic,
  context: PolicyCompileContext,
): WithMcpOAuth {
  const endpoint = compileTrafficMcpEndpoint(traffic, context);
  if (!isProblem(endpoint)) return { policies, endpoint };
  return { policies: { ...policies, problems: [...policies.problems, endpoint] }, endpoint: undefined };
}

/** What the request handler asks before routing, when the listener has MCP OAuth endpoints. */
function mcpOAuthRoutes(
  byRule: ReadonlyMap<RuleConfig, RoutedEndpoint>,
  preRouting: McpOAuthEndpoint | undefined,
  table: RouteTable,
): McpOAuthRoutes | undefined {
  if (byRule.size === 0 && preRouting === undefined) return undefined;
  const listenerWide = preRouting && { endpoint: preRouting, route: '', rule: '' };
  return new McpOAuthRoutes(byRule, listenerWide, table);
}
