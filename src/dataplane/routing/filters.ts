// The core HTTPRoute filters, compiled once per rule (and per backendRef) and applied per
// request: RequestHeaderModifier, ResponseHeaderModifier, RequestRedirect and URLRewrite, with
// the semantics Gateway API v1 gives them. A filter this module does not apply (RequestMirror,
// CORS, ExtensionRef, unknown or malformed ones) is never skipped: it is reported in `problems`,
// and requests that would pass through it must get an error response (500), unless the caller
// names its type in `external` and runs it itself.
import type { HTTPRouteFilter } from '../../api/kinds/gateway-api/http-route.ts';
import type { RouteMatch, RuleConfig } from '../../contract/dataplane-config.ts';
import { hostWithoutPort } from './host.ts';
import { normalizePath } from './path.ts';

/** Headers by lower-case name (Node's IncomingHttpHeaders / OutgoingHttpHeaders shape). */
export type HeaderBag = Record<string, string | string[] | number | undefined>;

export interface HeaderModifier {
  /** [lower-case name, value] pairs. */
  readonly set: readonly (readonly [string, string])[];
  readonly add: readonly (readonly [string, string])[];
  readonly remove: readonly string[];
}

export type PathModifier =
  | { readonly type: 'ReplaceFullPath'; readonly path: string }
  | {
      readonly type: 'ReplacePrefixMatch';
      /** The rule's matched prefix, normalised, without trailing slash ('' for `/`). */
      readonly prefix: string;
      /** The replacement without trailing slash ('' for `/` or empty). */
      readonly replacement: string;
    };

export interface RequestRedirect {
  readonly scheme: 'http' | 'https' | undefined;
  readonly hostname: string | undefined;
  readonly port: number | undefined;
  readonly path: PathModifier | undefined;
  readonly statusCode: 301 | 302 | 303 | 307 | 308;
}

export interface URLRewrite {
  readonly hostname: string | undefined;
  readonly path: PathModifier | undefined;
}

/** A request-phase step, kept in the order the filters are listed. */
export type RequestStep =
  | { readonly kind: 'headers'; readonly modifier: HeaderModifier }
  | { readonly kind: 'rewrite'; readonly rewrite: URLRewrite };

export interface FilterProblem {
  /** Position in the filter list. */
  index: number;
  type: string;
  message: string;
}

export interface CompiledFilters {
  readonly request: readonly RequestStep[];
  readonly response: HeaderModifier | undefined;
  /** When set, the request is answered with this redirect and never forwarded. */
  readonly redirect: RequestRedirect | undefined;
  /** Filters whose type the caller named in `external`, in list order, for the caller to run. */
  readonly external: readonly HTTPRouteFilter[];
  /** Filters that cannot be applied; a request that would pass through them must get a 500. */
  readonly problems: readonly FilterProblem[];
}

export interface CompileFilterOptions {
  /** Filter types the caller implements itself (for example 'RequestMirror', 'CORS'). */
  external?: readonly string[];
}

const NO_FILTERS: CompiledFilters = Object.freeze({
  request: Object.freeze([]),
  response: undefined,
  redirect: undefined,
  external: Object.freeze([]),
  problems: Object.freeze([]),
});

const REDIRECT_CODES = new Set([301, 302, 303, 307, 308]);

function compileHeaderModifier(spec: {
  set?: { name: string; value: string }[];
  add?: { name: string; value: string }[];
  remove?: string[];
}): HeaderModifier {
  // Names compare case-insensitively; of equivalent names only the first entry counts.
  const pairs = (entries: { name: string; value: string }[] | undefined) => {
    const seen = new Set<string>();
    const out: [string, string][] = [];
    for (const { name, value } of entries ?? []) {
      const lower = name.toLowerCase();
      if (seen.has(lower)) continue;
      seen.add(lower);
      out.push([lower, value]);
    }
    return out;
  };
  return {
    set: pairs(spec.set),
    add: pairs(spec.add),
    remove: [...new Set((spec.remove ?? []).map((name) => name.toLowerCase()))],
  };
}

function withoutTrailingSlash(path: string): string {
  return path.endsWith('/') ? path.slice(0, -1) : path;
}

