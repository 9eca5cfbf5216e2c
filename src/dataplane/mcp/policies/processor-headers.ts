// Which of the client's request headers a guardrail processor sees (MCPGuardrailsRemote
// allowedRequestHeaders / disallowedRequestHeaders), and the header changes it may ask for on the
// requests to targets. Like ext_authz: an empty allow list sends every header and the
// pseudo-headers (`:authority`, `:method`, `:path`, `:scheme`); a non-empty one only those it
// names (pseudo-headers included by name); the deny list always wins. Names match
// case-insensitively. Values travel as bytes: one entry per value of a repeated header.

import { INVALID_FIELD_VALUE, TOKEN } from '../../../util/http-field-syntax.ts';
import type { McpCall } from '../context.ts';
import type { McpHeaderMutation } from '../hooks.ts';

export interface HeaderFilter {
  /** Lower-case names; undefined lets every header through. */
  readonly allowed: ReadonlySet<string> | undefined;
  readonly disallowed: ReadonlySet<string>;
}

/** A header as ExtMcp's McpHeader carries it. */
export interface WireHeader {
  key: string;
  value: Buffer;
}

export function compileHeaderFilter(allowed: readonly string[] = [], disallowed: readonly string[] = []): HeaderFilter {
  return {
    allowed: allowed.length === 0 ? undefined : new Set(allowed.map((name) => name.toLowerCase())),
    disallowed: new Set(disallowed.map((name) => name.toLowerCase())),
  };
}

function passes(filter: HeaderFilter, name: string): boolean {
  return !filter.disallowed.has(name) && (filter.allowed === undefined || filter.allowed.has(name));
}

/** The client's headers the processor may see: pseudo-headers first, then the others in order. */
export function processorHeaders(call: McpCall, filter: HeaderFilter): WireHeader[] {
  const out: WireHeader[] = [];
  const pseudo = call.pseudoHeaders ?? {};
  for (const name of Object.keys(pseudo)) {
    if (passes(filter, name)) out.push({ key: name, value: Buffer.from(pseudo[name]!, 'latin1') });
  }
  for (const name of Object.keys(call.headers)) {
    const key = name.toLowerCase();
    if (!passes(filter, key)) continue;
    const value = call.headers[name]!;
    for (const one of Array.isArray(value) ? value : [value]) out.push({ key, value: Buffer.from(one, 'latin1') });
  }
  return out;
}

/** Connection-level headers: a processor cannot set them on a request gw makes. */
const HOP_BY_HOP = new Set([
  'connection',
  'keep-alive',
  'proxy-connection',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
]);

/**
 * A processor's HeaderMutation as header changes for the targets' requests. Entries with a name or
 * value HTTP does not allow, and connection-level headers, are left out (as agentgateway skips
 * invalid ones); the MCP transport's own headers stay gw's (scopeWithHeaders).
 */
export function headerMutation(
  set: readonly { key?: string; value?: Buffer | Uint8Array }[] | undefined,
  remove: readonly string[] | undefined,
): McpHeaderMutation | undefined {
  const changes: [string, string][] = [];
  for (const entry of set ?? []) {
    const name = (entry.key ?? '').toLowerCase();
    const value = Buffer.from(entry.value ?? Buffer.alloc(0)).toString('latin1');
    if (TOKEN.test(name) && !INVALID_FIELD_VALUE.test(value) && !HOP_BY_HOP.has(name)) changes.push([name, value]);
  }
  const removals = (remove ?? []).map((name) => name.toLowerCase()).filter((name) => TOKEN.test(name));
  return changes.length === 0 && removals.length === 0 ? undefined : { set: changes, remove: removals };
}
