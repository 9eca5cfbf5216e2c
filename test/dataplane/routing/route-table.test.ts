import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { RouteConfig, RouteMatch, RuleConfig } from '../../../src/contract/dataplane-config.ts';
import { compileRouteTable, type RouteRequest } from '../../../src/dataplane/routing/route-table.ts';

function rule(matches: RouteMatch[], name?: string): RuleConfig {
  return { ...(name ? { name } : {}), matches, traffic: {}, backendRefs: [] };
}

function route(name: string, hostnames: string[], ...rules: RuleConfig[]): RouteConfig {
  return { route: `default/${name}`, hostnames, rules };
}

const prefix = (value: string, extra: Omit<RouteMatch, 'path'> = {}): RouteMatch => ({
  path: { type: 'PathPrefix', value },
  ...extra,
});
const exact = (value: string, extra: Omit<RouteMatch, 'path'> = {}): RouteMatch => ({
  path: { type: 'Exact', value },
  ...extra,
});
const regex = (value: string, extra: Omit<RouteMatch, 'path'> = {}): RouteMatch => ({
  path: { type: 'RegularExpression', value },
  ...extra,
});

function request(path: string, extra: Partial<RouteRequest> = {}): RouteRequest {
  return { host: 'example.com', path, query: '', method: 'GET', headers: {}, ...extra };
}

interface Case {
  name: string;
  request: RouteRequest;
  /** "route#ruleIndex", or undefined for no match. */
  expect: string | undefined;
}

function check(routes: RouteConfig[], cases: Case[], listenerHostname?: string): void {
  const table = compileRouteTable(routes, listenerHostname);
  assert.deepEqual(table.problems, []);
  for (const c of cases) {
    const found = table.match(c.request);
    const got = found && `${found.route.route.split('/')[1]}#${found.ruleIndex}`;
    assert.equal(got, c.expect, c.name);
  }
}

describe('hostname matching and precedence', () => {
  test('an exact hostname wins over a wildcard, whatever the route order', () => {
    check(
      [route('wild', ['*.example.com'], rule([prefix('/')])), route('exact', ['foo.example.com'], rule([prefix('/')]))],
      [
        { name: 'exact host', request: request('/', { host: 'foo.example.com' }), expect: 'exact#0' },
        { name: 'other subdomain', request: request('/', { host: 'bar.example.com' }), expect: 'wild#0' },
        { name: 'two labels under the wildcard', request: request('/', { host: 'a.b.example.com' }), expect: 'wild#0' },
        {
          name: 'the wildcard does not cover the apex',
          request: request('/', { host: 'example.com' }),
          expect: undefined,
        },
      ],
    );
  });

  test('the longest wildcard wins, and routes without hostnames come last', () => {
    check(
      [
        route('any', [], rule([exact('/x')])),
        route('short', ['*.example.com'], rule([prefix('/')])),
        route('long', ['*.foo.example.com'], rule([prefix('/')])),
      ],
      [
        { name: 'longer wildcard', request: request('/x', { host: 'a.foo.example.com' }), expect: 'long#0' },
        { name: 'shorter wildcard', request: request('/x', { host: 'a.bar.example.com' }), expect: 'short#0' },
        { name: 'no hostname route for other hosts', request: request('/x', { host: 'other.org' }), expect: 'any#0' },
      ],
    );
  });

  test('a more specific hostname wins over a more specific path', () => {
    check(
      [route('any', [], rule([exact('/api/v1')])), route('host', ['api.example.com'], rule([prefix('/')]))],
      [{ name: 'host first', request: request('/api/v1', { host: 'api.example.com' }), expect: 'host#0' }],
    );
  });

  test('when no rule of the most specific hostname matches, less specific hostnames are tried', () => {
    check(
      [
        route('exact', ['foo.example.com'], rule([prefix('/api')])),
        route('wild', ['*.example.com'], rule([prefix('/')])),
      ],
      [
        { name: 'exact host rule', request: request('/api/x', { host: 'foo.example.com' }), expect: 'exact#0' },
        { name: 'falls through to wildcard', request: request('/web', { host: 'foo.example.com' }), expect: 'wild#0' },
      ],
    );
  });

  test('the Host port is ignored, and hosts compare case-insensitively, without a trailing dot', () => {
    check(
      [route('r', ['Foo.Example.com'], rule([prefix('/')])), route('any', [], rule([exact('/ip')]))],
      [
        { name: 'port stripped', request: request('/', { host: 'foo.example.com:8080' }), expect: 'r#0' },
        { name: 'upper case', request: request('/', { host: 'FOO.EXAMPLE.COM' }), expect: 'r#0' },
        { name: 'trailing dot', request: request('/', { host: 'foo.example.com.' }), expect: 'r#0' },
        { name: 'IPv6 literal with port', request: request('/ip', { host: '[::1]:8080' }), expect: 'any#0' },
        { name: 'no Host', request: request('/', { host: '' }), expect: undefined },
      ],
    );
  });

  test('routes without hostnames take the listener hostname; route hostnames outside it are ignored', () => {
    check(
      [
        route('plain', [], rule([prefix('/')])),
        route('outside', ['other.org'], rule([exact('/x')])),
        route('inside', ['a.example.com', 'other.net'], rule([exact('/y')])),
      ],
      [
        { name: 'under the listener wildcard', request: request('/x', { host: 'b.example.com' }), expect: 'plain#0' },
        { name: 'not the listener host', request: request('/', { host: 'other.org' }), expect: undefined },
        { name: 'outside hostnames never match', request: request('/x', { host: 'other.org' }), expect: undefined },
        { name: 'the admitted hostname', request: request('/y', { host: 'a.example.com' }), expect: 'inside#0' },
        { name: 'the dropped hostname', request: request('/y', { host: 'other.net' }), expect: undefined },
      ],
      '*.example.com',
    );
  });

  test('a route wildcard over an exact listener hostname serves that hostname only', () => {
    check(
      [route('wild', ['*.example.com'], rule([prefix('/')]))],
      [
        { name: 'the listener hostname', request: request('/', { host: 'a.example.com' }), expect: 'wild#0' },
        { name: 'another subdomain', request: request('/', { host: 'b.example.com' }), expect: undefined },
      ],
      'a.example.com',
    );
  });
});