/** The prefix ReplacePrefixMatch replaces: the rule's single PathPrefix match (or the default `/`). */
function matchedPrefix(matches: readonly RouteMatch[]): string | Error {
  if (matches.length === 0) return '';
  const path = matches[0]!.path;
  if (matches.length > 1 || path.type !== 'PathPrefix') {
    return new Error('ReplacePrefixMatch needs the rule to have exactly one PathPrefix match');
  }
  const normal = normalizePath(path.value);
  if (normal === undefined) return new Error(`the rule's path ${JSON.stringify(path.value)} is not a valid prefix`);
  return withoutTrailingSlash(normal);
}

function compilePathModifier(
  spec: { type: string; replaceFullPath?: string; replacePrefixMatch?: string },
  matches: readonly RouteMatch[],
): PathModifier | Error {
  if (spec.type === 'ReplaceFullPath' && spec.replaceFullPath !== undefined) {
    return { type: 'ReplaceFullPath', path: spec.replaceFullPath };
  }
  if (spec.type === 'ReplacePrefixMatch' && spec.replacePrefixMatch !== undefined) {
    const prefix = matchedPrefix(matches);
    if (prefix instanceof Error) return prefix;
    return { type: 'ReplacePrefixMatch', prefix, replacement: withoutTrailingSlash(spec.replacePrefixMatch) };
  }
  return new Error(`unsupported path modifier ${JSON.stringify(spec.type)}`);
}

interface FilterState {
  request: RequestStep[];
  response: HeaderModifier | undefined;
  redirect: RequestRedirect | undefined;
  rewrites: number;
}

/** Adds one core filter to `state`; returns why it cannot be applied, if it cannot. */
function addFilter(filter: HTTPRouteFilter, matches: readonly RouteMatch[], state: FilterState): string | undefined {
  switch (filter.type) {
    case 'RequestHeaderModifier': {
      if (!filter.requestHeaderModifier) return 'RequestHeaderModifier filter without its settings';
      state.request.push({ kind: 'headers', modifier: compileHeaderModifier(filter.requestHeaderModifier) });
      return undefined;
    }
    case 'ResponseHeaderModifier': {
      if (!filter.responseHeaderModifier) return 'ResponseHeaderModifier filter without its settings';
      if (state.response) return 'ResponseHeaderModifier filter repeated';
      state.response = compileHeaderModifier(filter.responseHeaderModifier);
      return undefined;
    }
    case 'RequestRedirect': {
      const spec = filter.requestRedirect;
      if (!spec) return 'RequestRedirect filter without its settings';
      if (state.redirect) return 'RequestRedirect filter repeated';
      const statusCode = spec.statusCode ?? 302;
      if (!REDIRECT_CODES.has(statusCode)) return `unsupported redirect status code ${statusCode}`;
      const scheme: string | undefined = spec.scheme;
      if (scheme !== undefined && scheme !== 'http' && scheme !== 'https')
        return `unsupported redirect scheme ${JSON.stringify(scheme)}`;
      const path = spec.path ? compilePathModifier(spec.path, matches) : undefined;
      if (path instanceof Error) return path.message;
      state.redirect = { scheme: spec.scheme, hostname: spec.hostname, port: spec.port, path, statusCode };
      return undefined;
    }
    case 'URLRewrite': {
      const spec = filter.urlRewrite;
      if (!spec) return 'URLRewrite filter without its settings';
      if (++state.rewrites > 1) return 'URLRewrite filter repeated';
      const path = spec.path ? compilePathModifier(spec.path, matches) : undefined;
      if (path instanceof Error) return path.message;
      state.request.push({ kind: 'rewrite', rewrite: { hostname: spec.hostname, path } });
      return undefined;
    }
    case 'ExtensionRef':
      return 'ExtensionRef filters are not supported: gw has no extension filter kinds';
    case 'RequestMirror':
    case 'CORS':
      return `the ${filter.type} filter is not applied by this data plane`;
    default:
      return `unknown filter type ${JSON.stringify(filter.type)}`;
  }
}

/**
 * Compiles a filter list (a rule's, or a backendRef's with its rule's matches). Never throws:
 * what cannot be applied is in `problems`.
 */
export function compileFilters(
  filters: readonly unknown[] | undefined,
  matches: readonly RouteMatch[],
  options: CompileFilterOptions = {},
): CompiledFilters {
  if (!filters || filters.length === 0) return NO_FILTERS;
  const state: FilterState = { request: [], response: undefined, redirect: undefined, rewrites: 0 };
  const external: HTTPRouteFilter[] = [];
  const problems: FilterProblem[] = [];
  filters.forEach((raw, index) => {
    const filter = (raw ?? {}) as HTTPRouteFilter;
    if (options.external?.includes(filter.type)) {
      external.push(filter);
      return;
    }
    const problem = addFilter(filter, matches, state);
    if (problem !== undefined) problems.push({ index, type: String(filter.type), message: problem });
  });
  if (state.redirect && state.rewrites > 0) {
    problems.push({
      index: -1,
      type: 'RequestRedirect',
      message: 'RequestRedirect cannot be combined with URLRewrite',
    });
  }
  return { request: state.request, response: state.response, redirect: state.redirect, external, problems };
}

