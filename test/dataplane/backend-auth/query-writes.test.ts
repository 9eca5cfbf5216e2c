// Whether a compiled backend auth writes the query (the proxy keeps the request's query untouched
// when it does not), the shared read-only query that refuses writes, and takeHeader's handling of
// every spelling of a header.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { takeHeader } from '../../../src/dataplane/auth/backend/headers.ts';
import { NO_QUERY } from '../../../src/dataplane/auth/backend/index.ts';
import { applied, compiledAuth, SECRET } from './helpers.ts';

test('header and cookie locations, and the default ones, write no query', () => {
  assert.equal(compiledAuth(undefined).writesQuery, false);
  assert.equal(compiledAuth({ key: SECRET }).writesQuery, false);
  assert.equal(compiledAuth({ key: SECRET }, { keyStyle: 'x-api-key' }).writesQuery, false);
  assert.equal(compiledAuth({ passthrough: {} }).writesQuery, false);
  assert.equal(compiledAuth({ key: SECRET, location: { header: { name: 'X-Key' } } }).writesQuery, false);
  assert.equal(compiledAuth({ key: SECRET, location: { cookie: { name: 'session' } } }).writesQuery, false);
});

test('a query parameter location, primary or additional, writes the query', () => {
  const primary = compiledAuth({ key: SECRET, location: { queryParameter: { name: 'key' } } });
  assert.equal(primary.writesQuery, true);
  assert.equal(applied(primary).query.get('key'), SECRET);
  const passthrough = compiledAuth({ passthrough: {}, location: { queryParameter: { name: 'key' } } });
  assert.equal(passthrough.writesQuery, true);
  const additional = compiledAuth({
    key: SECRET,
    credentials: [{ secretRef: { name: 'custom-key', key: 'other' }, location: { queryParameter: { name: 'extra' } } }],
  });
  assert.equal(additional.writesQuery, true);
  assert.equal(applied(additional).query.get('extra'), 'second-credential');
});

test('an auth that writes no query applies to NO_QUERY, which stays empty and refuses writes', () => {
  const headers: Record<string, string | string[]> = { authorization: 'Bearer client', accept: '*/*' };
  compiledAuth({ key: SECRET }).apply({ headers, query: NO_QUERY }, { headers: {} });
  assert.deepEqual(headers, { accept: '*/*', authorization: `Bearer ${SECRET}` });
  assert.equal(NO_QUERY.toString(), '');
  assert.throws(() => NO_QUERY.set('a', 'b'));
  assert.throws(() => NO_QUERY.append('a', 'b'));
  assert.throws(() => NO_QUERY.delete('a'));
  assert.equal(NO_QUERY.toString(), '');
});

test('takeHeader removes every spelling and joins their values in order', () => {
  const headers: Record<string, string | string[]> = {
    Cookie: 'a=1',
    accept: '*/*',
    COOKIE: ['b=2', 'c=3'],
    cookie: 'd=4',
    cookies: 'not-the-same',
  };
  assert.equal(takeHeader(headers, 'cookie', '; '), 'a=1; b=2; c=3; d=4');
  assert.deepEqual(headers, { accept: '*/*', cookies: 'not-the-same' });
  assert.equal(takeHeader(headers, 'Accept'), '*/*');
  assert.equal(takeHeader(headers, 'accept'), undefined);
  assert.equal(takeHeader({ 'x-list': ['one', 'two'] }, 'x-list'), 'one, two');
  assert.deepEqual(headers, { cookies: 'not-the-same' });
});
