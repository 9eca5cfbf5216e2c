// Extension points of the MCP data plane for the policies that sit on top of it (docs/mcp.md
// "Hooks"): authorization of lists (filterListItem) and of calls, gets and reads (checkItem), and
// guardrails (an ordered chain of guards over client requests and the responses to them). The
// multiplexer calls them at fixed places; the defaults allow everything and guard nothing.

import type { ClientScope } from './client-scope.ts';
import type { McpCall, McpItemKind } from './context.ts';
import type { JsonRpcErrorObject, JsonRpcRequest, JsonRpcResponse } from './jsonrpc.ts';
import { clientHeadersForTargets } from './upstream-http.ts';

/** Where in the exchange a guard runs: the client's request before it is sent or answered, or the response before the client gets it. */
export type McpGuardPhase = 'request' | 'response';

/**
 * Changes to the headers of the requests gw sends to targets for one client request: `set`
 * replaces a header (several entries of one name make a list), `remove` drops one. Names are
 * lower-case.
 */
export interface McpHeaderMutation {
  set: readonly (readonly [string, string])[];
  remove: readonly string[];
}

/**
 * A guard's decision: go on (with the message replaced, when given, and in the request phase the
 * targets' headers changed), or answer the client with an error.
 */
export type McpGuardVerdict =
  | { action: 'continue'; message?: JsonRpcRequest | JsonRpcResponse; headers?: McpHeaderMutation }
  | { action: 'reject'; error: JsonRpcErrorObject };

/**
 * A guardrail. In the request phase `message` is the client's request: for a call, get, read,
 * subscription or completion as its target will get it (after routing, names and URIs as the
 * target knows them, `call.info` naming the item and target; before authorization), for any other
 * method as the client sent it, before it is answered or fanned out. In the response phase it is
 * the answer as the client will get it. A guard that throws rejects the request (fail closed; a
 * guard that may fail open catches).
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

/**
 * Runs the guard chain; the message as the last guard left it (each guard sees the one before's)
 * with the header changes asked for in order, or the first rejection.
 */
export async function runGuards<M extends JsonRpcRequest | JsonRpcResponse>(
  guards: readonly McpGuard[],
  message: M,
  phase: McpGuardPhase,
  call: McpCall,
): Promise<{ message: M; headers: McpHeaderMutation[] } | { error: JsonRpcErrorObject }> {
  let current = message;
  const headers: McpHeaderMutation[] = [];
  for (const guard of guards) {
    let verdict: McpGuardVerdict;
    try {
      verdict = await guard(current, phase, call);
    } catch {
      return { error: { code: -32603, message: 'the request was refused by a guardrail that failed' } };
    }
    if (verdict.action === 'reject') return { error: verdict.error };
    if (verdict.message) current = verdict.message as M;
    if (verdict.headers) headers.push(verdict.headers);
  }
  return { message: current, headers };
}

/**
 * The scope of a client request with the guards' header changes applied to the headers its
 * targets get (a copy: the client's scope is unchanged). Headers of the MCP transport stay gw's.
 */
export function scopeWithHeaders(scope: ClientScope, mutations: readonly McpHeaderMutation[]): ClientScope {
  if (mutations.length === 0) return scope;
  const headers: Record<string, string | string[]> = { ...scope.headers };
  for (const mutation of mutations) {
    const set = new Map<string, string[]>();
    for (const [name, value] of mutation.set) set.set(name, [...(set.get(name) ?? []), value]);
    for (const [name, values] of set) headers[name] = values.length === 1 ? values[0]! : values;
    for (const name of mutation.remove) delete headers[name];
  }
  return { ...scope, headers: clientHeadersForTargets(headers) };
}
