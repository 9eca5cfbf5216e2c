// HTTPRoute request matching for one listener, with Gateway API precedence. The listener's
// routes are compiled once into per-host buckets of candidates (one per rule match), each bucket
// indexed by exact path and by path prefix and already sorted by precedence, so a request costs
// a few map lookups and the checks of the candidates found there — no regex compiling, no
// sorting, no result objects built per request.
//
// Precedence (docs/routing.md): the most specific hostname (exact, then the longest wildcard,
// then routes without hostnames); then Exact path, PathPrefix, RegularExpression, a longer path
// value first; then a method match; more header matches; more query-parameter matches; then the
// route that comes first in the input (the controller orders routes oldest first, then by
// namespace/name — the two Gateway API tie-breakers); then rule order, then match order.
import type { RouteConfig, RouteMatch, RuleConfig } from '../../contract/dataplane-config.ts';
import { effectiveHostnames } from '../../contract/hostnames.ts';
import { routingHost } from './host.ts';
import { normalizePath } from './path.ts';
import { firstQueryValue } from './query.ts';
import { compileFullMatch } from './regex.ts';

/** Request headers by lower-case name, as Node gives them; repeated fields may be arrays. */
export type RequestHeaders = Readonly<Record<string, string | readonly string[] | undefined>>;

export interface RouteRequest {
  /** The Host header (or :authority), port allowed. */
  host: string;
  /** The origin-form path without the query; normalised here (see normalizePath). */
  path: string;
  /** The query string, with or without its leading `?`; '' when none. */
  query: string;
  method: string;
  headers: RequestHeaders;
}

/** The chosen rule. The same object is returned for every request the rule match wins. */
export interface RouteTableMatch {
  readonly route: RouteConfig;
  readonly rule: RuleConfig;
  readonly ruleIndex: number;
  /** The match that won; absent when the rule has no matches (the default PathPrefix `/`). */
  readonly match?: RouteMatch;
}

/** A match that can never hold (an invalid regular expression, an unknown type): report it. */
export interface RouteTableProblem {
  route: string;
  ruleIndex: number;
  matchIndex: number;
  /** Field path inside the rule, e.g. `matches[0].headers[1].value`. */
  field: string;
  message: string;
}

interface ValueCondition {
  name: string;
  /** The exact value, when the condition is not a regular expression. */
  exact: string | undefined;
  regex: RegExp | undefined;
}

const PATH_RANK = { Exact: 0, PathPrefix: 1, RegularExpression: 2 } as const;

class Candidate {
  readonly result: RouteTableMatch;
  readonly method: string | undefined;
  readonly headers: readonly ValueCondition[];
  readonly queryParams: readonly ValueCondition[];
  readonly pathRegex: RegExp | undefined;
  readonly pathRank: number;
  readonly pathLength: number;
  readonly routeIndex: number;
  readonly matchIndex: number;

  constructor(
    result: RouteTableMatch,
    conditions: { method: string | undefined; headers: ValueCondition[]; queryParams: ValueCondition[] },
    path: { rank: number; length: number; regex: RegExp | undefined },
    routeIndex: number,
    matchIndex: number,
  ) {
    this.result = result;
    this.method = conditions.method;
    this.headers = conditions.headers;
    this.queryParams = conditions.queryParams;
    this.pathRegex = path.regex;
    this.pathRank = path.rank;
    this.pathLength = path.length;
    this.routeIndex = routeIndex;
    this.matchIndex = matchIndex;
  }
}

function byPrecedence(a: Candidate, b: Candidate): number {
  return (
    a.pathRank - b.pathRank ||
    b.pathLength - a.pathLength ||
    Number(b.method !== undefined) - Number(a.method !== undefined) ||
    b.headers.length - a.headers.length ||
    b.queryParams.length - a.queryParams.length ||
    a.routeIndex - b.routeIndex ||
    a.result.ruleIndex - b.result.ruleIndex ||
    a.matchIndex - b.matchIndex
  );
}

