// Cross-origin resource sharing (traffic.cors), with the semantics of Gateway API's
// HTTPCORSFilter as agentgateway (after Envoy) applies them:
// - a preflight (OPTIONS with Origin and Access-Control-Request-Method) is answered by gw with
//   200 and never forwarded: with the Access-Control-Allow-* headers when the origin is
//   allowed, without any CORS header when it is not (the browser then stops);
// - any other request with an allowed Origin is forwarded and its response (whoever writes it:
//   the backend, or a later policy's rejection) gets Access-Control-Allow-Origin,
//   -Allow-Credentials and -Expose-Headers; a request from another origin is forwarded untouched.
// Access-Control-Allow-Origin is `*` only for allowOrigins ["*"] without credentials; otherwise it
// echoes the request's Origin (browsers refuse `*` on credentialed requests) with Vary: Origin.
import type { CORS } from '../../../api/types/traffic.ts';
import type { ResponseHead } from '../../proxy/client-response.ts';
import type { PolicyExchange } from '../exchange.ts';
import type { LocalResponse, PolicyCompiler } from '../types.ts';
import { type Origin, parseOrigin } from './origin.ts';

/** Gateway API's default for maxAge (seconds). */
const DEFAULT_MAX_AGE = 5;

/** An allowOrigins entry: an exact origin, or one whose host is `*.` plus a domain. */
interface OriginPattern {
  scheme: string;
  port: string;
  /** The exact host, or for a wildcard the suffix after `*` (".example.com"). */
  host: string;
  wildcard: boolean;
}

interface CompiledCors {
  anyOrigin: boolean;
  origins: OriginPattern[];
  credentials: boolean;
  /** Access-Control-Allow-Methods for lists; undefined with `*` (echoed) or none. */
  methods: string | undefined;
  anyMethod: boolean;
  headers: string | undefined;
  anyHeader: boolean;
  expose: string | undefined;
  maxAge: string;
}

export const compileCors: PolicyCompiler<CORS> = (value, context) => {
  const origins: OriginPattern[] = [];
  for (const [index, text] of (value.allowOrigins ?? []).entries()) {
    if (text === '*') continue;
    const pattern = originPattern(text);
    if (!pattern)
      return {
        field: `${context.path}.cors.allowOrigins[${index}]`,
        message: `${JSON.stringify(text)} is not an origin (scheme://host[:port], host optionally starting with *.)`,
      };
    origins.push(pattern);
  }
  const list = (items: readonly string[] | undefined) =>
    items && items.length > 0 && !items.includes('*') ? items.join(',') : undefined;
  const cors: CompiledCors = {
    anyOrigin: value.allowOrigins?.includes('*') ?? false,
    origins,
    credentials: value.allowCredentials === true,
    methods: list(value.allowMethods),
    anyMethod: value.allowMethods?.includes('*') ?? false,
    headers: list(value.allowHeaders),
    anyHeader: value.allowHeaders?.includes('*') ?? false,
    expose: value.exposeHeaders && value.exposeHeaders.length > 0 ? value.exposeHeaders.join(',') : undefined,
    maxAge: String(value.maxAge ?? DEFAULT_MAX_AGE),
  };
  return { request: (exchange) => applyCors(cors, exchange) };
};

function originPattern(text: string): OriginPattern | undefined {
  const origin = parseOrigin(text);
  if (!origin) return undefined;
  if (origin.host.startsWith('*.')) {
    const suffix = origin.host.slice(1);
    if (suffix.includes('*')) return undefined;
    return { scheme: origin.scheme, port: origin.port, host: suffix, wildcard: true };
  }
  if (origin.host.includes('*')) return undefined;
  return { scheme: origin.scheme, port: origin.port, host: origin.host, wildcard: false };
}

function matches(pattern: OriginPattern, origin: Origin): boolean {
  if (pattern.scheme !== origin.scheme || pattern.port !== origin.port) return false;
  // `*.example.com` covers any subdomain depth (a.example.com, a.b.example.com), not example.com.
  return pattern.wildcard
    ? origin.host.length > pattern.host.length && origin.host.endsWith(pattern.host)
    : pattern.host === origin.host;
}

function allowed(cors: CompiledCors, originHeader: string): boolean {
  if (cors.anyOrigin) return true;
  const origin = parseOrigin(originHeader);
  return origin !== undefined && cors.origins.some((pattern) => matches(pattern, origin));
}

function applyCors(cors: CompiledCors, exchange: PolicyExchange): LocalResponse | undefined {
  const headers = exchange.req.headers;
  const origin = headers.origin;
  if (origin === undefined || origin === '') return undefined;
  const requestMethod = headers['access-control-request-method']?.trim();
  const preflight = exchange.req.method === 'OPTIONS' && requestMethod !== undefined && requestMethod !== '';
  const ok = allowed(cors, origin);
  if (preflight)
    return ok
      ? preflightResponse(cors, origin, requestMethod, headers['access-control-request-headers'])
      : { status: 200 };
  if (ok) exchange.onResponse((res) => addResponseHeaders(cors, origin, res));
  return undefined;
}

/** Access-Control-Allow-Origin: `*` only when any origin may read without credentials. */
function allowOriginValue(cors: CompiledCors, origin: string): string {
  return cors.anyOrigin && !cors.credentials ? '*' : origin;
}

function preflightResponse(
  cors: CompiledCors,
  origin: string,
  requestMethod: string,
  requestHeaders: string | undefined,
): LocalResponse {
  const out: Record<string, string> = { 'access-control-allow-origin': allowOriginValue(cors, origin) };
  if (out['access-control-allow-origin'] !== '*') out.vary = 'Origin';
  // With `*`, the method and headers asked for are echoed: a literal `*` means nothing to a
  // browser on a credentialed request.
  const methods = cors.anyMethod ? requestMethod : cors.methods;
  if (methods) out['access-control-allow-methods'] = methods;
  const headers = cors.anyHeader ? normalizedList(requestHeaders) : cors.headers;
  if (headers) out['access-control-allow-headers'] = headers;
  out['access-control-max-age'] = cors.maxAge;
  if (cors.credentials) out['access-control-allow-credentials'] = 'true';
  if (cors.expose) out['access-control-expose-headers'] = cors.expose;
  return { status: 200, headers: out };
}

function normalizedList(value: string | undefined): string | undefined {
  if (value === undefined) return undefined;
  const items = value
    .split(',')
    .map((item) => item.trim())
    .filter((item) => item !== '');
  return items.length > 0 ? items.join(', ') : undefined;
}

function addResponseHeaders(cors: CompiledCors, origin: string, res: ResponseHead): void {
  const allowOrigin = allowOriginValue(cors, origin);
  // gw's answer replaces any CORS header of the backend's: two would make the browser refuse both.
  res.setHeader('access-control-allow-origin', allowOrigin);
  if (cors.credentials) res.setHeader('access-control-allow-credentials', 'true');
  if (cors.expose) res.setHeader('access-control-expose-headers', cors.expose);
  if (allowOrigin !== '*') addVaryOrigin(res);
}

/** Adds Origin to Vary (caches must not give one origin's answer to another), once. */
function addVaryOrigin(res: ResponseHead): void {
  const existing = res.getHeader('vary');
  if (existing === undefined) {
    res.setHeader('vary', 'Origin');
    return;
  }
  const text = Array.isArray(existing) ? existing.join(', ') : String(existing);
  const names = text.split(',').map((name) => name.trim().toLowerCase());
  if (names.includes('origin') || names.includes('*')) return;
  res.setHeader('vary', text === '' ? 'Origin' : `${text}, Origin`);
}
