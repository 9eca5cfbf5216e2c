// What the web UI checks of every request before it answers: that a loopback-only UI is reached
// by a loopback name (a page of another site that rebinds its DNS name to 127.0.0.1 must not
// read the UI), that the caller holds a session or the admin token when one is required, and that
// a request which changes something comes from the UI's own pages (same origin, and the UI's own
// header, which a cross-site form cannot send and a cross-site fetch cannot send without a CORS
// preflight that is never granted). docs/decisions/0046-web-ui.md.
import type { IncomingMessage } from 'node:http';
import { isLoopbackName } from '../../../dataplane/mcp/origin-check.ts';
import type { AdminToken } from './admin-token.ts';

/** The header the UI's scripts send with every API request. */
export const UI_HEADER = 'x-gw-ui';

export const SESSION_COOKIE = 'gw_admin_session';

/** Whether a listener bound to `address` is reachable from this host alone. */
export function isLoopbackBinding(address: string): boolean {
  const plain = address.replace(/^\[|\]$/g, '');
  return plain === 'localhost' || plain === '::1' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(plain);
}

/** The host name of a Host header ("[::1]:15000" → "[::1]", "localhost:15000" → "localhost"). */
function hostName(host: string): string {
  if (host.startsWith('[')) return host.slice(0, host.indexOf(']') + 1);
  const colon = host.indexOf(':');
  return colon < 0 ? host : host.slice(0, colon);
}

/** Without a token the UI answers loopback names only: DNS rebinding cannot reach it. */
export function foreignHostProblem(request: IncomingMessage): string | undefined {
  const host = request.headers.host;
  if (host && isLoopbackName(hostName(host))) return undefined;
  return `the UI answers requests for loopback names only (127.0.0.1, localhost, [::1]), not "${host ?? ''}"`;
}

function cookie(request: IncomingMessage, name: string): string | undefined {
  for (const part of (request.headers.cookie ?? '').split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim();
  }
  return undefined;
}

/** Whether the request carries a live session cookie or the token itself (Authorization: Bearer). */
export function authenticated(request: IncomingMessage, token: AdminToken): boolean {
  const session = cookie(request, SESSION_COOKIE);
  if (session !== undefined && token.validSession(session)) return true;
  const authorization = request.headers.authorization;
  return authorization !== undefined && /^Bearer /i.test(authorization) && token.matches(authorization.slice(7).trim());
}

/** The Set-Cookie of a new session (or, with `undefined`, of its end). */
export function sessionCookie(value: string | undefined, maxAgeSeconds: number): string {
  const base = `${SESSION_COOKIE}=${value ?? ''}; Path=/ui; HttpOnly; SameSite=Strict`;
  return value === undefined ? `${base}; Max-Age=0` : `${base}; Max-Age=${maxAgeSeconds}`;
}

const SAFE_METHODS = new Set(['GET', 'HEAD']);

/**
 * Why a request that changes something is not taken as the UI's own, or undefined: a browser says
 * where a request comes from (Sec-Fetch-Site, Origin), and only the UI's scripts add UI_HEADER.
 */
export function crossSiteProblem(request: IncomingMessage): string | undefined {
  if (SAFE_METHODS.has(request.method ?? 'GET')) return undefined;
  const site = request.headers['sec-fetch-site'];
  if (site !== undefined && site !== 'same-origin')
    return `a ${site} request cannot change anything here (Sec-Fetch-Site)`;
  const origin = request.headers.origin;
  if (origin !== undefined && origin !== `http://${request.headers.host}`)
    return `a request from ${origin} cannot change anything here (Origin)`;
  if (request.headers[UI_HEADER] === undefined) return `changes need the ${UI_HEADER} header the UI sends`;
  return undefined;
}