function headerValue(headers: RequestHeaders, name: string): string | undefined {
  const value = headers[name];
  if (value === undefined || typeof value === 'string') return value;
  // Repeated fields combine into one comma-separated value (RFC 9110 section 5.3).
  return (value as readonly string[]).join(', ');
}

function conditionHolds(condition: ValueCondition, value: string | undefined): boolean {
  if (value === undefined) return false;
  return condition.regex === undefined ? value === condition.exact : condition.regex.test(value);
}

/** Whether everything but the path (which the bucket index already checked) holds. */
function candidateHolds(candidate: Candidate, request: RouteRequest): boolean {
  if (candidate.method !== undefined && candidate.method !== request.method) return false;
  const headers = candidate.headers;
  for (let i = 0; i < headers.length; i++) {
    const condition = headers[i]!;
    if (!conditionHolds(condition, headerValue(request.headers, condition.name))) return false;
  }
  const queryParams = candidate.queryParams;
  for (let i = 0; i < queryParams.length; i++) {
    const condition = queryParams[i]!;
    if (!conditionHolds(condition, firstQueryValue(request.query, condition.name))) return false;
  }
  return true;
}

function firstHolding(candidates: readonly Candidate[] | undefined, request: RouteRequest): Candidate | undefined {
  if (candidates === undefined) return undefined;
  for (let i = 0; i < candidates.length; i++) {
    if (candidateHolds(candidates[i]!, request)) return candidates[i];
  }
  return undefined;
}

/** The candidates of one hostname (exact, one wildcard, or any host). */
class HostBucket {
  readonly exact = new Map<string, Candidate[]>();
  /** By prefix without its trailing slash ('' for `/`). */
  readonly prefix = new Map<string, Candidate[]>();
  /** 1 at each length some prefix key has, so only plausible prefixes of a path are looked up. */
  prefixLengths = new Uint8Array(0);
  readonly regex: Candidate[] = [];

  add(candidate: Candidate, kind: 'Exact' | 'PathPrefix' | 'RegularExpression', key: string): void {
    if (kind === 'RegularExpression') {
      this.regex.push(candidate);
      return;
    }
    const index = kind === 'Exact' ? this.exact : this.prefix;
    const list = index.get(key);
    if (list) list.push(candidate);
    else index.set(key, [candidate]);
    if (kind === 'PathPrefix') {
      if (key.length >= this.prefixLengths.length) {
        const grown = new Uint8Array(key.length + 1);
        grown.set(this.prefixLengths);
        this.prefixLengths = grown;
      }
      this.prefixLengths[key.length] = 1;
    }
  }

  sort(): void {
    for (const list of this.exact.values()) list.sort(byPrecedence);
    for (const list of this.prefix.values()) list.sort(byPrecedence);
    this.regex.sort(byPrecedence);
  }

  /** The winning candidate for a normalised path, in Exact, PathPrefix, RegularExpression order. */
  find(path: string, request: RouteRequest): Candidate | undefined {
    const exact = firstHolding(this.exact.get(path), request);
    if (exact) return exact;
    const lengths = this.prefixLengths;
    if (lengths.length > 0) {
      // Element boundaries from the longest: the whole path (without a trailing `/`), then the
      // position of every `/` before it; position 0 is the `/` prefix (key '').
      let end = path.charCodeAt(path.length - 1) === 47 ? path.length - 1 : path.length;
      for (;;) {
        if (end < lengths.length && lengths[end] === 1) {
          const found = firstHolding(this.prefix.get(end === path.length ? path : path.slice(0, end)), request);
          if (found) return found;
        }
        if (end === 0) break;
        end = path.lastIndexOf('/', end - 1);
      }
    }
    const regex = this.regex;
    for (let i = 0; i < regex.length; i++) {
      const candidate = regex[i]!;
      if (candidate.pathRegex!.test(path) && candidateHolds(candidate, request)) return candidate;
    }
    return undefined;
  }
}

