// Benchmark: route matching on one listener with 1,000 HTTPRoutes (exact hostnames, wildcards and
// routes without hostnames; PathPrefix, Exact and RegularExpression paths; header, query and
// method conditions). Prints ns per match for several request shapes, next to a linear scan
// over every match (what the table's index avoids).
// Run: ./node_modules/.bin/node bench/route-match.bench.ts
import type { RouteConfig, RouteMatch, RuleConfig } from '../src/contract/dataplane-config.ts';
import { routingHost } from '../src/dataplane/routing/host.ts';
import { normalizePath } from '../src/dataplane/routing/path.ts';
import { firstQueryValue } from '../src/dataplane/routing/query.ts';
import { compileRouteTable, type RouteRequest } from '../src/dataplane/routing/route-table.ts';

const ROUTES = 1_000;

function matchFor(i: number): RouteMatch {
  const base = `/api/v${i % 5}/svc-${i}`;
  if (i % 25 === 0) return { path: { type: 'RegularExpression', value: `/models/m${i}/[a-z0-9-]+/invoke` } };
  if (i % 10 === 0) return { path: { type: 'Exact', value: `${base}/health` } };
  const match: RouteMatch = { path: { type: 'PathPrefix', value: base } };
  if (i % 4 === 1) match.headers = [{ type: 'Exact', name: 'x-tenant', value: `t${i % 7}` }];
  if (i % 6 === 1) match.queryParams = [{ type: 'Exact', name: 'mode', value: 'fast' }];
  if (i % 8 === 3) match.method = 'POST';
  return match;
}

function hostnamesFor(i: number): string[] {
  if (i < 800) return [`tenant-${i % 50}.example.com`];
  if (i < 900) return [`*.apps-${i % 10}.example.com`];
  return [];
}

const routes: RouteConfig[] = Array.from({ length: ROUTES }, (_, i) => {
  const rule: RuleConfig = { matches: [matchFor(i)], traffic: {}, backendRefs: [] };
  const fallback: RuleConfig = {
    matches: [{ path: { type: 'PathPrefix', value: `/fallback-${i}` } }],
    traffic: {},
    backendRefs: [],
  };
  return { route: `ns-${i % 20}/route-${i}`, hostnames: hostnamesFor(i), rules: [rule, fallback] };
});

const request = (host: string, path: string, extra: Partial<RouteRequest> = {}): RouteRequest => ({
  host,
  path,
  query: '',
  method: 'GET',
  headers: { 'user-agent': 'bench', accept: '*/*' },
  ...extra,
});

const scenarios: [string, RouteRequest, string | undefined][] = [
  [
    'exact host, deep PathPrefix',
    request('tenant-7.example.com:8080', '/api/v2/svc-407/chat/completions'),
    'ns-7/route-407',
  ],
  [
    'exact host, header + query',
    request('tenant-3.example.com', '/api/v3/svc-253/x', { headers: { 'x-tenant': 't1' }, query: 'mode=fast&x=1' }),
    'ns-13/route-253',
  ],
  ['exact host, Exact path', request('tenant-10.example.com', '/api/v0/svc-110/health'), 'ns-10/route-110'],
  ['wildcard host', request('web.apps-7.example.com', '/api/v2/svc-807/items/42'), 'ns-7/route-807'],
  ['no-hostname route, regex path', request('anything.org', '/models/m950/gpt-4o/invoke'), 'ns-10/route-950'],
  ['path needing normalisation', request('tenant-7.example.com', '/api/v2/./svc-407//chat/../x'), 'ns-7/route-407'],
  ['no match (404)', request('tenant-7.example.com', '/nothing/here'), undefined],
];

