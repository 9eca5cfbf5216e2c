// The MCP servers behind an `mcp` GwBackend, compiled once per configuration: static targets
// (a host, or a Service of the backend's namespace) and the Services selector targets chose
// (listed by the controller, one target per MCP port), each with its effective connection policy
// (GwPolicy < GwBackend < target, merged by the controller into the backendRef's sections) turned
// into a shared connection pool and backend auth.

import type { Pool } from 'undici';
import type { BackendFull } from '../../api/types/backend-policies.ts';
import type { MCPBackend } from '../../api/types/mcp.ts';
import type { BackendPolicyConfig, McpSelectedService } from '../../contract/dataplane-config.ts';
import { fieldNamespace, sectionNamespaces } from '../../contract/dataplane-config.ts';
import { AuthConfigError, type CompiledBackendAuth, compileBackendAuth } from '../auth/backend/index.ts';
import { backendAuthOptions } from '../backends/auth-options.ts';
import type { BackendRefInput } from '../backends/backend.ts';
import type { CompiledBackendPolicies } from '../backends/backend-policies.ts';
import type { NamedStep } from '../policies/pipeline.ts';
import { ConnectionSettingsError, connectionSettings, type Destination } from '../upstream/connection-settings.ts';
import { serviceDestination } from '../upstream/destinations.ts';
import { MESH_ROUTE_BACKENDS_ONLY } from '../upstream/mesh-refusals.ts';

export type McpPrefixMode = 'Conditional' | 'Always' | 'Never';
export type McpProtocol = 'StreamableHTTP' | 'SSE';

/** One MCP server gw talks to. */
export interface McpTarget {
  /** Routing name: the McpTargetSelector name, or a discovered Service's name. */
  readonly name: string;
  readonly protocol: McpProtocol;
  /** Path (and query) of the MCP endpoint (StreamableHTTP) or of the SSE stream (SSE). */
  readonly path: string;
  readonly origin: string;
  /**
   * The target's connection pool, looked up at each use: an MCP session outlives the configuration
   * it started under, and a newer configuration closes the pools it no longer uses.
   */
  readonly pool: () => Pool;
  readonly auth: CompiledBackendAuth | undefined;
  /** BackendHTTP.requestTimeout of the target's policy, if any. */
  readonly requestTimeoutMs: number | undefined;
  /** The server itself (origin, path, transport): an upstream session is only resumed on the same one. */
  readonly identity: string;
  /** The target's own extAuth and transformation, run on each request gw sends it (decision 0045). */
  readonly requestPolicies?: readonly NamedStep[];
}

/** appProtocol values of Service ports that serve MCP (gw's, and agentgateway's for Services labelled for it). */
const APP_PROTOCOLS: Record<string, McpProtocol> = {
  'gw.dev/mcp': 'StreamableHTTP',
  'gw.dev/mcp-sse': 'SSE',
  'agentgateway.dev/mcp': 'StreamableHTTP',
  'agentgateway.dev/mcp-sse': 'SSE',
};

/** A target name must be a section name: no '_' or '+', which end the prefix in names and URIs. */
const TARGET_NAME = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

export function defaultPath(protocol: McpProtocol): string {
  return protocol === 'SSE' ? '/sse' : '/mcp';
}

type Problem = { field: string; message: string };

/** The targets of an `mcp` GwBackend, or the first problem (a field path under spec.mcp and what to fix). */
export function compileTargets(input: BackendRefInput, spec: MCPBackend): McpTarget[] | Problem {
  const targets: McpTarget[] = [];
  const taken = new Set<string>();
  for (const [index, target] of spec.targets.entries()) {
    const field = `targets[${index}]`;
    // The target's effective connection policy (the fields that do not apply to a target are
    // refused before: contract/enforcement, place backend:mcp-target); its own request policies
    // were compiled with the backendRef's (decision 0045).
    const policy = input.ref.sections?.[target.name] ?? input.ref.policy;
    if (target.static) {
      const s = target.static;
      const protocol = s.protocol ?? 'StreamableHTTP';
      let destination: Destination | string;
      if (s.host !== undefined) {
        destination = { protocol: policy.tls !== undefined ? 'https:' : 'http:', host: s.host, port: s.port };
      } else {
        const key = `Service ${input.namespace}/${s.backendRef!.name}`;
        const service = input.context.backends[key];
        destination =
          service?.kind !== 'Service'
            ? `${key} does not exist`
            : service.mesh
              ? `${key} ${MESH_ROUTE_BACKENDS_ONLY}`
              : serviceDestination(service.spec, s.port, policy.tls !== undefined);
      }
      if (typeof destination === 'string') return { field: `${field}.static`, message: destination };
      const built = buildTarget(
        target.name,
        protocol,
        s.path ?? defaultPath(protocol),
        destination,
        policy,
        input,
        input.subBackendPolicies?.get(target.name),
      );
      if ('message' in built) return { field: `${field}.${built.field}`, message: built.message };
      targets.push(built);
      taken.add(target.name);
      continue;
    }
    for (const selected of input.ref.mcpServices?.[target.name] ?? []) {
      const own = input.subBackendPolicies?.get(target.name);
      const built = discoveredTargets(selected, policy, input, taken, own);
      if ('message' in built) return { field: `${field}.selector`, message: built.message };
      targets.push(...built);
    }
  }
  return targets;
}

