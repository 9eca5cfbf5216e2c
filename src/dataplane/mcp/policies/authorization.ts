// BackendMCP.authorization (spec document 1 "Authentication" rule 6): the CEL rule of
// traffic.authorization (compiled by the same code, same Allow/Require/Deny semantics), decided
// per item with `mcp` naming it. A list keeps only the items the rule allows; a call, get, read,
// subscription or completion of an item it refuses is answered exactly as one of an item that
// does not exist (the multiplexer's "not found"), so the client cannot tell that it exists.
import type { AuthorizationRule } from '../../policies/auth/authorization.ts';
import type { McpCall, McpItemKind, McpRequestInfo } from '../context.ts';
import type { McpPolicyHooks } from '../hooks.ts';
import type { JsonObject } from '../jsonrpc.ts';

export type AuthorizationHooks = Pick<McpPolicyHooks, 'filterListItem' | 'checkItem'>;

/** The item hooks of a compiled rule. */
export function authorizationHooks(rule: AuthorizationRule): AuthorizationHooks {
  return {
    filterListItem: (kind, item, target, call) => rule.allows(call.cel(listedItem(kind, item, target, call))),
    // The multiplexer has put the item and its target in call.info.
    checkItem: (_kind, _name, _target, call) => rule.allows(call.cel()),
  };
}

/**
 * `mcp` for a listed item as for a request naming it: a tool or prompt by name, a resource by URI,
 * a resource template by its URI template (agentgateway's view), with the list method.
 */
function listedItem(kind: McpItemKind, item: Readonly<JsonObject>, target: string, call: McpCall): McpRequestInfo {
  const info: McpRequestInfo = { method: call.info.method };
  if (call.info.sessionId !== undefined) info.sessionId = call.info.sessionId;
  if (kind === 'tool') info.tool = { name: item.name as string, target };
  else if (kind === 'prompt') info.prompt = { name: item.name as string, target };
  else info.resource = { uri: (kind === 'resource' ? item.uri : item.uriTemplate) as string, target };
  return info;
}