export class RouteTable {
  readonly problems: readonly RouteTableProblem[];
  /** Exact hostnames, each with the buckets to search in order (its own, covering wildcards, any). */
  readonly #exactHosts: Map<string, HostBucket[]>;
  /** Wildcard buckets by suffix (`.example.com` for `*.example.com`). */
  readonly #wildcards: Map<string, HostBucket>;
  readonly #wildcardLengths: Set<number>;
  readonly #anyHost: HostBucket | undefined;

  constructor(
    exactHosts: Map<string, HostBucket>,
    wildcards: Map<string, HostBucket>,
    anyHost: HostBucket | undefined,
    problems: RouteTableProblem[],
  ) {
    this.problems = problems;
    this.#wildcards = wildcards;
    this.#wildcardLengths = new Set([...wildcards.keys()].map((suffix) => suffix.length));
    this.#anyHost = anyHost;
    const suffixesLongestFirst = [...wildcards.keys()].sort((a, b) => b.length - a.length);
    this.#exactHosts = new Map();
    for (const [host, bucket] of exactHosts) {
      const chain = [bucket];
      for (const suffix of suffixesLongestFirst) {
        if (host.endsWith(suffix) && host.length > suffix.length) chain.push(wildcards.get(suffix)!);
      }
      if (anyHost) chain.push(anyHost);
      this.#exactHosts.set(host, chain);
    }
  }

