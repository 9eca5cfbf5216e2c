// The `mcp` backend kind: an `mcp` GwBackend compiled once per configuration (targets, naming,
// session key, the policy hooks) and served per request by the client's transport — the legacy
// HTTP+SSE transport on paths ending in /sse, Streamable HTTP everywhere else — once its Origin
// has passed the DNS-rebinding check.
import { fieldNamespace } from '../../contract/dataplane-config.ts';
import {
  type Backend,
  type BackendKind,
  type BackendRefInput,
  type BackendRefusal,
  backendRefusal,
  type RoutedRequest,
} from '../backends/backend.ts';
import { isProblem } from '../policies/types.ts';
import { sendRpcError } from './client-input.ts';
import { ErrorCode, errorMessage } from './jsonrpc.ts';
import { namingFor } from './naming.ts';
import { refusedOrigin } from './origin-check.ts';
import { compileMcpPolicy } from './policies/compile.ts';
import type { McpBackend, McpSession } from './session.ts';
import { SessionRegistry } from './session-registry.ts';
import { SessionKeys } from './session-seal.ts';
import { isLegacySseRequest, serveLegacySse } from './sse-server.ts';
import { serveStreamable } from './streamable-server.ts';
import { compileTargets } from './targets.ts';

/** The `mcp` kind: a GwBackend reached through one backendRef (its effective policies are the ref's). */
export const mcpKind: BackendKind<BackendRefInput> = {
  compile(input: BackendRefInput): Backend | BackendRefusal {
    const { context, key } = input;
    const spec = input.object.kind === 'GwBackend' ? input.object.spec.mcp : undefined;
    if (!spec) return backendRefusal(`${key} is not an mcp backend`);
    const targets = compileTargets(input, spec);
    if (!Array.isArray(targets)) return backendRefusal(`${key} spec.mcp.${targets.field}: ${targets.message}`);
    // MCP session keys: SESSION_KEY, else one per Gateway for the life of this data plane.
    const sealer = context.lifetime('mcp-session-keys', () => new SessionKeys()).sealerFor(context.gateway);
    if (typeof sealer === 'string') return backendRefusal(sealer);
    // The effective backend policy's `mcp` (authentication excepted: a request step before this backend).
    const hooks = compileMcpPolicy(input.ref.policy.mcp, {
      backends: context.backends,
      namespace: fieldNamespace(input.ref.policyNamespaces, 'mcp', input.namespace),
      runtime: context.runtime,
    });
    if (isProblem(hooks)) return backendRefusal(`${key} backend policy ${hooks.field}: ${hooks.message}`);
    const sessions = context.runtime.use(
      `mcp-sessions ${context.gateway} ${key}`,
      () => new SessionRegistry<McpSession>(context.runtime.clock.monotonicMs),
    );
    return new McpGatewayBackend({
      name: `${input.namespace}/${input.name}`,
      binding: `${context.gateway}|${key}`,
      targets: new Map(targets.map((target) => [target.name, target])),
      naming: namingFor(spec.prefixMode ?? 'Conditional', targets.length),
      sessionRouting: spec.sessionRouting ?? 'Stateful',
      failureMode: spec.failureMode ?? 'FailClosed',
      sealer,
      sessions,
      hooks,
    });
  },
};

/** An MCP backend on the request path: the client's transport over the multiplexer. */
class McpGatewayBackend implements Backend {
  readonly type = 'mcp';
  readonly #backend: McpBackend;

  constructor(backend: McpBackend) {
    this.#backend = backend;
  }

  async serve(routed: RoutedRequest): Promise<void> {
    const refused = refusedOrigin(routed);
    if (refused !== undefined)
      return void sendRpcError(
        routed.res,
        403,
        errorMessage(null, ErrorCode.ConnectionClosed, `Forbidden: ${refused}`),
      );
    if (isLegacySseRequest(routed)) return serveLegacySse(routed, this.#backend);
    return serveStreamable(routed, this.#backend);
  }
}
