// What one MCP request is about, as policies see it: the method, and the tool, prompt or resource
// it names together with the target that serves it once routing has found it. CEL reads it as the
// variable `mcp` (docs/mcp.md "CEL"); the names follow agentgateway's (`mcp.methodName`,
// `mcp.tool.target`...) with the shorter `mcp.method` and `mcp.resource.uri` beside them.

import type { RoutedRequest } from '../backends/backend.ts';
import { toCelValue } from '../cel/expression.ts';
import { type CelVariables, celContext } from '../telemetry/cel-context.ts';
import type { JsonObject } from './jsonrpc.ts';

/** The kinds of item an MCP server lists. */
export type McpItemKind = 'tool' | 'prompt' | 'resource' | 'resourceTemplate';

export interface McpRequestInfo {
  /** The JSON-RPC method (`tools/call`...). */
  method: string;
  /** The gateway session id; undefined for sessionRouting Stateless. */
  sessionId?: string;
  /** tools/call: the tool as its target names it, and the target. */
  tool?: { name: string; target: string; arguments?: JsonObject };
  /** prompts/get, and completion/complete on a prompt. */
  prompt?: { name: string; target: string };
  /** resources/read, subscribe, unsubscribe, and completion/complete on a resource template. */
  resource?: { uri: string; target: string };
  /** The targets a request that is not routed to one (a list, initialize...) concerns; set when guards run. */
  targets?: readonly string[];
  /** The JSON-RPC error the client got, if any (for the access log). */
  error?: { code: number; message: string };
}

/** A request as the MCP hooks (authorization, guardrails) receive it. */
export interface McpCall {
  readonly info: McpRequestInfo;
  /** The client's request headers (after the route's filters and policies). */
  readonly headers: Readonly<Record<string, string | string[]>>;
  /** The client's HTTP request as pseudo-headers: `:authority`, `:method`, `:path`, `:scheme`. */
  readonly pseudoHeaders?: Readonly<Record<string, string>>;
  /**
   * Variables a hook sets for the CEL of the hooks after it in this request (guardrails'
   * `mcpGuardrails`, JSON values); cel() includes them.
   */
  readonly variables?: Record<string, unknown>;
  /**
   * CEL variables: the request's own (`request`, `jwt`, `source`...), `variables`, and `mcp` for
   * `info` as it is now — or for `item` when given (a listed item being authorized).
   */
  cel(item?: McpRequestInfo): CelVariables;
}

/** `info` as the CEL value of `mcp`. */
export function mcpCelValue(info: McpRequestInfo): unknown {
  const value: Record<string, unknown> = { method: info.method, methodName: info.method };
  if (info.sessionId !== undefined) value.sessionId = info.sessionId;
  if (info.tool) {
    value.tool = { name: info.tool.name, target: info.tool.target };
    if (info.tool.arguments) (value.tool as Record<string, unknown>).arguments = info.tool.arguments;
  }
  if (info.prompt) value.prompt = { name: info.prompt.name, target: info.prompt.target };
  if (info.resource) value.resource = { uri: info.resource.uri, name: info.resource.uri, target: info.resource.target };
  return toCelValue(value);
}

/**
 * The McpCall of a routed request. CEL variables are built only when asked for: through the
 * request's policy exchange when it has one (variables other policies set stay visible), else from
 * its record. The first call of an HTTP request is its MCP record (the access log's `mcp.*`).
 */
export function mcpCall(routed: RoutedRequest, info: McpRequestInfo): McpCall {
  routed.record.mcp ??= info;
  const variables: Record<string, unknown> = {};
  return {
    info,
    headers: routed.forward.headers as Record<string, string | string[]>,
    get pseudoHeaders() {
      const query = routed.record.query === '' ? '' : `?${routed.record.query}`;
      return {
        ':authority': routed.record.host,
        ':method': routed.req.method ?? 'POST',
        ':path': `${routed.record.path}${query}`,
        ':scheme': routed.scheme,
      };
    },
    variables,
    cel: (item) => {
      const extra: Record<string, unknown> = { mcp: mcpCelValue(item ?? info) };
      for (const name of Object.keys(variables)) extra[name] = toCelValue(variables[name]);
      if (routed.exchange) {
        for (const name of Object.keys(extra)) routed.exchange.setVariable(name, extra[name]);
        return routed.exchange.cel();
      }
      return celContext(routed.record, extra);
    },
  };
}
