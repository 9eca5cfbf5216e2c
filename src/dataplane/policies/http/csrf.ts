// Cross-site request forgery protection (traffic.csrf), as agentgateway checks it (the
// Sec-Fetch-Site / Origin algorithm browsers make possible; no tokens):
// 1. GET, HEAD and OPTIONS pass: they must not change state.
// 2. Sec-Fetch-Site same-origin or none (typed in the address bar) passes; any other value
//    (cross-site, same-site) passes only when Origin is one of additionalOrigins.
// 3. Without Sec-Fetch-Site (older browsers, non-browser clients): a request without Origin
//    passes — browsers send Origin on every cross-origin unsafe request, so one without it is
//    not a browser's cross-site request; otherwise Origin must be the request's own origin
//    (scheme://Host) or one of additionalOrigins.
// Everything else is answered 403. Origins compare case-insensitively with default ports
// dropped. Unlike agentgateway, an opaque `Origin: null` (sandboxed frames, some redirects) is
// refused rather than read as "no Origin": only a browser sends it, and it never names a
// trusted origin.
import type { CSRF } from '../../../api/types/traffic.ts';
import type { PolicyExchange } from '../exchange.ts';
import type { LocalResponse, PolicyCompiler } from '../types.ts';
import { canonicalOrigin } from './origin.ts';

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

const FORBIDDEN: LocalResponse = Object.freeze({ status: 403, body: 'CSRF validation failed', own: 'refusal' });

export const compileCsrf: PolicyCompiler<CSRF> = (value, context) => {
  const trusted = new Set<string>();
  for (const [index, text] of (value.additionalOrigins ?? []).entries()) {
    const origin = canonicalOrigin(text);
    if (origin === undefined)
      return {
        field: `${context.path}.csrf.additionalOrigins[${index}]`,
        message: `${JSON.stringify(text)} is not an origin (scheme://host[:port])`,
      };
    trusted.add(origin);
  }
  return { request: (exchange) => checkCsrf(trusted, exchange) };
};

function checkCsrf(trusted: ReadonlySet<string>, exchange: PolicyExchange): LocalResponse | undefined {
  const req = exchange.req;
  if (SAFE_METHODS.has(req.method ?? 'GET')) return undefined;
  const origin = req.headers.origin;
  const isTrusted = () => origin !== undefined && trusted.has(canonicalOrigin(origin) ?? '');
  const site = req.headers['sec-fetch-site'];
  if (site !== undefined) {
    if (site === 'same-origin' || site === 'none' || isTrusted()) return undefined;
    return FORBIDDEN;
  }
  if (origin === undefined) return undefined;
  const own = canonicalOrigin(`${exchange.record.scheme}://${exchange.record.host}`);
  const sent = canonicalOrigin(origin);
  if (sent !== undefined && sent === own) return undefined;
  return isTrusted() ? undefined : FORBIDDEN;
}
