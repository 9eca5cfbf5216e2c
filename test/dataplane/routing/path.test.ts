import assert from 'node:assert/strict';
import { test } from 'node:test';
import { routingHost } from '../../../src/dataplane/routing/host.ts';
import { normalizePath } from '../../../src/dataplane/routing/path.ts';
import { firstQueryValue } from '../../../src/dataplane/routing/query.ts';
import { compileFullMatch } from '../../../src/dataplane/routing/regex.ts';

test('normalizePath: RFC 3986 dot-segments, merged slashes, unreserved escapes decoded', () => {
  const cases: [string, string | undefined][] = [
    ['/', '/'],
    ['/a/b', '/a/b'],
    ['/a/b/', '/a/b/'],
    ['/a/./b', '/a/b'],
    ['/a/../b', '/b'],
    ['/a/b/..', '/a/'],
    ['/a/b/.', '/a/b/'],
    ['/..', '/'],
    ['/../../x', '/x'],
    ['//a///b//', '/a/b/'],
    ['/a/..b/.c', '/a/..b/.c'],
    ['/%61%62c', '/abc'],
    ['/%2e%2E/x', '/x'],
    ['/a%2fb', '/a%2Fb'],
    ['/a%20b', '/a%20b'],
    ['/a%7e', '/a~'],
    ['/bad%2', undefined],
    ['/bad%g0', undefined],
    ['relative', undefined],
    ['', undefined],
    ['*', undefined],
  ];
  for (const [input, expected] of cases) assert.equal(normalizePath(input), expected, input);
});

test('normalizePath returns an already-normal path itself', () => {
  const path = '/v1/chat/completions';
  assert.equal(normalizePath(path), path);
});

test('routingHost drops the port, lower-cases and drops a trailing dot', () => {
  assert.equal(routingHost('API.Example.com:8443'), 'api.example.com');
  assert.equal(routingHost('example.com.'), 'example.com');
  assert.equal(routingHost('[::1]:80'), '[::1]');
  assert.equal(routingHost('[::1]'), '[::1]');
});

test('firstQueryValue finds the first occurrence and decodes it', () => {
  assert.equal(firstQueryValue('?a=1&b=2&a=3', 'a'), '1');
  assert.equal(firstQueryValue('a=1&b=2', 'b'), '2');
  assert.equal(firstQueryValue('flag&b=2', 'flag'), '');
  assert.equal(firstQueryValue('ab=1', 'a'), undefined);
  assert.equal(firstQueryValue('x%20y=a+b%21', 'x y'), 'a b!');
  assert.equal(firstQueryValue('a=%zz', 'a'), '%zz');
  assert.equal(firstQueryValue('', 'a'), undefined);
  assert.equal(firstQueryValue('&&a=1', 'a'), '1');
});

test('compileFullMatch: RE2 spellings translated, JavaScript-only constructs rejected', () => {
  const ok = (pattern: string, input: string, expected: boolean) => {
    const regex = compileFullMatch(pattern);
    assert.ok(regex instanceof RegExp, `${pattern}: ${regex}`);
    assert.equal(regex.test(input), expected, `${pattern} on ${input}`);
  };
  ok('/a|/b', '/b', true); // alternation is inside the anchors
  ok('/a|/b', '/b/c', false);
  ok('(?i)abc', 'ABC', true);
  ok('(?s)a.b', 'a\nb', true);
  ok('\\Aab\\z', 'ab', true);
  ok('[]a]+', ']a]', true);
  ok('[^]a]', 'b', true);
  ok('\\x41\\d', 'A1', true);
  ok('(?P<year>[0-9]{4})', '2024', true);
  ok('a\\.b', 'a.b', true);
  ok('a\\.b', 'axb', false);
  for (const [pattern, reason] of [
    ['(a)\\1', /backreference/],
    ['a(?=b)b', /lookahead/],
    ['(?<!a)b', /lookbehind/],
    ['\\pL', /escape \\p/],
    ['\\Qa.b\\E', /escape \\Q/],
    ['(?m)^a$', /flag m/],
    ['(unclosed', /./],
    ['trailing\\', /trailing backslash/],
  ] as const) {
    const result = compileFullMatch(pattern);
    assert.ok(result instanceof Error, pattern);
    assert.match(result.message, reason, pattern);
  }
});
