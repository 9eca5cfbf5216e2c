// An `mcp` GwBackend on the request path: compiled once per configuration (targets, naming,
// session key, the policy hooks) and served per request by the client's transport — the legacy
// HTTP+SSE transport on paths ending in /sse, Streamable HTTP everywhere else — once its Origin
// has passed the DNS-rebinding check.
import type { BackendMCP } from '../../api/types/mcp.ts';
import type { BackendHandler, McpBackendInput } from '../config/compile.ts';
import { isProblem } from '../policies/types.ts';
import type { RoutedRequest } from '../proxy/request-handler.ts';
import { sendRpcError } from './client-input.ts';
import type { McpPolicyHooks } from './hooks.ts';
import { ErrorCode, errorMessage } from './jsonrpc.ts';
import { type Naming, namingFor } from './naming.ts';
import { refusedOrigin } from './origin-check.ts';
import { compileMcpPolicy } from './policies/compile.ts';
import { SessionRegistry } from './session-registry.ts';
import type { SessionKeys, SessionSealer } from './session-seal.ts';
import { isLegacySseRequest, serveLegacySse } from './sse-server.ts';
import { serveStreamable } from './streamable-server.ts';
import { compileTargets, type McpPrefixMode, type McpTarget } from './targets.ts';

export interface McpBackend {
  /** "namespace/name" of the GwBackend. */
  readonly name: string;
  /** What session ids are bound to: the Gateway and the backend (an id of another is not valid here). */
  readonly binding: string;
  /** Targets by name, in the order the backend lists them. */
  readonly targets: ReadonlyMap<string, McpTarget>;
  readonly naming: Naming;
  readonly sessionRouting: 'Stateful' | 'Stateless';
  readonly failureMode: 'FailClosed' | 'FailOpen';
  readonly sealer: SessionSealer;
  /** Sessions held by this replica (shared by every configuration that has this backend). */
  readonly sessions: SessionRegistry;
  /** Authorization and guardrails of the backend's `mcp` policy (docs/mcp.md "Authorization", "Guardrails"). */
  readonly hooks: McpPolicyHooks;
}

interface McpSpec {
  sessionRouting?: 'Stateful' | 'Stateless';
  failureMode?: 'FailClosed' | 'FailOpen';
  prefixMode?: McpPrefixMode;
}

/** Compiles an `mcp` GwBackend reached through one backendRef (its effective policies are the ref's). */
export function compileMcpBackend(input: McpBackendInput, keys: SessionKeys): BackendHandler {
  const where = `GwBackend ${input.namespace}/${input.name}`;
  const spec = input.spec.mcp as McpSpec;
  const targets = compileTargets(input);
  if (!Array.isArray(targets))
    return { kind: 'error', status: 500, message: `${where} spec.mcp.${targets.field}: ${targets.message}` };
  const sealer = keys.sealerFor(input.gateway);
  if (typeof sealer === 'string') return { kind: 'error', status: 500, message: sealer };
  // The effective backend policy's `mcp` (authentication excepted: a request step before this backend).
  const hooks = compileMcpPolicy((input.ref.policy as { mcp?: BackendMCP }).mcp, {
    backends: input.backends,
    namespace: input.namespace,
    runtime: input.context.policyRuntime,
  });
  if (isProblem(hooks))
    return { kind: 'error', status: 500, message: `${where} backend policy ${hooks.field}: ${hooks.message}` };
  const backendKey = `GwBackend ${input.namespace}/${input.name}`;
  const sessions = input.context.policyRuntime.use(
    `mcp-sessions ${input.gateway} ${backendKey}`,
    () => new SessionRegistry(),
  );
  return {
    kind: 'mcp',
    backend: {
      name: `${input.namespace}/${input.name}`,
      binding: `${input.gateway}|${backendKey}`,
      targets: new Map(targets.map((target) => [target.name, target])),
      naming: namingFor(spec.prefixMode ?? 'Conditional', targets.length),
      sessionRouting: spec.sessionRouting ?? 'Stateful',
      failureMode: spec.failureMode ?? 'FailClosed',
      sealer,
      sessions,
      hooks,
    },
  };
}

/** Serves a request routed to an MCP backend. */
export async function serveMcp(routed: RoutedRequest, backend: McpBackend): Promise<void> {
  routed.record.backendType = 'mcp';
  const refused = refusedOrigin(routed);
  if (refused !== undefined)
    return void sendRpcError(routed.res, 403, errorMessage(null, ErrorCode.ConnectionClosed, `Forbidden: ${refused}`));
  if (isLegacySseRequest(routed)) return serveLegacySse(routed, backend);
  return serveStreamable(routed, backend);
}
