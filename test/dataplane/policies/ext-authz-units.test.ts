// traffic.extAuth pieces on their own: the decision cache, TTL values, how a CheckResponse
// becomes a decision, and the configuration problems the compiler reports.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Duration } from '@marcbachmann/cel-js/evaluator';
import type { ExtAuthOrConditional } from '../../../src/api/types/inbound-auth.ts';
import { DecisionCache, ttlOf } from '../../../src/dataplane/policies/ext-authz/cache.ts';
import { type Decision, forbidden } from '../../../src/dataplane/policies/ext-authz/decision.ts';
import { compileExtAuth } from '../../../src/dataplane/policies/ext-authz/ext-authz.ts';
import { type CheckResponse, decisionOf } from '../../../src/dataplane/policies/ext-authz/grpc-mode.ts';
import { PolicyRuntime } from '../../../src/dataplane/policies/runtime.ts';
import { isProblem } from '../../../src/dataplane/policies/types.ts';
import { compileContext } from '../../helpers/policy-context.ts';

function problemOf(value: ExtAuthOrConditional): { field: string; message: string } {
  const runtime = new PolicyRuntime();
  try {
    const compiled = compileExtAuth(value, compileContext({ runtime }));
    assert.ok(isProblem(compiled), 'expected a problem');
    return compiled;
  } finally {
    runtime.close();
  }
}

type Deny = Extract<Decision, { allow: false }>;

describe('DecisionCache', () => {
  const decision = (status: number): Deny => ({ ...forbidden(), response: { status } });
  const statusOf = (found: Decision | undefined) => (found as Deny | undefined)?.response.status;

  it('forgets entries past their expiry', () => {
    const cache = new DecisionCache(10);
    cache.set('a', decision(401), 1000);
    assert.equal(statusOf(cache.get('a', 999)), 401);
    assert.equal(cache.get('a', 1000), undefined);
    assert.equal(cache.size, 0, 'an expired entry is dropped when found');
  });

  it('keeps at most maxEntries, dropping the least recently used', () => {
    const cache = new DecisionCache(2);
    cache.set('a', decision(401), Number.MAX_SAFE_INTEGER);
    cache.set('b', decision(402), Number.MAX_SAFE_INTEGER);
    assert.ok(cache.get('a', 0));
    cache.set('c', decision(403), Number.MAX_SAFE_INTEGER);
    assert.equal(cache.size, 2);
    assert.ok(cache.get('a', 0));
    assert.equal(cache.get('b', 0), undefined);
    assert.ok(cache.get('c', 0));
  });

  it('does not keep a decision too large for a bounded cache', () => {
    const cache = new DecisionCache(10);
    cache.set(
      'big',
      { ...forbidden(), response: { status: 401, body: Buffer.alloc(100 * 1024) } },
      Number.MAX_SAFE_INTEGER,
    );
    assert.equal(cache.get('big', 0), undefined);
  });
});

describe('ttlOf', () => {
  const now = 1_700_000_000_000;
  it('reads durations, expiry timestamps and epoch seconds; nothing past or unknown', () => {
    assert.equal(ttlOf(new Duration(90n, 0), now), 90_000);
    assert.equal(ttlOf(new Date(now + 5000), now), 5000);
    assert.equal(ttlOf(BigInt(now / 1000 + 30), now), 30_000);
    assert.equal(ttlOf(now / 1000 + 1.5, now), 1500);
    assert.equal(ttlOf(new Date(now - 1), now), undefined);
    assert.equal(ttlOf(new Duration(0n, 0), now), undefined);
    assert.equal(ttlOf('5m', now), undefined);
  });
});

describe('decisionOf (CheckResponse)', () => {
  it('resolves header append semantics as Envoy does, skipping invalid and pseudo headers', () => {
    const decision = decisionOf({
      status: { code: 0 },
      http_response: 'ok_response',
      ok_response: {
        headers: [
          { header: { key: 'X-Set', value: 'v' } },
          { header: { key: 'x-add', value: 'v' }, append: { value: true } },
          { header: { key: 'x-absent', value: 'v' }, append_action: 'ADD_IF_ABSENT' },
          { header: { key: 'x-exists', value: 'v' }, append_action: 'OVERWRITE_IF_EXISTS' },
          { header: { key: 'x-raw', value: 'ignored', raw_value: Buffer.from('raw') } },
          { header: { key: 'x-empty', value: '' } },
          { header: { key: 'bad name', value: 'v' } },
          { header: { key: 'x-crlf', value: 'a\r\nb' } },
          { header: { key: ':path', value: '/elsewhere' } },
        ],
        headers_to_remove: ['X-Gone', ':authority'],
      },
    } as CheckResponse);
    assert.ok(decision.allow);
    assert.deepEqual(
      decision.headers.map((change) => [change.name, change.value, change.action]),
      [
        ['x-set', 'v', 'overwrite'],
        ['x-add', 'v', 'append'],
        ['x-absent', 'v', 'addIfAbsent'],
        ['x-exists', 'v', 'overwriteIfExists'],
        ['x-raw', 'raw', 'overwrite'],
      ],
    );
    assert.deepEqual(decision.removeHeaders, ['x-gone']);
  });

  it("turns the denied status (an enum name or a number) into the answer's, 403 when unset or invalid", () => {
    const status = (code: unknown) =>
      (
        decisionOf({
          status: { code: 16 },
          http_response: 'denied_response',
          denied_response: { status: code === undefined ? null : { code: code as string } },
        }) as Deny
      ).response.status;
    assert.equal(status('TooManyRequests'), 429);
    assert.equal(status(418), 418);
    assert.equal(status(undefined), 403);
    assert.equal(status('Empty'), 403);
    assert.equal(status(42), 403);
  });

  it('gives dynamic metadata as CEL values; the deprecated ok_response field overrides', () => {
    const decision = decisionOf({
      http_response: 'ok_response',
      ok_response: {
        dynamic_metadata: { fields: { level: { kind: 'numberValue', numberValue: 3 } } },
      },
      dynamic_metadata: { fields: { ignored: { kind: 'boolValue', boolValue: true } } },
    });
    assert.deepEqual(decision.metadata, { level: 3n });
  });
});

describe('compileExtAuth problems', () => {
  it('names the field of invalid CEL', () => {
    assert.equal(
      problemOf({ url: 'http://127.0.0.1:1', cache: { key: ['request.'], ttl: '1m' } }).field,
      'traffic.extAuth.cache.key[0]',
    );
    assert.equal(
      problemOf({ url: 'http://127.0.0.1:1', cache: { key: ['1'], ttl: '5 minutes' } }).field,
      'traffic.extAuth.cache.ttl',
    );
    assert.equal(
      problemOf({ url: 'http://127.0.0.1:1', http: { responseMetadata: { user: 'response.(' } } }).field,
      'traffic.extAuth.http.responseMetadata.user',
    );
    assert.equal(
      problemOf({ url: 'http://127.0.0.1:1', grpc: { requestMetadata: { m: '{' } } }).field,
      'traffic.extAuth.grpc.requestMetadata.m',
    );
    assert.equal(
      problemOf({ conditional: [{ condition: 'a ==', policy: { url: 'http://127.0.0.1:1' } }] }).field,
      'traffic.extAuth.conditional[0].condition',
    );
  });

  it('names an endpoint that is not in the configuration', () => {
    const problem = problemOf({ conditional: [{ policy: { backendRef: { name: 'authz', port: 9000 } } }] });
    assert.equal(problem.field, 'traffic.extAuth.conditional[0].policy.backendRef');
    assert.match(problem.message, /Service default\/authz is not available/);
  });
});