// The baseline: every match checked for every request, the best kept by the same precedence.
interface Flat {
  route: RouteConfig;
  ruleIndex: number;
  routeIndex: number;
  match: RouteMatch;
  regex: RegExp | undefined;
}
const flat: Flat[] = [];
routes.forEach((route, routeIndex) => {
  route.rules.forEach((rule, ruleIndex) => {
    for (const match of rule.matches) {
      const regex = match.path.type === 'RegularExpression' ? new RegExp(`^(?:${match.path.value})$`) : undefined;
      flat.push({ route, ruleIndex, routeIndex, match, regex });
    }
  });
});

function hostRank(hostnames: string[], host: string): number {
  if (hostnames.length === 0) return 0;
  let best = -1;
  for (const h of hostnames) {
    if (h === host) return 100_000;
    if (h.startsWith('*.') && host.endsWith(h.slice(1)) && host.length > h.length - 1) best = Math.max(best, h.length);
  }
  return best;
}

/** Lexicographic comparison of precedence keys (higher wins). */
function greater(a: number[], b: number[]): boolean {
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return a[i]! > b[i]!;
  return false;
}

function linearMatch(req: RouteRequest): Flat | undefined {
  const path = normalizePath(req.path);
  if (path === undefined) return undefined;
  const host = routingHost(req.host);
  let best: Flat | undefined;
  let bestKey: number[] | undefined;
  for (const f of flat) {
    const rank = hostRank(f.route.hostnames, host);
    if (rank < 0) continue;
    const { type, value } = f.match.path;
    const pathOk =
      type === 'Exact'
        ? path === value
        : type === 'PathPrefix'
          ? path === value || path.startsWith(value.endsWith('/') ? value : `${value}/`)
          : f.regex!.test(path);
    if (!pathOk) continue;
    if (f.match.method && f.match.method !== req.method) continue;
    if (f.match.headers?.some((h) => req.headers[h.name] !== h.value)) continue;
    if (f.match.queryParams?.some((q) => firstQueryValue(req.query, q.name) !== q.value)) continue;
    const key = [
      rank,
      -['Exact', 'PathPrefix', 'RegularExpression'].indexOf(type),
      value.length,
      f.match.method ? 1 : 0,
      f.match.headers?.length ?? 0,
      f.match.queryParams?.length ?? 0,
      -f.routeIndex,
      -f.ruleIndex,
    ];
    if (!bestKey || greater(key, bestKey)) {
      best = f;
      bestKey = key;
    }
  }
  return best;
}

function nsPerCall(fn: () => unknown, iterations: number): number {
  for (let i = 0; i < Math.min(iterations, 20_000); i++) fn();
  const runs: number[] = [];
  for (let run = 0; run < 5; run++) {
    const start = process.hrtime.bigint();
    for (let i = 0; i < iterations; i++) fn();
    runs.push(Number(process.hrtime.bigint() - start) / iterations);
  }
  return runs.sort((a, b) => a - b)[2]!;
}

const compileStart = process.hrtime.bigint();
const table = compileRouteTable(routes);
const compileMs = Number(process.hrtime.bigint() - compileStart) / 1e6;
if (table.problems.length > 0) throw new Error(`unexpected problems: ${JSON.stringify(table.problems)}`);

console.log(`${ROUTES} routes (${flat.length} matches); table compiled in ${compileMs.toFixed(1)} ms\n`);
console.log('| request | table ns/match | linear scan ns/match | ratio |');
console.log('|---|---|---|---|');
let total = 0;
for (const [name, req, expected] of scenarios) {
  const got = table.match(req)?.route.route;
  const baseline = linearMatch(req)?.route.route;
  if (got !== expected || baseline !== expected) {
    throw new Error(`${name}: table ${got}, linear ${baseline}, expected ${expected}`);
  }
  const tableNs = nsPerCall(() => table.match(req), 1_000_000);
  const linearNs = nsPerCall(() => linearMatch(req), 2_000);
  total += tableNs;
  console.log(`| ${name} | ${tableNs.toFixed(0)} | ${linearNs.toFixed(0)} | ${(linearNs / tableNs).toFixed(0)}x |`);
}
console.log(`\nmean over the request shapes: ${(total / scenarios.length).toFixed(0)} ns/match`);