  /** The rule that handles the request, or undefined (answer 404; a path that cannot be normalised: 400). */
  match(request: RouteRequest): RouteTableMatch | undefined {
    const path = normalizePath(request.path);
    if (path === undefined) return undefined;
    const host = routingHost(request.host);
    const chain = this.#exactHosts.get(host);
    if (chain !== undefined) {
      for (let i = 0; i < chain.length; i++) {
        const found = chain[i]!.find(path, request);
        if (found) return found.result;
      }
      return undefined;
    }
    if (this.#wildcards.size > 0) {
      // Wildcards from the longest: the suffix after each dot, left to right; `*.` needs a label before it.
      for (let dot = host.indexOf('.', 1); dot !== -1; dot = host.indexOf('.', dot + 1)) {
        if (!this.#wildcardLengths.has(host.length - dot)) continue;
        const bucket = this.#wildcards.get(host.slice(dot));
        const found = bucket?.find(path, request);
        if (found) return found.result;
      }
    }
    return this.#anyHost?.find(path, request)?.result;
  }
}

const DEFAULT_MATCH: RouteMatch = { path: { type: 'PathPrefix', value: '/' } };

interface CompileContext {
  route: string;
  ruleIndex: number;
  matchIndex: number;
  problems: RouteTableProblem[];
  regexes: Map<string, RegExp | Error>;
}

function report(context: CompileContext, field: string, message: string): void {
  context.problems.push({
    route: context.route,
    ruleIndex: context.ruleIndex,
    matchIndex: context.matchIndex,
    field: `matches[${context.matchIndex}].${field}`,
    message,
  });
}

function regexFor(context: CompileContext, field: string, pattern: string): RegExp | undefined {
  let compiled = context.regexes.get(pattern);
  if (compiled === undefined) {
    compiled = compileFullMatch(pattern);
    context.regexes.set(pattern, compiled);
  }
  if (compiled instanceof Error) {
    report(context, field, `invalid regular expression ${JSON.stringify(pattern)}: ${compiled.message}`);
    return undefined;
  }
  return compiled;
}

/** Header or query conditions, first entry per name only (Gateway API); undefined when one is unusable. */
function valueConditions(
  context: CompileContext,
  field: 'headers' | 'queryParams',
  entries: RouteMatch['headers'],
): ValueCondition[] | undefined {
  const conditions: ValueCondition[] = [];
  const seen = new Set<string>();
  for (const [index, entry] of (entries ?? []).entries()) {
    const name = field === 'headers' ? entry.name.toLowerCase() : entry.name;
    if (seen.has(name)) continue;
    seen.add(name);
    const type = entry.type ?? 'Exact';
    if (type === 'Exact') {
      conditions.push({ name, exact: entry.value, regex: undefined });
    } else if (type === 'RegularExpression') {
      const regex = regexFor(context, `${field}[${index}].value`, entry.value);
      if (!regex) return undefined;
      conditions.push({ name, exact: undefined, regex });
    } else {
      report(context, `${field}[${index}].type`, `unsupported match type ${JSON.stringify(type)}`);
      return undefined;
    }
  }
  return conditions;
}

/**
 * The hostnames a route is matched by on this listener: [] means any host; undefined, none. The
 * controller already intersects them with the listener's; doing it again keeps a route from
 * ever serving a host its listener does not accept.
 */
function routeHostnames(route: RouteConfig, listenerHostname: string | undefined): string[] | undefined {
  return effectiveHostnames(
    listenerHostname?.toLowerCase(),
    route.hostnames.map((hostname) => hostname.toLowerCase()),
  );
}

/**
 * Compiles a listener's routes. `routes` must be in Gateway API conflict order (oldest first, then
 * namespace/name), as the controller hands them over; their position is the route tie-breaker.
 */
export function compileRouteTable(routes: readonly RouteConfig[], listenerHostname?: string): RouteTable {
  const problems: RouteTableProblem[] = [];
  const regexes = new Map<string, RegExp | Error>();
  const exactHosts = new Map<string, HostBucket>();
  const wildcards = new Map<string, HostBucket>();
  let anyHost: HostBucket | undefined;
  const bucketsOf = (hostnames: string[]): HostBucket[] => {
    if (hostnames.length === 0) {
      anyHost ??= new HostBucket();
      return [anyHost];
    }
    return hostnames.map((hostname) => {
      const wildcard = hostname.startsWith('*.');
      const index = wildcard ? wildcards : exactHosts;
      const key = wildcard ? hostname.slice(1) : hostname;
      let bucket = index.get(key);
      if (!bucket) {
        bucket = new HostBucket();
        index.set(key, bucket);
      }
      return bucket;
    });
  };

  routes.forEach((route, routeIndex) => {
    const hostnames = routeHostnames(route, listenerHostname);
    if (hostnames === undefined) return;
    const buckets = bucketsOf(hostnames);
    route.rules.forEach((rule, ruleIndex) => {
      const matches = rule.matches.length > 0 ? rule.matches : [DEFAULT_MATCH];
      matches.forEach((match, matchIndex) => {
        const context: CompileContext = { route: route.route, ruleIndex, matchIndex, problems, regexes };
        const result: RouteTableMatch =
          rule.matches.length > 0 ? { route, rule, ruleIndex, match } : { route, rule, ruleIndex };
        const headers = valueConditions(context, 'headers', match.headers);
        const queryParams = valueConditions(context, 'queryParams', match.queryParams);
        if (!headers || !queryParams) return;
        const type = match.path?.type ?? 'PathPrefix';
        const value = match.path?.value ?? '/';
        let key = value;
        let length = value.length;
        let regex: RegExp | undefined;
        if (type === 'RegularExpression') {
          regex = regexFor(context, 'path.value', value);
          if (!regex) return;
        } else if (type === 'Exact' || type === 'PathPrefix') {
          const normal = normalizePath(value);
          if (normal === undefined) {
            report(context, 'path.value', `${JSON.stringify(value)} is not an absolute path with valid escapes`);
            return;
          }
          key = type === 'PathPrefix' && normal.endsWith('/') ? normal.slice(0, -1) : normal;
          length = normal.length;
        } else {
          report(context, 'path.type', `unsupported path match type ${JSON.stringify(type)}`);
          return;
        }
        const candidate = new Candidate(
          result,
          { method: match.method, headers, queryParams },
          { rank: PATH_RANK[type], length, regex },
          routeIndex,
          matchIndex,
        );
        for (const bucket of buckets) bucket.add(candidate, type, key);
      });
    });
  });

  for (const bucket of [...exactHosts.values(), ...wildcards.values(), ...(anyHost ? [anyHost] : [])]) bucket.sort();
  return new RouteTable(exactHosts, wildcards, anyHost, problems);
}
