import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { RouteMatch, RuleConfig } from '../../../src/contract/dataplane-config.ts';
import {
  applyRequestFilters,
  applyResponseFilters,
  compileFilters,
  compileRuleFilters,
  type ForwardRequest,
  type HeaderBag,
  modifyPath,
  type RedirectSource,
  redirectResponse,
} from '../../../src/dataplane/routing/filters.ts';

const prefixMatch = (value: string): RouteMatch[] => [{ path: { type: 'PathPrefix', value } }];

function forward(path: string, headers: HeaderBag = {}): ForwardRequest {
  return { path, query: '', headers: { host: 'gw.example.com', ...headers } };
}

describe('header modifiers', () => {
  test('RequestHeaderModifier: set replaces, add appends with a comma, remove deletes (Gateway API example)', () => {
    const filters = compileFilters(
      [
        {
          type: 'RequestHeaderModifier',
          requestHeaderModifier: {
            set: [{ name: 'X-Header-Set', value: 'set-overwrites-values' }],
            add: [
              { name: 'X-Header-Add', value: 'header-val-1' },
              { name: 'X-Header-Add-Append', value: 'header-val-2' },
            ],
            remove: ['X-Header-Remove'],
          },
        },
      ],
      prefixMatch('/'),
    );
    assert.deepEqual(filters.problems, []);
    const request = forward('/x', {
      'x-header-remove': 'remove-val',
      'x-header-add-append': 'append-val-1',
      'x-header-set': 'set-val',
    });
    applyRequestFilters(filters, request);
    assert.deepEqual(request.headers, {
      host: 'gw.example.com',
      'x-header-set': 'set-overwrites-values',
      'x-header-add': 'header-val-1',
      'x-header-add-append': 'append-val-1,header-val-2',
    });
  });

  test('of equivalent names only the first entry counts', () => {
    const filters = compileFilters(
      [
        {
          type: 'RequestHeaderModifier',
          requestHeaderModifier: {
            set: [
              { name: 'X-A', value: 'first' },
              { name: 'x-a', value: 'second' },
            ],
          },
        },
      ],
      prefixMatch('/'),
    );
    const request = forward('/');
    applyRequestFilters(filters, request);
    assert.equal(request.headers['x-a'], 'first');
  });

  test('ResponseHeaderModifier works on response headers, appending to repeated fields', () => {
    const filters = compileFilters(
      [
        {
          type: 'ResponseHeaderModifier',
          responseHeaderModifier: {
            set: [{ name: 'Cache-Control', value: 'no-store' }],
            add: [{ name: 'Set-Cookie', value: 'b=2' }],
            remove: ['Server'],
          },
        },
      ],
      prefixMatch('/'),
    );
    const headers: HeaderBag = { 'cache-control': 'max-age=60', 'set-cookie': ['a=1'], server: 'upstream' };
    applyResponseFilters(filters, headers);
    assert.deepEqual(headers, { 'cache-control': 'no-store', 'set-cookie': ['a=1', 'b=2'] });
    const untouched = forward('/');
    applyRequestFilters(filters, untouched);
    assert.deepEqual(untouched.headers, { host: 'gw.example.com' }, 'response filters leave the request alone');
  });
});

describe('URLRewrite', () => {
  // The table of Gateway API's HTTPPathModifier documentation.
  const prefixTable: [path: string, prefix: string, replacement: string, expected: string][] = [
    ['/foo/bar', '/foo', '/xyz', '/xyz/bar'],
    ['/foo/bar', '/foo', '/xyz/', '/xyz/bar'],
    ['/foo/bar', '/foo/', '/xyz', '/xyz/bar'],
    ['/foo/bar', '/foo/', '/xyz/', '/xyz/bar'],
    ['/foo', '/foo', '/xyz', '/xyz'],
    ['/foo/', '/foo', '/xyz', '/xyz/'],
    ['/foo/bar', '/foo', '', '/bar'],
    ['/foo/', '/foo', '', '/'],
    ['/foo', '/foo', '', '/'],
    ['/foo/', '/foo', '/', '/'],
    ['/foo', '/foo', '/', '/'],
    // The conformance test HTTPRouteRewritePath.
    ['/prefix/one/two', '/prefix/one', '/one', '/one/two'],
    ['/strip-prefix/three', '/strip-prefix', '/', '/three'],
    ['/strip-prefix', '/strip-prefix', '/', '/'],
    [
      '/prefix/rewrite-path-and-modify-headers/one',
      '/prefix/rewrite-path-and-modify-headers',
      '/prefix',
      '/prefix/one',
    ],
    // The `/` prefix: everything is below it.
    ['/a/b', '/', '/api', '/api/a/b'],
  ];
  for (const [path, prefix, replacement, expected] of prefixTable) {
    test(`ReplacePrefixMatch ${JSON.stringify(replacement)} for prefix ${prefix} on ${path} gives ${expected}`, () => {
      const filters = compileFilters(
        [{ type: 'URLRewrite', urlRewrite: { path: { type: 'ReplacePrefixMatch', replacePrefixMatch: replacement } } }],
        prefixMatch(prefix),
      );
      assert.deepEqual(filters.problems, []);
      const request = forward(path);
      applyRequestFilters(filters, request);
      assert.equal(request.path, expected);
    });
  }

  test('ReplaceFullPath replaces the whole path; the query is untouched', () => {
    const filters = compileFilters(
      [{ type: 'URLRewrite', urlRewrite: { path: { type: 'ReplaceFullPath', replaceFullPath: '/one' } } }],
      prefixMatch('/full/one'),
    );
    const request = { ...forward('/full/one/two'), query: 'a=1' };
    applyRequestFilters(filters, request);
    assert.equal(request.path, '/one');
    assert.equal(request.query, 'a=1');
  });

  test('hostname replaces the Host sent upstream', () => {
    const filters = compileFilters(
      [{ type: 'URLRewrite', urlRewrite: { hostname: 'backend.internal' } }],
      prefixMatch('/'),
    );
    const request = forward('/x');
    applyRequestFilters(filters, request);
    assert.equal(request.headers.host, 'backend.internal');
    assert.equal(request.path, '/x');
  });

  test('request filters run in their listed order', () => {
    const rewriteThenSet = compileFilters(
      [
        { type: 'URLRewrite', urlRewrite: { hostname: 'rewritten' } },
        { type: 'RequestHeaderModifier', requestHeaderModifier: { set: [{ name: 'Host', value: 'modified' }] } },
      ],
      prefixMatch('/'),
    );
    const request = forward('/');
    applyRequestFilters(rewriteThenSet, request);
    assert.equal(request.headers.host, 'modified');
  });

  test('a path outside the matched prefix is left alone', () => {
    assert.equal(modifyPath({ type: 'ReplacePrefixMatch', prefix: '/foo', replacement: '/x' }, '/foobar'), '/foobar');
  });
});