describe('path matching', () => {
  test('Exact matches the whole path only', () => {
    check(
      [route('r', [], rule([exact('/foo')]), rule([exact('/bar/')]))],
      [
        { name: 'same path', request: request('/foo'), expect: 'r#0' },
        { name: 'trailing slash differs', request: request('/foo/'), expect: undefined },
        { name: 'case differs', request: request('/Foo'), expect: undefined },
        { name: 'longer', request: request('/foo/bar'), expect: undefined },
        { name: 'exact with trailing slash', request: request('/bar/'), expect: 'r#1' },
        { name: 'exact with trailing slash, request without', request: request('/bar'), expect: undefined },
      ],
    );
  });

  test('PathPrefix matches whole path elements; a trailing slash in the prefix is ignored', () => {
    check(
      [route('r', [], rule([prefix('/foo')]), rule([prefix('/bar/')]))],
      [
        { name: 'the prefix itself', request: request('/foo'), expect: 'r#0' },
        { name: 'with trailing slash', request: request('/foo/'), expect: 'r#0' },
        { name: 'a sub-path', request: request('/foo/bar/baz'), expect: 'r#0' },
        { name: 'not a path element', request: request('/foobar'), expect: undefined },
        { name: 'prefix with slash, request without', request: request('/bar'), expect: 'r#1' },
        { name: 'prefix with slash, sub-path', request: request('/bar/x'), expect: 'r#1' },
        { name: 'prefix with slash, not an element', request: request('/barx'), expect: undefined },
      ],
    );
  });

  test('RegularExpression must match the whole path', () => {
    check(
      [route('r', [], rule([regex('/v[0-9]+/chat')]), rule([regex('(?i)/upper')]), rule([regex('/(?P<id>[a-z]+)/x')]))],
      [
        { name: 'full match', request: request('/v12/chat'), expect: 'r#0' },
        { name: 'no partial match at the end', request: request('/v12/chat/more'), expect: undefined },
        { name: 'no partial match at the start', request: request('/api/v12/chat'), expect: undefined },
        { name: 'RE2 leading flag', request: request('/UPPER'), expect: 'r#1' },
        { name: 'RE2 named group', request: request('/abc/x'), expect: 'r#2' },
      ],
    );
  });

  test('a rule without matches matches every path, and reports no match', () => {
    const table = compileRouteTable([route('r', [], rule([]))]);
    const found = table.match(request('/anything/at/all'));
    assert.equal(found?.ruleIndex, 0);
    assert.equal(found?.match, undefined);
  });
});

