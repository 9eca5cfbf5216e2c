// The `mcp` backend policy (BackendMCP) of an MCP backend as the multiplexer's hooks:
// `authorization` decides per listed or named item, `guardrails` are remote processors run in
// order on requests and responses. `authentication` (deprecated) is not here: it is a request
// step before the backend (src/dataplane/policies/auth/mcp-oauth), wired from the rule's
// backendRefs, and must not run twice.
import type { BackendMCP } from '../../../api/types/mcp.ts';
import { compileAuthorizationRule } from '../../policies/auth/authorization.ts';
import { isProblem, type PolicyCompileContext, type PolicyProblem } from '../../policies/types.ts';
import { type McpGuard, type McpPolicyHooks, NO_MCP_POLICY } from '../hooks.ts';
import { authorizationHooks } from './authorization.ts';
import { compileProcessor } from './guardrail-processor.ts';

export type McpPolicyContext = Pick<PolicyCompileContext, 'backends' | 'namespace' | 'runtime'>;

/** The hooks of an MCP backend's effective `mcp` policy; a problem's field is under `backend.mcp`. */
export function compileMcpPolicy(
  policy: BackendMCP | undefined,
  context: McpPolicyContext,
): McpPolicyHooks | PolicyProblem {
  if (!policy || (!policy.authorization && !policy.guardrails)) return NO_MCP_POLICY;
  let items: Pick<McpPolicyHooks, 'filterListItem' | 'checkItem'> = NO_MCP_POLICY;
  if (policy.authorization) {
    const rule = compileAuthorizationRule(policy.authorization, 'backend.mcp.authorization');
    if (isProblem(rule)) return rule;
    items = authorizationHooks(rule);
  }
  const guards: McpGuard[] = [];
  for (const [index, processor] of (policy.guardrails?.processors ?? []).entries()) {
    const guard = compileProcessor(processor, context, `backend.mcp.guardrails.processors[${index}]`);
    if (isProblem(guard)) return guard;
    guards.push(guard);
  }
  return { filterListItem: items.filterListItem, checkItem: items.checkItem, guards };
}