describe('RequestRedirect', () => {
  const source = (listenerPort: number, scheme: 'http' | 'https' = 'http'): RedirectSource => ({
    scheme,
    host: 'gw.example.com:1234',
    path: '/p',
    query: '',
    listenerPort,
  });
  const redirect = (spec: Record<string, unknown>, matches = prefixMatch('/')) => {
    const filters = compileFilters([{ type: 'RequestRedirect', requestRedirect: spec }], matches);
    assert.deepEqual(filters.problems, []);
    assert.ok(filters.redirect);
    return filters.redirect;
  };

  // The conformance test HTTPRouteRedirectPortAndScheme, listener by listener.
  const portCases: [listener: number, scheme: 'http' | 'https', spec: Record<string, unknown>, location: string][] = [
    [80, 'http', { hostname: 'example.org' }, 'http://example.org/p'],
    [80, 'http', { hostname: 'example.org', port: 80 }, 'http://example.org/p'],
    [80, 'http', { hostname: 'example.org', port: 8080 }, 'http://example.org:8080/p'],
    [80, 'http', { hostname: 'example.org', scheme: 'https' }, 'https://example.org/p'],
    [80, 'http', { hostname: 'example.org', scheme: 'https', port: 443 }, 'https://example.org/p'],
    [80, 'http', { hostname: 'example.org', scheme: 'https', port: 8443 }, 'https://example.org:8443/p'],
    [8080, 'http', { hostname: 'example.org' }, 'http://example.org:8080/p'],
    [8080, 'http', { hostname: 'example.org', port: 80 }, 'http://example.org/p'],
    [8080, 'http', { hostname: 'example.org', scheme: 'https' }, 'https://example.org/p'],
    [443, 'https', { hostname: 'example.org' }, 'https://example.org/p'],
    [443, 'https', { hostname: 'example.org', port: 443 }, 'https://example.org/p'],
    [443, 'https', { hostname: 'example.org', port: 8443 }, 'https://example.org:8443/p'],
    [443, 'https', { hostname: 'example.org', scheme: 'http' }, 'http://example.org/p'],
    [443, 'https', { hostname: 'example.org', scheme: 'http', port: 80 }, 'http://example.org/p'],
    [443, 'https', { hostname: 'example.org', scheme: 'http', port: 8080 }, 'http://example.org:8080/p'],
  ];
  for (const [listener, scheme, spec, location] of portCases) {
    test(`${scheme} listener on ${listener}, ${JSON.stringify(spec)} → ${location}`, () => {
      const response = redirectResponse(redirect(spec), source(listener, scheme));
      assert.equal(response.location, location);
      assert.equal(response.statusCode, 302);
    });
  }

  test('without hostname the request Host is used, without its port; IPv6 keeps brackets', () => {
    assert.equal(redirectResponse(redirect({ scheme: 'https' }), source(80)).location, 'https://gw.example.com/p');
    assert.equal(
      redirectResponse(redirect({}), { ...source(8080), host: '[::1]:8080' }).location,
      'http://[::1]:8080/p',
    );
  });

  test('status codes: 302 by default, or the one configured', () => {
    for (const statusCode of [301, 302, 303, 307, 308]) {
      assert.equal(redirectResponse(redirect({ statusCode }), source(80)).statusCode, statusCode);
    }
    const bad = compileFilters([{ type: 'RequestRedirect', requestRedirect: { statusCode: 304 } }], prefixMatch('/'));
    assert.match(bad.problems[0]!.message, /status code 304/);
  });

  // The conformance test HTTPRouteRedirectPath.
  test('path: ReplacePrefixMatch and ReplaceFullPath, with the query kept', () => {
    const prefixRedirect = redirect(
      { path: { type: 'ReplacePrefixMatch', replacePrefixMatch: '/replacement-prefix' } },
      prefixMatch('/original-prefix'),
    );
    const at = (path: string, query = '') => ({ ...source(80), path, query });
    assert.equal(
      redirectResponse(prefixRedirect, at('/original-prefix/lemon')).location,
      'http://gw.example.com/replacement-prefix/lemon',
    );
    assert.equal(
      redirectResponse(prefixRedirect, at('/original-prefix', '?a=1&b=2')).location,
      'http://gw.example.com/replacement-prefix?a=1&b=2',
    );
    const full = redirect(
      {
        hostname: 'example.org',
        statusCode: 301,
        path: { type: 'ReplaceFullPath', replaceFullPath: '/replacement-full' },
      },
      prefixMatch('/full-path-and-host'),
    );
    const response = redirectResponse(full, at('/full-path-and-host/x', 'q=1'));
    assert.deepEqual(response, { statusCode: 301, location: 'http://example.org/replacement-full?q=1' });
  });
});