describe('precedence between matches', () => {
  test('Exact over PathPrefix over RegularExpression, whatever the route order', () => {
    check(
      [
        route('re', [], rule([regex('/foo.*')])),
        route('pre', [], rule([prefix('/foo')])),
        route('ex', [], rule([exact('/foo')])),
      ],
      [
        { name: 'exact', request: request('/foo'), expect: 'ex#0' },
        { name: 'prefix', request: request('/foo/bar'), expect: 'pre#0' },
        { name: 'regex', request: request('/foobar'), expect: 're#0' },
      ],
    );
  });

  test('the longer prefix wins', () => {
    check(
      [
        route('short', [], rule([prefix('/')])),
        route('mid', [], rule([prefix('/a')])),
        route('long', [], rule([prefix('/a/b')])),
      ],
      [
        { name: 'longest', request: request('/a/b/c'), expect: 'long#0' },
        { name: 'middle', request: request('/a/c'), expect: 'mid#0' },
        { name: 'root', request: request('/c'), expect: 'short#0' },
      ],
    );
  });

  test('the prefix written with more characters wins between equivalent prefixes', () => {
    check(
      [route('plain', [], rule([prefix('/foo')])), route('slash', [], rule([prefix('/foo/')]))],
      [{ name: '/foo/ is longer than /foo', request: request('/foo/x'), expect: 'slash#0' }],
    );
  });

  test('the longer regular expression wins', () => {
    check(
      [route('short', [], rule([regex('/.*')])), route('long', [], rule([regex('/api/.*')]))],
      [{ name: 'longer value', request: request('/api/x'), expect: 'long#0' }],
    );
  });

  test('on equal paths, a method match wins over header matches', () => {
    const headers = [
      { type: 'Exact' as const, name: 'a', value: '1' },
      { type: 'Exact' as const, name: 'b', value: '2' },
    ];
    check(
      [
        route('headers', [], rule([prefix('/', { headers })])),
        route('method', [], rule([prefix('/', { method: 'GET' })])),
      ],
      [
        { name: 'method first', request: request('/', { headers: { a: '1', b: '2' } }), expect: 'method#0' },
        {
          name: 'other method',
          request: request('/', { method: 'POST', headers: { a: '1', b: '2' } }),
          expect: 'headers#0',
        },
      ],
    );
  });

  test('more header matches win', () => {
    check(
      [
        route('one', [], rule([prefix('/', { headers: [{ type: 'Exact', name: 'a', value: '1' }] })])),
        route(
          'two',
          [],
          rule([
            prefix('/', {
              headers: [
                { type: 'Exact', name: 'a', value: '1' },
                { type: 'Exact', name: 'b', value: '2' },
              ],
            }),
          ]),
        ),
      ],
      [
        { name: 'both headers', request: request('/', { headers: { a: '1', b: '2' } }), expect: 'two#0' },
        { name: 'one header', request: request('/', { headers: { a: '1' } }), expect: 'one#0' },
      ],
    );
  });

  test('header matches win over query parameter matches; more query matches win', () => {
    const q = (name: string, value: string) => ({ type: 'Exact' as const, name, value });
    check(
      [
        route('query2', [], rule([prefix('/', { queryParams: [q('x', '1'), q('y', '2')] })])),
        route('header', [], rule([prefix('/', { headers: [{ type: 'Exact', name: 'h', value: '1' }] })])),
        route('query1', [], rule([prefix('/', { queryParams: [q('x', '1')] })])),
      ],
      [
        { name: 'header first', request: request('/', { query: 'x=1&y=2', headers: { h: '1' } }), expect: 'header#0' },
        { name: 'two query matches', request: request('/', { query: 'x=1&y=2' }), expect: 'query2#0' },
        { name: 'one query match', request: request('/', { query: 'x=1' }), expect: 'query1#0' },
      ],
    );
  });

  test('on a full tie the route that comes first wins (the controller orders oldest, then namespace/name)', () => {
    check(
      [route('first', [], rule([prefix('/a')])), route('second', [], rule([prefix('/a')]))],
      [{ name: 'first route', request: request('/a'), expect: 'first#0' }],
    );
    check(
      [route('second', [], rule([prefix('/a')])), route('first', [], rule([prefix('/a')]))],
      [{ name: 'input order decides, not the name', request: request('/a'), expect: 'second#0' }],
    );
  });

  test('within a route, the first rule wins a tie, and precedence applies across its rules', () => {
    check(
      [route('r', [], rule([prefix('/')]), rule([prefix('/')]), rule([exact('/x')]))],
      [
        { name: 'first of equal rules', request: request('/y'), expect: 'r#0' },
        { name: 'a later, more specific rule', request: request('/x'), expect: 'r#2' },
      ],
    );
  });

  test('the winning match of a rule is reported', () => {
    const table = compileRouteTable([route('r', [], rule([exact('/a'), prefix('/b')]))]);
    assert.deepEqual(table.match(request('/b/c'))?.match, prefix('/b'));
  });
});

