// Compiles a Gateway's data-plane configuration once, when it arrives: route tables, filters,
// weighted backend choices, connection pools, AI backends. Requests then only look things up in
// the compiled form. Anything that cannot be used is compiled into an error answer for the
// requests that reach it (and a problem line for the log), never a crash.

import type { IncomingHttpHeaders } from 'node:http';
import type { Pool } from 'undici';
import type { Frontend } from '../../api/types/frontend.ts';
import type {
  BackendRefConfig,
  DataPlaneConfig,
  ListenerConfig,
  RuleConfig,
} from '../../controller/dataplane-config.ts';
import { byteSize, durationMs } from '../../util/units.ts';
import type { AiBackend } from '../ai/ai-backend.ts';
import { type CompiledModel, compileModels } from '../ai/models.ts';
import type { McpBackend } from '../mcp/backend.ts';
import { compileMcpBackendAuthentication } from '../policies/auth/mcp-oauth/backend-authentication.ts';
import { compileTrafficMcpEndpoint, type McpOAuthEndpoint } from '../policies/auth/mcp-oauth/endpoint.ts';
import { McpOAuthRoutes, type RoutedEndpoint } from '../policies/auth/mcp-oauth/routes.ts';
import { type CompiledTraffic, compileTraffic, NO_TRAFFIC_POLICY } from '../policies/pipeline.ts';
import type { PolicyRuntime } from '../policies/runtime.ts';
import { isProblem, type PolicyCompileContext } from '../policies/types.ts';
import { DEFAULT_MAX_BUFFER_BYTES } from '../proxy/body.ts';
import { type CompiledFilters, compileRuleFilters } from '../routing/filters.ts';
import { compileRouteTable, type RouteTable } from '../routing/route-table.ts';
import { compileWeightedChoice, type WeightedChoice } from '../routing/weighted-choice.ts';
import {
  type ConnectionOptions,
  compileConnectionOptions,
  connectionFieldsKey,
  DEFAULT_CONNECTION_OPTIONS,
} from '../server/listener-options.ts';
import type { FrontendTelemetry, Telemetry } from '../telemetry/request-telemetry.ts';
import type { UpstreamClient } from '../upstream/client.ts';
import {
  type BackendConnectionPolicy,
  type ConnectionSettings,
  ConnectionSettingsError,
  connectionSettings,
  type DataLookup,
} from '../upstream/connection-settings.ts';
import type { UpstreamPools } from '../upstream/pools.ts';
import { serviceDestination, staticDestination } from './http-targets.ts';

/** What serves the requests a backendRef receives. */
export type BackendHandler =
  | { kind: 'http'; settings: ConnectionSettings; pool: Pool; auth: BackendAuthApplier | undefined }
  | { kind: 'ai'; backend: AiBackend }
  | { kind: 'mcp'; backend: McpBackend }
  | { kind: 'error'; status: number; message: string };

/** Applies backend credentials to an upstream request (compiled from the effective auth policy). */
export interface BackendAuthApplier {
  /** Whether apply() may set a query parameter; when false, `query` may be NO_QUERY (auth/backend). */
  readonly writesQuery: boolean;
  apply(
    target: { headers: Record<string, string | string[]>; query: URLSearchParams },
    incoming: { headers: IncomingHttpHeaders },
  ): void;
}

export interface CompiledBackendRef {
  readonly weight: number;
  readonly filters: CompiledFilters;
  readonly handler: BackendHandler;
  /** "GwBackend ns/name" or "Service ns/name", for telemetry. */
  readonly name: string;
}

export interface CompiledRule {
  readonly config: RuleConfig;
  readonly route: string;
  readonly filters: CompiledFilters;
  readonly backends: WeightedChoice<CompiledBackendRef>;
  /** HTTPRoute timeouts.request: the whole exchange. */
  readonly requestTimeoutMs: number | undefined;
  /** HTTPRoute timeouts.backendRequest: each upstream attempt. */
  readonly backendRequestTimeoutMs: number | undefined;
  /** Models attached to this rule (a GwModel "*" backend), keys into the configuration's models. */
  readonly models: readonly string[] | undefined;
  /** The effective PostRouting traffic policy. */
  readonly policies: CompiledTraffic;
  /** Why the rule cannot be served as configured (a traffic policy that cannot be used): answered with 500. */
  readonly refused: string | undefined;
}

