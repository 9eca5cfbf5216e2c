// Extension points of the MCP data plane for the policies that sit on top of it (docs/mcp.md
// "Hooks"): authorization of lists (filterListItem) and of calls, gets and reads (checkItem), and
// guardrails (an ordered chain of guards over client requests and the responses to them). The
// multiplexer calls them at fixed places; the defaults allow everything and guard nothing.
import type { McpCall, McpItemKind } from './context.ts';
import type { JsonRpcErrorObject, JsonRpcRequest, JsonRpcResponse } from './jsonrpc.ts';

/** Where in the exchange a guard runs: the client's request before routing, or the response before the client gets it. */
export type McpGuardPhase = 'request' | 'response';

/** A guard's decision: go on (with the message replaced, when given), or answer the client with an error. */
export type McpGuardVerdict =
  | { action: 'continue'; message?: JsonRpcRequest | JsonRpcResponse }
  | { action: 'reject'; error: JsonRpcErrorObject };

/**
 * A guardrail. In the request phase `message` is the client's request as it will be routed
 * (names as the client wrote them); in the response phase it is the answer as the client will get
 * it. A guard that throws rejects the request (fail closed; a guard that may fail open catches).
 */
export type McpGuard = (
  message: JsonRpcRequest | JsonRpcResponse,
  phase: McpGuardPhase,
  call: McpCall,
) => Promise<McpGuardVerdict>;

export interface McpPolicyHooks {
  /**
   * Whether a listed item stays in the list the client gets. `item` is as the target sent it
   * (its own name or URI); `call.info.method` is the list method.
   */
  filterListItem(kind: McpItemKind, item: Readonly<Record<string, unknown>>, target: string, call: McpCall): boolean;
  /**
   * Whether the client may call the tool, get the prompt or read (subscribe to, complete) the
   * resource `name` (its name or URI as the target knows it). A refusal answers as if the item did
   * not exist, so that it is not revealed.
   */
  checkItem(kind: Exclude<McpItemKind, 'resourceTemplate'>, name: string, target: string, call: McpCall): boolean;
  /** Run in order; the first rejection ends the chain. */
  readonly guards: readonly McpGuard[];
}

/** No authorization rules and no guardrails: every item listed, every call allowed. */
export const NO_MCP_POLICY: McpPolicyHooks = Object.freeze({
  filterListItem: () => true,
  checkItem: () => true,
  guards: Object.freeze([]) as readonly McpGuard[],
});

/** Runs the guard chain; the message as the last guard left it, or the first rejection. */
export async function runGuards<M extends JsonRpcRequest | JsonRpcResponse>(
  guards: readonly McpGuard[],
  message: M,
  phase: McpGuardPhase,
  call: McpCall,
): Promise<{ message: M } | { error: JsonRpcErrorObject }> {
  let current = message;
  for (const guard of guards) {
    let verdict: McpGuardVerdict;
    try {
      verdict = await guard(current, phase, call);
    } catch {
      return { error: { code: -32603, message: 'the request was refused by a guardrail that failed' } };
    }
    if (verdict.action === 'reject') return { error: verdict.error };
    if (verdict.message) current = verdict.message as M;
  }
  return { message: current };
}