describe('header, query parameter and method conditions', () => {
  test('header names are case-insensitive, values exact; repeated fields combine; regex headers', () => {
    check(
      [
        route('exact', [], rule([prefix('/e', { headers: [{ type: 'Exact', name: 'X-Tenant', value: 'Blue' }] })])),
        route(
          're',
          [],
          rule([prefix('/r', { headers: [{ type: 'RegularExpression', name: 'x-version', value: 'v[12]' }] })]),
        ),
      ],
      [
        { name: 'exact value', request: request('/e', { headers: { 'x-tenant': 'Blue' } }), expect: 'exact#0' },
        { name: 'value case matters', request: request('/e', { headers: { 'x-tenant': 'blue' } }), expect: undefined },
        { name: 'header absent', request: request('/e'), expect: undefined },
        {
          name: 'repeated field is one combined value',
          request: request('/e', { headers: { 'x-tenant': ['Blue', 'Red'] } }),
          expect: undefined,
        },
        { name: 'regex', request: request('/r', { headers: { 'x-version': 'v2' } }), expect: 're#0' },
        {
          name: 'regex is a full match',
          request: request('/r', { headers: { 'x-version': 'v22' } }),
          expect: undefined,
        },
      ],
    );
  });

  test('of header matches with equivalent names only the first counts', () => {
    check(
      [
        route(
          'r',
          [],
          rule([
            prefix('/', {
              headers: [
                { type: 'Exact', name: 'X-A', value: '1' },
                { type: 'Exact', name: 'x-a', value: '2' },
              ],
            }),
          ]),
        ),
      ],
      [{ name: 'first entry', request: request('/', { headers: { 'x-a': '1' } }), expect: 'r#0' }],
    );
  });

  test('query parameters: exact or regex on the first, decoded value; names are case-sensitive', () => {
    check(
      [
        route('exact', [], rule([prefix('/e', { queryParams: [{ type: 'Exact', name: 'model', value: 'gpt 4' }] })])),
        route(
          're',
          [],
          rule([prefix('/r', { queryParams: [{ type: 'RegularExpression', name: 'n', value: '[0-9]+' }] })]),
        ),
      ],
      [
        { name: 'plus as space', request: request('/e', { query: 'model=gpt+4' }), expect: 'exact#0' },
        { name: 'escape', request: request('/e', { query: '?a=1&model=gpt%204' }), expect: 'exact#0' },
        {
          name: 'first value of repeated',
          request: request('/e', { query: 'model=x&model=gpt+4' }),
          expect: undefined,
        },
        { name: 'name case', request: request('/e', { query: 'Model=gpt+4' }), expect: undefined },
        { name: 'absent', request: request('/e', { query: 'other=1' }), expect: undefined },
        { name: 'regex', request: request('/r', { query: 'n=42' }), expect: 're#0' },
        { name: 'regex full match', request: request('/r', { query: 'n=42a' }), expect: undefined },
      ],
    );
  });

  test('method', () => {
    check(
      [route('r', [], rule([prefix('/', { method: 'POST' })]))],
      [
        { name: 'same method', request: request('/', { method: 'POST' }), expect: 'r#0' },
        { name: 'other method', request: request('/', { method: 'GET' }), expect: undefined },
      ],
    );
  });

  test('no match, and no routes, give undefined', () => {
    check(
      [route('r', [], rule([exact('/a')]))],
      [{ name: 'no rule matches', request: request('/b'), expect: undefined }],
    );
    check([], [{ name: 'empty table', request: request('/'), expect: undefined }]);
  });
});

