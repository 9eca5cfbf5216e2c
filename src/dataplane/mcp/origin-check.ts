// DNS-rebinding protection of the MCP endpoint (MCP 2025-06-18 and 2025-11-25 transports: servers
// MUST validate the Origin header; an Origin that is present and invalid gets 403). gw is the MCP
// server its clients see, so it checks before any target is asked (docs/mcp.md "Origin check"):
// - no Origin: non-browser clients, and browsers' same-origin GETs — nothing to check;
// - an origin the route's CORS policy admits (traffic.cors.allowOrigins of the rule, or of the
//   listener's PreRouting policy): the operator let that page in;
// - else the request's own origin: the Origin's host and port are the Host header's. On a local
//   connection (both ends loopback) its host must also be a loopback name: a page of another name
//   reaching gw over loopback is what DNS rebinding looks like (the page's own name resolved to
//   127.0.0.1), since there Origin and Host agree.
// `null` (opaque origins), several origins and anything that is not an http(s) origin are refused.

import type { CORS } from '../../api/types/traffic.ts';
import type { RoutedRequest } from '../backends/backend.ts';
import { type Origin, parseOrigin } from '../policies/http/origin.ts';
import type { RequestRecord } from '../telemetry/request-record.ts';

/** An allowOrigins entry: an exact origin, or one whose host is `*.` plus a domain. */
interface OriginPattern {
  scheme: string;
  port: string;
  /** The exact host, or for a wildcard the suffix after `*` (".example.com"). */
  host: string;
  wildcard: boolean;
}

/** The origins a CORS policy admits. */
interface CorsAllowance {
  any: boolean;
  patterns: OriginPattern[];
}

/** Compiled allowances by the traffic policy object they come from (one per configuration). */
const allowances = new WeakMap<object, CorsAllowance>();

/** traffic.cors.allowOrigins as traffic.cors matches them (policies/http/cors.ts). */
function corsAllowance(cors: CORS): CorsAllowance {
  let allowance = allowances.get(cors);
  if (allowance) return allowance;
  const origins = cors.allowOrigins ?? [];
  allowance = { any: origins.includes('*'), patterns: [] };
  for (const text of origins) {
    const origin = text === '*' ? undefined : parseOrigin(text);
    if (!origin) continue; // compileCors refuses the rule for an entry that is not an origin
    const wildcard = origin.host.startsWith('*.');
    allowance.patterns.push({
      scheme: origin.scheme,
      port: origin.port,
      host: wildcard ? origin.host.slice(1) : origin.host,
      wildcard,
    });
  }
  allowances.set(cors, allowance);
  return allowance;
}

function admits(allowance: CorsAllowance, origin: Origin): boolean {
  if (allowance.any) return true;
  return allowance.patterns.some(
    (pattern) =>
      pattern.scheme === origin.scheme &&
      pattern.port === origin.port &&
      (pattern.wildcard
        ? origin.host.length > pattern.host.length && origin.host.endsWith(pattern.host)
        : pattern.host === origin.host),
  );
}

/** localhost (and *.localhost, which browsers resolve to loopback themselves), 127.0.0.0/8, [::1]. */
export function isLoopbackName(host: string): boolean {
  const name = host.toLowerCase();
  if (name === 'localhost' || name.endsWith('.localhost') || name === '[::1]') return true;
  return /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(name);
}

/** A socket address on the loopback interface (IPv4, IPv6, IPv4-mapped IPv6). */
function isLoopbackAddress(address: string | undefined): boolean {
  if (!address) return false;
  const plain = address.startsWith('::ffff:') ? address.slice(7) : address;
  return plain === '::1' || /^127\./.test(plain);
}

/** Both ends of the client's connection on loopback (the client as a PROXY header names it, if any). */
function isLocalConnection(routed: RoutedRequest): boolean {
  return isLoopbackAddress(routed.req.socket?.localAddress) && isLoopbackAddress(routed.record.clientAddress);
}

/** Whether `origin` is the origin the request was made to: host and port of its Host header. */
function isOwnOrigin(origin: Origin, record: RequestRecord): boolean {
  // The Host read with the Origin's scheme: a TLS-terminating proxy in front changes the scheme, not the name.
  const own = record.host === '' ? undefined : parseOrigin(`${origin.scheme}://${record.host}`);
  return own !== undefined && own.host === origin.host && own.port === origin.port;
}

/** Why the request's Origin is refused (the 403's message), or undefined when it may go on. */
export function refusedOrigin(routed: RoutedRequest): string | undefined {
  const header = routed.req.headers.origin;
  if (header === undefined) return undefined;
  const origin = parseOrigin(header.trim());
  if (!origin || (origin.scheme !== 'http' && origin.scheme !== 'https')) return 'the Origin header is not an origin';
  // The CORS policies of the rule and of PreRouting admit their origins.
  for (const cors of routed.route.cors) if (admits(corsAllowance(cors), origin)) return undefined;
  if (!isOwnOrigin(origin, routed.record)) return 'the Origin is not the origin of this MCP endpoint';
  if (isLocalConnection(routed) && !isLoopbackName(origin.host))
    return 'a local MCP endpoint takes requests from local origins only';
  return undefined;
}