/** A rule's filters and those of each of its backendRefs (same order as `rule.backendRefs`). */
export function compileRuleFilters(
  rule: RuleConfig,
  options: CompileFilterOptions = {},
): { rule: CompiledFilters; backendRefs: CompiledFilters[] } {
  return {
    rule: compileFilters(rule.filters, rule.matches, options),
    backendRefs: rule.backendRefs.map((ref) => compileFilters(ref.filters, rule.matches, options)),
  };
}

/** Applies set, add (appended with a comma, as Gateway API shows) and remove to `headers`, in place. */
export function applyHeaderModifier(modifier: HeaderModifier, headers: HeaderBag): void {
  for (const [name, value] of modifier.set) headers[name] = value;
  for (const [name, value] of modifier.add) {
    const existing = headers[name];
    if (existing === undefined) headers[name] = value;
    else if (Array.isArray(existing)) headers[name] = [...existing, value];
    else headers[name] = `${existing},${value}`;
  }
  for (const name of modifier.remove) delete headers[name];
}

/** The path after a path modifier; a path outside the matched prefix is left as it is. */
export function modifyPath(modifier: PathModifier, path: string): string {
  if (modifier.type === 'ReplaceFullPath') return modifier.path;
  const prefix = modifier.prefix;
  if (
    prefix !== '' &&
    !(path.startsWith(prefix) && (path.length === prefix.length || path.charCodeAt(prefix.length) === 47))
  )
    return path;
  const replaced = modifier.replacement + path.slice(prefix.length);
  return replaced.charCodeAt(0) === 47 ? replaced : `/${replaced}`;
}

/** The request as it will be forwarded; the Host sent upstream is `headers.host`. */
export interface ForwardRequest {
  /** The normalised path (the one routing matched). */
  path: string;
  query: string;
  headers: HeaderBag;
}

/** Runs the request-phase filters in their listed order (header modifiers, URL rewrites), in place. */
export function applyRequestFilters(filters: CompiledFilters, request: ForwardRequest): void {
  for (const step of filters.request) {
    if (step.kind === 'headers') {
      applyHeaderModifier(step.modifier, request.headers);
      continue;
    }
    const { hostname, path } = step.rewrite;
    if (hostname !== undefined) request.headers.host = hostname;
    if (path !== undefined) request.path = modifyPath(path, request.path);
  }
}

/** Runs the ResponseHeaderModifier, if any, on response headers (lower-case names). */
export function applyResponseFilters(filters: CompiledFilters, headers: HeaderBag): void {
  if (filters.response) applyHeaderModifier(filters.response, headers);
}

export interface RedirectSource {
  /** The scheme the request arrived with (the listener's protocol). */
  scheme: 'http' | 'https';
  /** The Host header as received (a port is dropped). */
  host: string;
  /** The normalised path. */
  path: string;
  query: string;
  /** The port of the listener the request arrived on. */
  listenerPort: number;
}

/**
 * The redirect response: status and Location. Port, when not set: the scheme's well-known port if
 * the filter sets a scheme, otherwise the listener's port; left out of Location when it is the
 * default for the scheme (http 80, https 443). The query is kept.
 */
export function redirectResponse(
  redirect: RequestRedirect,
  source: RedirectSource,
): { statusCode: 301 | 302 | 303 | 307 | 308; location: string } {
  const scheme = redirect.scheme ?? source.scheme;
  const port = redirect.port ?? (redirect.scheme ? (redirect.scheme === 'https' ? 443 : 80) : source.listenerPort);
  const host = redirect.hostname ?? hostWithoutPort(source.host);
  const defaultPort = (scheme === 'http' && port === 80) || (scheme === 'https' && port === 443);
  const path = redirect.path ? modifyPath(redirect.path, source.path) : source.path;
  const query = source.query.charCodeAt(0) === 63 ? source.query.slice(1) : source.query;
  return {
    statusCode: redirect.statusCode,
    location: `${scheme}://${host}${defaultPort ? '' : `:${port}`}${path}${query ? `?${query}` : ''}`,
  };
}