export interface CompiledListener {
  readonly config: ListenerConfig;
  readonly table: RouteTable;
  readonly rules: ReadonlyMap<RuleConfig, CompiledRule>;
  /** The Gateway's compiled GwModels (rules and the listener name theirs by key). */
  readonly models: ReadonlyMap<string, CompiledModel>;
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

/** The parts of the proxy the compiler needs (and the AI backend compiler it delegates to). */
export interface CompileContext {
  pools: UpstreamPools;
  /** State of traffic policies kept across configurations. */
  policyRuntime: PolicyRuntime;
  telemetry?: Telemetry;
  compileAiBackend?: (input: AiBackendInput) => BackendHandler;
  compileMcpBackend?: (input: McpBackendInput) => BackendHandler;
  compileBackendAuth?: (
    auth: unknown,
    data: DataLookup,
    namespace: string,
    /** Where a key goes when the policy names no location (an LLM provider's own header). */
    keyStyle?: 'bearer' | 'x-api-key',
  ) => BackendAuthApplier | { field: string; message: string } | undefined;
}

export interface AiBackendInput {
  name: string;
  namespace: string;
  spec: Record<string, unknown>;
  ref: BackendRefConfig;
  data: DataLookup;
  context: CompileContext;
  /** The shared pool for these settings, recorded as used by this configuration. */
  pool: (settings: ConnectionSettings) => Pool;
  /** The shared provider client for these settings (UpstreamPools.client), recorded as used. */
  client: (settings: ConnectionSettings) => UpstreamClient;
}

/** The shared upstream pools as one configuration's compile takes them: each is recorded as used. */
interface UpstreamLookup {
  pool: (settings: ConnectionSettings) => Pool;
  client: (settings: ConnectionSettings) => UpstreamClient;
}

export interface McpBackendInput extends AiBackendInput {
  /** The Gateway ("namespace/name"): its session key seals the backend's session ids. */
  gateway: string;
  /** The configuration's Service and GwBackend specs (Services of targets and selectors). */
  backends: DataPlaneConfig['backends'];
}

/**
 * Backend and frontend policy fields this data plane enforces (every field of the API today;
 * traffic fields are listed by the policy pipeline). A field outside these lists — one a newer
 * configuration could carry — is refused, never silently skipped: what it covers answers 500
 * (fail closed) and the reason is logged.
 */
const ENFORCED_BACKEND_FIELDS = new Set(['tcp', 'tls', 'http', 'auth', 'ai', 'health', 'mcp']);
const ENFORCED_FRONTEND_FIELDS = new Set([
  'http',
  'accessLog',
  'metrics',
  'tracing',
  'tcp',
  'networkAuthorization',
  'tls',
  'proxyProtocol',
  'connect',
]);

function unenforced(values: Record<string, unknown> | undefined, enforced: ReadonlySet<string>): string[] {
  return Object.keys(values ?? {}).filter((field) => !enforced.has(field));
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

function hostnameRank(listener: CompiledListener): number {
  const hostname = listener.hostname;
  if (hostname === undefined) return 0;
  return hostname.charCodeAt(0) === 46 ? 1 + hostname.length : 100_000 + hostname.length;
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

function compileGatewayParts(key: string, config: DataPlaneConfig, context: CompileContext): CompiledGateway {
  const problems: string[] = [];
  const poolKeys = new Set<string>();
  const data: DataLookup = (ref) => config.data[ref];
  const pool = (settings: ConnectionSettings) => {
    poolKeys.add(settings.key);
    return context.pools.get(settings);
  };
  const client = (settings: ConnectionSettings) => {
    poolKeys.add(settings.key);
    return context.pools.client(settings);
  };
  const upstreams: UpstreamLookup = { pool, client };
  const models = compileModels(config.models, context, data, client);
  for (const model of models.values())
    if (model.kind === 'error') problems.push(`GwModel ${model.key}: ${model.message}`);
  const ports = new Map<
    number,
    {
      protocol: 'HTTP' | 'HTTPS';
      listeners: CompiledListener[];
      certificates: Map<string, { key: string; cert: string }>;
    }
  >();
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
    port.listeners.push(compileListener(listener, config, context, data, problems, upstreams, models));
  }
  const compiledPorts = new Map<number, CompiledPort>();
  for (const [number, port] of ports) {
    port.listeners.sort((a, b) => hostnameRank(b) - hostnameRank(a));
    const first = port.listeners[0];
    const firstKey = connectionFieldsKey(first?.config.frontend as Frontend | undefined);
    for (const listener of port.listeners.slice(1))
      if (connectionFieldsKey(listener.config.frontend as Frontend) !== firstKey)
        problems.push(
          `listener ${listener.config.name}: its frontend connection settings differ from listener ${first!.config.name}'s; port ${number} applies listener ${first!.config.name}'s`,
        );
    compiledPorts.set(number, { port: number, ...port, connection: first?.connection ?? DEFAULT_CONNECTION_OPTIONS });
  }
  return { key, config, ports: compiledPorts, problems, poolKeys, runtimeKeys: context.policyRuntime.endCompile() };
}

/**
 * Forwarding policies that only the HTTP forwarder applies (retries, response buffering, host
 * rewrite) on a rule with AI or MCP backends, which have their own failover and upstream hosts:
 * said in the log rather than silently ignored.
 */
function httpOnlyForwarding(policies: CompiledTraffic, backends: readonly CompiledBackendRef[]): string[] {
  const fields = [
    policies.forwarding.retry ? 'traffic.retry' : undefined,
    policies.forwarding.responseBuffer ? 'traffic.buffer.response' : undefined,
    policies.forwarding.hostRewrite ? 'traffic.hostRewrite' : undefined,
  ].filter((field) => field !== undefined);
  if (fields.length === 0) return [];
  return backends
    .filter((backend) => backend.handler.kind === 'ai' || backend.handler.kind === 'mcp')
    .map((backend) =>
      backend.handler.kind === 'ai'
        ? `${fields.join(', ')} apply to HTTP backends; ${backend.name} is an AI backend (its own failover, provider hosts and response handling apply)`
        : `${fields.join(', ')} apply to HTTP backends; ${backend.name} is an MCP backend (its targets are reached by the MCP multiplexer)`,
    );
}

/** Frontend.http.maxBufferSize of a listener (default 2 MiB): the most of a body gw buffers. */
function listenerMaxBufferBytes(listener: ListenerConfig): number {
  const size = (listener.frontend.http as { maxBufferSize?: number | string } | undefined)?.maxBufferSize;
  return size !== undefined ? byteSize(size) : DEFAULT_MAX_BUFFER_BYTES;
}

/** What to answer while a traffic policy cannot be used (its problems, field paths first). */
function policyRefusal(policies: CompiledTraffic): string | undefined {
  if (policies.problems.length === 0) return undefined;
  return `traffic policy ${policies.problems.map((problem) => `${problem.field} ${problem.message}`).join('; ')}`;
}

function listenerCertificate(listener: ListenerConfig, data: DataLookup): { key: string; cert: string } | string {
  if (listener.tls?.mode === 'Passthrough') return 'TLS Passthrough is not served by this data plane';
  const ref = listener.tls?.certificates[0];
  if (!ref) return 'an HTTPS listener needs a certificate';
  const secret = data(ref);
  if (!secret?.['tls.crt'] || !secret['tls.key']) return `${ref} needs tls.crt and tls.key`;
  return { key: secret['tls.key'], cert: secret['tls.crt'] };
}

function compileListener(
  listener: ListenerConfig,
  config: DataPlaneConfig,
  context: CompileContext,
  data: DataLookup,
  problems: string[],
  upstreams: UpstreamLookup,
  models: ReadonlyMap<string, CompiledModel>,
): CompiledListener {
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
      const filters = compileRuleFilters(rule);
      for (const problem of filters.rule.problems) problems.push(`${where} filter ${problem.type}: ${problem.message}`);
      const backends = rule.backendRefs.map((ref, refIndex) => {
        const refFilters = filters.backendRefs[refIndex]!;
        for (const problem of refFilters.problems)
          problems.push(`${where} backendRef ${refIndex} filter ${problem.type}: ${problem.message}`);
        const handler = compileBackendRef(ref, namespace, config, context, data, upstreams);
        if (handler.kind === 'error') problems.push(`${where} ${ref.backend}: ${handler.message}`);
        return { weight: ref.weight, filters: refFilters, handler, name: ref.backend };
      });
      const timeouts = (rule.timeouts ?? {}) as { request?: string; backendRequest?: string };
      const scope = `Gateway ${config.gateway.namespace}/${config.gateway.name} ${where}`;
      const policyContext: PolicyCompileContext = {
        path: 'traffic',
        namespace,
        data,
        backends: config.backends,
        scope,
        owner: (field) => rule.trafficSources?.[field] ?? scope,
        runtime: context.policyRuntime,
      };
      const mcpOAuth = withMcpOAuth(rule, config, compileTraffic(rule.traffic, policyContext), policyContext);
      const policies = mcpOAuth.policies;
      if (mcpOAuth.endpoint)
        mcpEndpoints.set(rule, { endpoint: mcpOAuth.endpoint, route: route.route, rule: rule.name ?? '' });
      const refused = policyRefusal(policies);
      if (refused) problems.push(`${where}: ${refused}; the rule answers 500`);
      for (const line of httpOnlyForwarding(policies, backends)) problems.push(`${where}: ${line}`);
      rules.set(rule, {
        config: rule,
        route: route.route,
        filters: filters.rule,
        backends: compileWeightedChoice(backends),
        requestTimeoutMs: timeouts.request ? durationMs(timeouts.request) : policies.forwarding.requestTimeoutMs,
        backendRequestTimeoutMs: timeouts.backendRequest ? durationMs(timeouts.backendRequest) : undefined,
        models: rule.models,
        policies,
        refused,
      });
    });
  }
  const hostname = listener.hostname?.toLowerCase();
  // A rule of no route, no filters and no backends whose requests the listener's models serve.
  const modelRuleConfig: RuleConfig = { matches: [], traffic: {}, backendRefs: [] };
  const modelRule: CompiledRule | undefined =
    listener.models.length > 0
      ? {
          config: modelRuleConfig,
          route: '',
          filters: compileRuleFilters(modelRuleConfig).rule,
          backends: compileWeightedChoice([]),
          requestTimeoutMs: undefined,
          backendRequestTimeoutMs: undefined,
          models: listener.models,
          policies: NO_TRAFFIC_POLICY,
          refused: undefined,
        }
      : undefined;
  const preRoutingScope = `Gateway ${config.gateway.namespace}/${config.gateway.name} listener ${listener.name} PreRouting`;
  const preRoutingContext: PolicyCompileContext = {
    path: 'traffic',
    namespace: config.gateway.namespace,
    data,
    backends: config.backends,
    scope: preRoutingScope,
    owner: (field) => listener.preRoutingSources?.[field] ?? preRoutingScope,
    runtime: context.policyRuntime,
  };
  const preRoutingMcpOAuth = withTrafficMcpEndpoint(
    listener.preRouting ?? {},
    compileTraffic(listener.preRouting ?? {}, preRoutingContext),
    preRoutingContext,
  );
  const preRouting = preRoutingMcpOAuth.policies;
  const preRoutingRefusal = policyRefusal(preRouting);
  if (preRoutingRefusal)
    problems.push(`listener ${listener.name} PreRouting: ${preRoutingRefusal}; the listener answers 500`);
  const telemetry = context.telemetry?.forFrontend(listener.frontend as Frontend, {
    backends: config.backends,
    namespace: config.gateway.namespace,
  });
  const refusedFields = unenforced(listener.frontend, ENFORCED_FRONTEND_FIELDS);
  const frontendRefusal =
    refusedFields.length > 0
      ? `frontend policy ${refusedFields.map((field) => `frontend.${field}`).join(', ')} is not enforced by this data plane yet`
      : undefined;
  if (frontendRefusal) problems.push(`listener ${listener.name}: ${frontendRefusal}; the listener answers 500`);
  const connection = compileConnectionOptions(listener.frontend as Frontend);
  for (const note of connection.notes) problems.push(`listener ${listener.name}: ${note}`);
  const connectionRefusal =
    connection.problems.length > 0 ? `frontend policy ${connection.problems.join('; ')}` : undefined;
  if (connectionRefusal) problems.push(`listener ${listener.name}: ${connectionRefusal}; the listener answers 500`);
  const refused = frontendRefusal ?? connectionRefusal ?? preRoutingRefusal;
  for (const problem of telemetry?.problems ?? []) problems.push(`listener ${listener.name} frontend: ${problem}`);
  return {
    config: listener,
    table,
    rules,
    models,
    modelRule,
    preRouting,
    telemetry,
    maxBufferBytes: listenerMaxBufferBytes(listener),
    refused,
    hostname: hostname?.startsWith('*.') ? hostname.slice(1) : hostname,
    connection: connection.options,
    mcpOAuth: mcpOAuthRoutes(mcpEndpoints, preRoutingMcpOAuth.endpoint, table),
  };
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
    spec: config.backends[ref.backend]?.spec,
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
  traffic: Readonly<Record<string, unknown>>,
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