/** The targets of one Service a selector chose: one per port whose appProtocol says MCP. */
function discoveredTargets(
  selected: McpSelectedService,
  policy: BackendPolicyConfig,
  input: BackendRefInput,
  taken: Set<string>,
  own: CompiledBackendPolicies | undefined,
): McpTarget[] | Problem {
  const service = input.context.backends[selected.service];
  if (service?.kind !== 'Service') return [];
  if (service.mesh) return { field: 'selector', message: `${selected.service} ${MESH_ROUTE_BACKENDS_ONLY}` };
  const [namespace, serviceName] = selected.service.slice('Service '.length).split('/') as [string, string];
  const ports = (service.spec.ports ?? [])
    .map((port) => ({ port, protocol: APP_PROTOCOLS[port.appProtocol ?? ''] }))
    .filter((entry): entry is { port: (typeof entry)['port']; protocol: McpProtocol } => entry.protocol !== undefined);
  const out: McpTarget[] = [];
  for (const { port, protocol } of ports) {
    const base =
      selected.targetName && ports.length === 1
        ? selected.targetName
        : `${selected.targetName ?? serviceName}-${port.name ?? port.port}`;
    // The same Service name in two namespaces: the second is told apart by its namespace.
    const name = taken.has(base) ? `${namespace}-${base}` : base;
    if (!TARGET_NAME.test(name) || taken.has(name)) continue;
    const destination = serviceDestination(service.spec, port.port, policy.tls !== undefined);
    if (typeof destination === 'string') continue; // a Service gw cannot reach outside a cluster is left out
    const built = buildTarget(name, protocol, selected.path ?? defaultPath(protocol), destination, policy, input, own);
    if ('message' in built) return { field: built.field, message: `${selected.service}: ${built.message}` };
    taken.add(name);
    out.push(built);
  }
  return out;
}

function buildTarget(
  name: string,
  protocol: McpProtocol,
  path: string,
  destination: Destination,
  policy: BackendFull,
  input: BackendRefInput,
  own: CompiledBackendPolicies | undefined,
): McpTarget | Problem {
  const { context } = input;
  // A field set by a GwPolicy of another namespace (on the Gateway, a route) resolves there.
  const namespaces = sectionNamespaces(input.ref, name);
  let settings: ReturnType<typeof connectionSettings>;
  try {
    settings = connectionSettings(
      destination,
      policy,
      context.data,
      fieldNamespace(namespaces, 'tls', input.namespace),
      { backends: context.backends, namespace: fieldNamespace(namespaces, 'tunnel', input.namespace) },
    );
  } catch (error) {
    if (error instanceof ConnectionSettingsError) return { field: `policies.${error.field}`, message: error.message };
    throw error;
  }
  context.pool(settings); // recorded as used by this configuration (created now, kept warm across swaps)
  let auth: CompiledBackendAuth | undefined;
  if (policy.auth !== undefined) {
    const authNamespace = fieldNamespace(namespaces, 'auth', input.namespace);
    const compiled = compileBackendAuth(
      policy.auth,
      context.data,
      authNamespace,
      backendAuthOptions(context, authNamespace, { host: settings.socket.host }),
    );
    if (compiled instanceof AuthConfigError)
      return { field: `policies.auth.${compiled.field}`, message: compiled.message };
    auth = compiled;
  }
  const normalizedPath = path.startsWith('/') ? path : `/${path}`;
  return {
    name,
    protocol,
    path: normalizedPath,
    origin: settings.origin,
    pool: () => context.currentPool(settings),
    auth,
    requestTimeoutMs: settings.requestTimeoutMs,
    identity: `${protocol} ${settings.origin}${normalizedPath}`,
    ...(own ? { requestPolicies: own.steps } : {}),
  };
}
