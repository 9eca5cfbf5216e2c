// passthrough: the client's own credential is forwarded (and only then).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { applied, compiledAuth } from './helpers.ts';

test("passthrough forwards the client's Authorization and x-api-key as they are", () => {
  const auth = compiledAuth({ passthrough: {} });
  assert.equal(auth.mode, 'passthrough');
  assert.deepEqual(applied(auth, { authorization: 'Bearer client-key' }).headers, {
    authorization: 'Bearer client-key',
  });
  assert.deepEqual(applied(auth, { authorization: 'Basic dTpw' }).headers, { authorization: 'Basic dTpw' });
  assert.deepEqual(applied(auth, { 'x-api-key': 'client-key' }).headers, { 'x-api-key': 'client-key' });
  assert.deepEqual(applied(auth, {}).headers, {});
});

test('passthrough never forwards Proxy-Authorization (it is addressed to gw)', () => {
  const auth = compiledAuth({ passthrough: {} });
  assert.deepEqual(applied(auth, { 'proxy-authorization': 'Basic eDp5' }).headers, {});
});

test('passthrough to gamma: a Bearer API key moves to x-api-key; an OAuth token stays', () => {
  const auth = compiledAuth({ passthrough: {} }, { keyStyle: 'x-api-key' });
  assert.deepEqual(applied(auth, { authorization: 'Bearer sk-ant-api03-k' }).headers, {
    'x-api-key': 'sk-ant-api03-k',
  });
  assert.deepEqual(applied(auth, { authorization: 'Bearer sk-ant-oat01-t' }).headers, {
    authorization: 'Bearer sk-ant-oat01-t',
  });
  assert.deepEqual(applied(auth, { 'x-api-key': 'sk-ant-api03-k' }).headers, { 'x-api-key': 'sk-ant-api03-k' });
});

test('passthrough with a location writes the client token there', () => {
  const auth = compiledAuth({ passthrough: {}, location: { header: { name: 'X-Upstream-Token' } } });
  assert.deepEqual(applied(auth, { authorization: 'Bearer client-jwt' }).headers, { 'x-upstream-token': 'client-jwt' });
  assert.deepEqual(applied(auth, { 'x-api-key': 'client-key' }).headers, { 'x-upstream-token': 'client-key' });
  assert.deepEqual(applied(auth, {}).headers, {});
});

test('passthrough writes the token an inbound policy validated (and stripped) to the default location', () => {
  const auth = compiledAuth({ passthrough: {} });
  assert.deepEqual(applied(auth, {}, { credential: 'validated-jwt' }).headers, {
    authorization: 'Bearer validated-jwt',
  });
  const gamma = compiledAuth({ passthrough: {} }, { keyStyle: 'x-api-key' });
  assert.deepEqual(applied(gamma, {}, { credential: 'sk-ant-api03-k' }).headers, { 'x-api-key': 'sk-ant-api03-k' });
  const query = compiledAuth({ passthrough: {}, location: { queryParameter: { name: 'token' } } });
  assert.equal(applied(query, {}, { credential: 'validated-jwt' }).query.get('token'), 'validated-jwt');
});

test('a validated token a header cannot carry is not written', () => {
  const auth = compiledAuth({ passthrough: {} });
  assert.deepEqual(applied(auth, {}, { credential: 'a\r\nX-Evil: 1' }).headers, {});
});

test('passthrough with additional credentials writes both', () => {
  const auth = compiledAuth({
    passthrough: {},
    credentials: [{ location: { header: { name: 'x-extra' } }, secretRef: { name: 'plain' } }],
  });
  const target = applied(auth, { authorization: 'Bearer client' });
  assert.equal(target.headers.authorization, 'Bearer client');
  assert.ok(target.headers['x-extra']);
});
