import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { type Attachment, mergeSection, valuesOf } from '../../src/controller/policies/merge.ts';

function policy(
  name: string,
  level: Attachment['level'],
  fields: Record<string, unknown>,
  options: { section?: Attachment['section']; created?: string; override?: boolean } = {},
): Attachment {
  return {
    source: `GwPolicy default/${name}`,
    namespace: 'default',
    level,
    target: `${level} target`,
    creationTimestamp: options.created ?? '2026-01-01T00:00:00Z',
    section: options.section ?? 'traffic',
    fields,
    override: options.override,
  };
}

describe('policy merge', () => {
  it('merges per field, not deep: the most specific attachment wins a whole field', () => {
    const merged = mergeSection(
      [
        policy('gateway', 'Gateway', { cors: { allowOrigins: ['a'] }, buffer: { request: { maxBytes: '1Mi' } } }),
        policy('route', 'Route', { cors: { allowMethods: ['GET'] } }),
      ],
      'traffic',
    );
    assert.deepEqual(valuesOf(merged), {
      cors: { allowMethods: ['GET'] },
      buffer: { request: { maxBytes: '1Mi' } },
    });
    assert.equal(merged.cors!.from.source, 'GwPolicy default/route');
    assert.deepEqual(
      merged.cors!.overridden.map((p) => p.source),
      ['GwPolicy default/gateway'],
    );
    assert.equal(merged.buffer!.from.source, 'GwPolicy default/gateway');
  });

  it('traffic precedence is Gateway < Listener < Route < Route Rule', () => {
    const merged = mergeSection(
      [
        policy('rule', 'RouteRule', { timeouts: 'rule' }),
        policy('gateway', 'Gateway', { timeouts: 'gateway' }),
        policy('listener', 'Listener', { timeouts: 'listener' }),
        policy('route', 'Route', { timeouts: 'route' }),
      ],
      'traffic',
    );
    assert.equal(merged.timeouts!.value, 'rule');
    assert.deepEqual(
      merged.timeouts!.overridden.map((p) => p.level),
      ['Route', 'Listener', 'Gateway'],
    );
  });

  it('backend precedence ends with the backend, and inline policies beat GwPolicies', () => {
    const merged = mergeSection(
      [
        policy('gateway', 'Gateway', { tls: 'gateway', http: 'gateway', tcp: 'gateway' }, { section: 'backend' }),
        policy('backend', 'Backend', { tls: 'backend', http: 'backend' }, { section: 'backend' }),
        {
          ...policy('inline', 'BackendInline', { tls: 'inline' }, { section: 'backend' }),
          source: 'GwBackend default/openai',
        },
        {
          ...policy('provider', 'SubBackendInline', { http: 'provider' }, { section: 'backend' }),
          source: 'GwBackend default/openai provider primary',
        },
      ],
      'backend',
    );
    assert.deepEqual(valuesOf(merged), { tls: 'inline', http: 'provider', tcp: 'gateway' });
  });

  it('at the same level the older policy wins, then namespace/name', () => {
    const merged = mergeSection(
      [
        policy('b-young', 'Route', { delay: 'young' }, { created: '2026-03-01T00:00:00Z' }),
        policy('z-old', 'Route', { delay: 'old', csrf: 'z' }, { created: '2026-01-01T00:00:00Z' }),
        policy('a-old', 'Route', { csrf: 'a' }, { created: '2026-01-01T00:00:00Z' }),
      ],
      'traffic',
    );
    assert.equal(merged.delay!.value, 'old');
    assert.equal(merged.csrf!.value, 'a');
  });

  it('Override excludes more specific traffic policies, not backend ones', () => {
    const attachments = [
      policy('platform', 'Gateway', { authorization: 'platform' }, { override: true }),
      policy('team', 'Route', { authorization: 'team', delay: 'team' }),
      policy('team-backend', 'Route', { tls: 'team' }, { section: 'backend' }),
    ];
    assert.deepEqual(valuesOf(mergeSection(attachments, 'traffic')), { authorization: 'platform' });
    assert.deepEqual(valuesOf(mergeSection(attachments, 'backend')), { tls: 'team' });
  });

  it('without Override the more specific policy wins', () => {
    const merged = mergeSection(
      [
        policy('platform', 'Gateway', { authorization: 'platform' }),
        policy('team', 'Route', { authorization: 'team' }),
      ],
      'traffic',
    );
    assert.equal(merged.authorization!.value, 'team');
  });
});
