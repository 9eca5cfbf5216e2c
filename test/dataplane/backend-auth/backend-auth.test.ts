// key, secretRef, location, additional credentials, and the client's credentials never forwarded.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { applied, compiledAuth, SECRET } from './helpers.ts';

const CLIENT = {
  authorization: 'Bearer gw-inbound-key',
  'x-api-key': 'gw-inbound-key',
  'content-type': 'application/json',
};

test('an inline key goes to Authorization with the Bearer prefix by default', () => {
  const auth = compiledAuth({ key: SECRET });
  assert.equal(auth.mode, 'key');
  const target = applied(auth, CLIENT);
  assert.deepEqual(target.headers, { authorization: `Bearer ${SECRET}`, 'content-type': 'application/json' });
});

test('secretRef reads key Authorization and strips its Bearer prefix', () => {
  const target = applied(compiledAuth({ secretRef: { name: 'openai' } }));
  assert.equal(target.headers.authorization, `Bearer ${SECRET}`);
});

test('secretRef without a Bearer prefix in the default key: the value trimmed', () => {
  const target = applied(compiledAuth({ secretRef: { name: 'plain' } }));
  assert.equal(target.headers.authorization, `Bearer ${SECRET}`);
});

test('secretRef with an explicit key keeps a Bearer prefix in the value', () => {
  const auth = compiledAuth({
    secretRef: { name: 'custom-key', key: 'token' },
    location: { header: { name: 'X-Token' } },
  });
  assert.equal(auth.mode, 'secretRef');
  assert.deepEqual(applied(auth).headers, { 'x-token': `Bearer ${SECRET}` });
});

test('a header location with a prefix replaces any spelling of that header', () => {
  const auth = compiledAuth({ key: SECRET, location: { header: { name: 'Api-Key', prefix: 'Key ' } } });
  const target = applied(auth, { 'API-KEY': 'from-client', accept: '*/*' });
  assert.deepEqual(target.headers, { 'api-key': `Key ${SECRET}`, accept: '*/*' });
});

test('a query parameter location sets the parameter, keeping the others', () => {
  const auth = compiledAuth({ key: SECRET, location: { queryParameter: { name: 'key' } } });
  const target = applied(auth, CLIENT, { query: 'alt=sse&key=client' });
  assert.equal(target.query.toString(), `alt=sse&key=${SECRET}`);
  // The client's own credentials are gone even though the key went elsewhere.
  assert.deepEqual(target.headers, { 'content-type': 'application/json' });
});

test("a cookie location sets the cookie, keeping the client's other cookies", () => {
  const auth = compiledAuth({ key: SECRET, location: { cookie: { name: 'session' } } });
  assert.equal(applied(auth).headers.cookie, `session=${SECRET}`);
  const target = applied(auth, { cookie: 'theme=dark; session=client-value; lang=en' });
  assert.equal(target.headers.cookie, `theme=dark; lang=en; session=${SECRET}`);
  const several = applied(auth, { cookie: ['a=1', 'session=x'] as unknown as string });
  assert.equal(several.headers.cookie, `a=1; session=${SECRET}`);
});

test('additional credentials are written to their own locations, after the primary one', () => {
  const auth = compiledAuth({
    secretRef: { name: 'openai' },
    credentials: [
      { location: { header: { name: 'OpenAI-Organization' } }, secretRef: { name: 'custom-key', key: 'other' } },
      { location: { queryParameter: { name: 'token' } }, secretRef: { name: 'custom-key', key: 'token' } },
      { location: { cookie: { name: 'c' } }, secretRef: { name: 'plain' } },
    ],
  });
  assert.equal(auth.credentialCount, 3);
  const target = applied(auth, CLIENT);
  assert.equal(target.headers.authorization, `Bearer ${SECRET}`);
  assert.equal(target.headers['openai-organization'], 'second-credential');
  // No Bearer stripping for additional credentials: only BackendAuth.secretRef's default key.
  assert.equal(target.query.get('token'), `Bearer ${SECRET}`);
  assert.equal(target.headers.cookie, `c=${SECRET}`);
  assert.equal(target.headers['x-api-key'], undefined);
});

test('additional credentials alone, with no primary credential', () => {
  const auth = compiledAuth({
    credentials: [{ location: { header: { name: 'x-api-key' } }, secretRef: { name: 'plain' } }],
  });
  assert.equal(auth.mode, 'none');
  assert.deepEqual(applied(auth, CLIENT).headers, { 'x-api-key': SECRET, 'content-type': 'application/json' });
});

test('with no backend auth at all, the client credentials are still not forwarded', () => {
  const auth = compiledAuth(undefined);
  assert.equal(auth.mode, 'none');
  const target = applied(auth, { ...CLIENT, 'proxy-authorization': 'Basic eDp5', Authorization: 'Bearer other' });
  assert.deepEqual(target.headers, { 'content-type': 'application/json' });
});

test('gamma: with no location the key goes to x-api-key, and no Authorization is sent', () => {
  const auth = compiledAuth({ secretRef: { name: 'openai' } }, { keyStyle: 'x-api-key' });
  const target = applied(auth, CLIENT);
  assert.deepEqual(target.headers, { 'x-api-key': SECRET, 'content-type': 'application/json' });
});

test('gamma: an OAuth access token stays a Bearer token', () => {
  const auth = compiledAuth({ key: 'sk-ant-oat01-abc' }, { keyStyle: 'x-api-key' });
  assert.deepEqual(applied(auth, CLIENT).headers, {
    authorization: 'Bearer sk-ant-oat01-abc',
    'content-type': 'application/json',
  });
});

test('gamma: an explicit location wins over x-api-key', () => {
  const auth = compiledAuth(
    { key: SECRET, location: { header: { name: 'Authorization', prefix: 'Bearer ' } } },
    { keyStyle: 'x-api-key' },
  );
  assert.deepEqual(applied(auth).headers, { authorization: `Bearer ${SECRET}` });
});

test('the same compiled auth applied twice gives the same request', () => {
  const auth = compiledAuth({ key: SECRET, location: { cookie: { name: 'k' } } });
  const first = applied(auth, { cookie: 'a=1' });
  const second = applied(auth, { cookie: 'a=1' });
  assert.deepEqual(first.headers, second.headers);
});
