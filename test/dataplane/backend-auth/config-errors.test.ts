// Backend auth configurations that cannot be used: returned as AuthConfigError naming the field,
// and never quoting a credential.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { inspect } from 'node:util';
import type { BackendAuth } from '../../../src/api/types/backend-auth.ts';
import { authError, compiledAuth, SECRET } from './helpers.ts';

test('two primary credentials are an error', () => {
  assert.equal(authError({ key: SECRET, passthrough: {} }).field, 'passthrough');
});

test('Secret problems name the Secret and the key, never the value', () => {
  const cases: [BackendAuth, string, RegExp][] = [
    [{ secretRef: { name: 'missing' } }, 'secretRef.name', /Secret llm\/missing was not found/],
    [{ secretRef: { name: 'openai', key: 'nope' } }, 'secretRef.key', /Secret llm\/openai has no key "nope"/],
    [{ secretRef: { name: 'empty' } }, 'secretRef.key', /key "Authorization" of Secret llm\/empty is empty/],
    [{ secretRef: { name: 'empty', key: 'blank' } }, 'secretRef.key', /is empty/],
    [{ secretRef: { name: 'openai', kind: 'ConfigMap' } }, 'secretRef.kind', /only a core Secret/],
    [{ secretRef: { name: 'broken' } }, 'secretRef', /characters an HTTP header cannot carry/],
    [
      { secretRef: { name: 'broken', key: 'semicolon' }, location: { cookie: { name: 'c' } } },
      'secretRef',
      /characters a cookie cannot carry/,
    ],
    [{ key: `${SECRET}\u0000` }, 'key', /characters an HTTP header cannot carry/],
    [{ key: '  ' }, 'key', /must not be empty/],
    [
      { credentials: [{ location: { header: { name: 'x' } }, secretRef: { name: 'broken' } }] },
      'credentials[0].secretRef',
      /cannot carry/,
    ],
    [
      { credentials: [{ location: { header: { name: 'x' } }, secretRef: { name: 'gone' } }] },
      'credentials[0].secretRef.name',
      /not found/,
    ],
  ];
  for (const [auth, field, message] of cases) {
    const error = authError(auth);
    assert.equal(error.field, field);
    assert.match(error.message, message);
    assert.ok(!error.message.includes(SECRET), `the message "${error.message}" must not contain the secret`);
    assert.ok(!inspect(error).includes(SECRET));
    assert.ok(!JSON.stringify(error).includes(SECRET));
  }
});

test('invalid locations are refused, naming the field', () => {
  assert.equal(authError({ key: SECRET, location: { header: { name: 'bad header' } } }).field, 'location.header.name');
  assert.equal(
    authError({ key: SECRET, location: { header: { name: 'x', prefix: 'Bearer\r\n' } } }).field,
    'location.header.prefix',
  );
  assert.equal(authError({ key: SECRET, location: { cookie: { name: 'a=b' } } }).field, 'location.cookie.name');
  assert.equal(authError({ key: SECRET, location: {} }).field, 'location');
  assert.equal(
    authError({ key: SECRET, location: { header: { name: 'a' }, cookie: { name: 'b' } } }).message,
    'location: exactly one of header, queryParameter, cookie must be set',
  );
  const credential = authError({
    credentials: [{ location: { queryParameter: { name: '' } }, secretRef: { name: 'plain' } }],
  });
  assert.equal(credential.field, 'credentials[0].location.queryParameter.name');
});

test('more than eight additional credentials are refused', () => {
  const one = { location: { header: { name: 'x' } }, secretRef: { name: 'plain' } };
  assert.equal(authError({ credentials: Array.from({ length: 9 }, () => one) }).field, 'credentials');
  assert.equal(compiledAuth({ credentials: Array.from({ length: 8 }, () => one) }).credentialCount, 8);
});

test('a compiled auth does not show its secret when logged or serialised', () => {
  for (const auth of [
    compiledAuth({ key: SECRET }),
    compiledAuth({ secretRef: { name: 'openai' } }),
    compiledAuth({ credentials: [{ location: { header: { name: 'x' } }, secretRef: { name: 'plain' } }] }),
  ]) {
    assert.ok(!inspect(auth, { depth: 10, showHidden: true }).includes(SECRET));
    assert.ok(!JSON.stringify(auth).includes(SECRET));
    assert.ok(!String(auth).includes(SECRET));
  }
});