describe('path normalisation before matching', () => {
  test('dot-segments, repeated slashes and escaped unreserved characters cannot bypass a route', () => {
    check(
      [route('public', [], rule([prefix('/public')])), route('admin', [], rule([prefix('/admin')]))],
      [
        { name: 'dot-dot', request: request('/public/../admin'), expect: 'admin#0' },
        { name: 'escaped dots', request: request('/public/%2e%2E/admin/x'), expect: 'admin#0' },
        { name: 'dot', request: request('/./admin'), expect: 'admin#0' },
        { name: 'double slash', request: request('//admin'), expect: 'admin#0' },
        { name: 'escaped letter', request: request('/%61dmin'), expect: 'admin#0' },
        { name: 'dot-dot above the root', request: request('/../../admin'), expect: 'admin#0' },
        { name: 'escaped slash stays data', request: request('/public%2F..%2Fadmin'), expect: undefined },
        { name: 'malformed escape', request: request('/admin%zz'), expect: undefined },
        { name: 'not origin-form', request: request('admin'), expect: undefined },
      ],
    );
  });

  test('route values are normalised the same way', () => {
    check(
      [route('r', [], rule([exact('/%7euser/a%3ab')]))],
      [
        { name: 'decoded unreserved, upper-case hex', request: request('/~user/a%3Ab'), expect: 'r#0' },
        { name: 'request spelled like the value', request: request('/%7euser/a%3ab'), expect: 'r#0' },
        { name: 'a reserved character is not its escape', request: request('/~user/a:b'), expect: undefined },
      ],
    );
  });
});

describe('problems and result identity', () => {
  test('an invalid or unsupported regular expression is reported and that match never matches', () => {
    const table = compileRouteTable([
      route(
        'r',
        [],
        rule([regex('/(unclosed'), prefix('/ok')]),
        rule([prefix('/h', { headers: [{ type: 'RegularExpression', name: 'x', value: '(a)\\1' }] })]),
        rule([regex('/(?=look)')]),
      ),
    ]);
    assert.deepEqual(
      table.problems.map((p) => [p.route, p.ruleIndex, p.matchIndex, p.field]),
      [
        ['default/r', 0, 0, 'matches[0].path.value'],
        ['default/r', 1, 0, 'matches[0].headers[0].value'],
        ['default/r', 2, 0, 'matches[0].path.value'],
      ],
    );
    assert.match(table.problems[1]!.message, /backreference/);
    assert.match(table.problems[2]!.message, /lookahead/);
    assert.equal(table.match(request('/(unclosed')), undefined);
    assert.equal(table.match(request('/h', { headers: { x: 'aa' } })), undefined);
    assert.equal(table.match(request('/ok'))?.ruleIndex, 0, 'the rule’s other matches still work');
  });

  test('the same result object is returned for every request a match wins', () => {
    const table = compileRouteTable([route('r', ['a.example.com'], rule([prefix('/v1')]))]);
    const first = table.match(request('/v1/x', { host: 'a.example.com' }));
    assert.ok(first);
    assert.equal(table.match(request('/v1/y', { host: 'A.example.com:443' })), first);
  });
});