describe('filters this module does not apply', () => {
  test('RequestMirror, CORS, ExtensionRef and unknown types are reported, never skipped', () => {
    const filters = compileFilters(
      [
        { type: 'RequestMirror', requestMirror: { backendRef: { name: 'mirror' } } },
        { type: 'CORS', cors: { allowOrigins: ['*'] } },
        { type: 'ExtensionRef', extensionRef: { group: 'x.io', kind: 'F', name: 'f' } },
        { type: 'ExternalAuth' },
        { type: 'RequestHeaderModifier', requestHeaderModifier: { set: [{ name: 'a', value: '1' }] } },
      ],
      prefixMatch('/'),
    );
    assert.deepEqual(
      filters.problems.map((p) => [p.index, p.type]),
      [
        [0, 'RequestMirror'],
        [1, 'CORS'],
        [2, 'ExtensionRef'],
        [3, 'ExternalAuth'],
      ],
    );
    assert.equal(filters.request.length, 1, 'the supported filter is still compiled');
  });

  test('types the caller implements are handed back in order instead', () => {
    const mirror = { type: 'RequestMirror', requestMirror: { backendRef: { name: 'mirror' } } };
    const cors = { type: 'CORS', cors: { allowOrigins: ['*'] } };
    const filters = compileFilters([cors, mirror], prefixMatch('/'), { external: ['RequestMirror', 'CORS'] });
    assert.deepEqual(filters.problems, []);
    assert.deepEqual(filters.external, [cors, mirror]);
  });

  test('invalid combinations are reported', () => {
    const notPrefix = compileFilters(
      [{ type: 'URLRewrite', urlRewrite: { path: { type: 'ReplacePrefixMatch', replacePrefixMatch: '/x' } } }],
      [{ path: { type: 'Exact', value: '/a' } }],
    );
    assert.match(notPrefix.problems[0]!.message, /exactly one PathPrefix match/);
    const both = compileFilters(
      [
        { type: 'RequestRedirect', requestRedirect: {} },
        { type: 'URLRewrite', urlRewrite: { hostname: 'x' } },
      ],
      prefixMatch('/'),
    );
    assert.match(both.problems[0]!.message, /cannot be combined/);
    const missing = compileFilters([{ type: 'RequestHeaderModifier' }], prefixMatch('/'));
    assert.match(missing.problems[0]!.message, /without its settings/);
  });
});

test('compileRuleFilters compiles the rule list and each backendRef list against the rule matches', () => {
  const rule: RuleConfig = {
    matches: prefixMatch('/v1'),
    traffic: {},
    filters: [{ type: 'RequestHeaderModifier', requestHeaderModifier: { add: [{ name: 'x-rule', value: '1' }] } }],
    backendRefs: [
      {
        backend: 'Service default/a',
        weight: 1,
        policy: {},
        filters: [
          { type: 'URLRewrite', urlRewrite: { path: { type: 'ReplacePrefixMatch', replacePrefixMatch: '/v2' } } },
        ],
      },
      { backend: 'Service default/b', weight: 1, policy: {} },
    ],
  };
  const compiled = compileRuleFilters(rule);
  const request = forward('/v1/chat');
  applyRequestFilters(compiled.rule, request);
  applyRequestFilters(compiled.backendRefs[0]!, request);
  applyRequestFilters(compiled.backendRefs[1]!, request);
  assert.equal(request.path, '/v2/chat');
  assert.equal(request.headers['x-rule'], '1');
  assert.equal(compiled.backendRefs[1]!.request.length, 0);
});