function compileBackendRef(
  ref: BackendRefConfig,
  routeNamespace: string,
  config: DataPlaneConfig,
  context: CompileContext,
  data: DataLookup,
  upstreams: UpstreamLookup,
): BackendHandler {
  if (ref.problem) return { kind: 'error', status: 500, message: `backend ${ref.backend}: ${ref.problem}` };
  const backend = config.backends[ref.backend];
  if (!backend) return { kind: 'error', status: 500, message: `backend ${ref.backend} is not in the configuration` };
  const namespace = ref.backend.slice(ref.backend.indexOf(' ') + 1).split('/')[0] ?? routeNamespace;
  const policy = ref.policy as BackendConnectionPolicy & { auth?: unknown };
  const spec = (backend.spec ?? {}) as Record<string, unknown>;
  const notEnforced = unenforced(ref.policy, ENFORCED_BACKEND_FIELDS);
  if (notEnforced.length > 0) {
    const fields = notEnforced.map((field) => `backend.${field}`).join(', ');
    return { kind: 'error', status: 500, message: `backend policy ${fields} is not enforced by this data plane yet` };
  }
  try {
    const destination =
      backend.kind === 'Service'
        ? serviceDestination(spec, ref.port, policy.tls !== undefined)
        : spec.static
          ? staticDestination(spec.static as Record<string, never>, policy.tls !== undefined)
          : undefined;
    if (typeof destination === 'string') return { kind: 'error', status: 500, message: destination };
    if (destination) {
      const settings = connectionSettings(destination, policy, data, namespace);
      return httpHandler(settings, policy, data, namespace, context, upstreams.pool);
    }
    // What an AI or MCP backend compiler gets besides its name.
    const backendInput = () => ({
      namespace,
      spec,
      ref,
      data,
      context,
      pool: upstreams.pool,
      client: upstreams.client,
    });
    if (spec.ai) {
      if (!context.compileAiBackend) return { kind: 'error', status: 500, message: 'AI backends are not available' };
      const name = ref.backend.slice(ref.backend.indexOf(' ') + 1);
      return context.compileAiBackend({ name, ...backendInput() });
    }
    if (spec.mcp) {
      if (!context.compileMcpBackend) return { kind: 'error', status: 500, message: 'MCP backends are not available' };
      const name = ref.backend.slice(ref.backend.indexOf(' ') + 1).split('/')[1]!;
      const gateway = `${config.gateway.namespace}/${config.gateway.name}`;
      return context.compileMcpBackend({ name, ...backendInput(), gateway, backends: config.backends });
    }
    const kind = Object.keys(spec).find((field) => field !== 'policies') ?? 'unknown';
    return { kind: 'error', status: 501, message: `GwBackend kind "${kind}" is not served by this data plane yet` };
  } catch (error) {
    if (error instanceof ConnectionSettingsError)
      return { kind: 'error', status: 500, message: `backend policy ${error.field}: ${error.message}` };
    throw error;
  }
}

function httpHandler(
  settings: ConnectionSettings,
  policy: { auth?: unknown },
  data: DataLookup,
  namespace: string,
  context: CompileContext,
  pool: (settings: ConnectionSettings) => Pool,
): BackendHandler {
  let auth: BackendAuthApplier | undefined;
  if (policy.auth !== undefined && context.compileBackendAuth) {
    const compiled = context.compileBackendAuth(policy.auth, data, namespace);
    if (compiled && 'message' in compiled)
      return { kind: 'error', status: 500, message: `backend policy auth.${compiled.field}: ${compiled.message}` };
    auth = compiled;
  }
  return { kind: 'http', settings, pool: pool(settings), auth };
}
