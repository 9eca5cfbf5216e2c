// The pieces of the MCP backend policies: method-key precedence, the header lists a processor
// sees through, the header changes it may make, and the problems a configuration is refused with.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { McpCall } from '../../../src/dataplane/mcp/context.ts';
import { scopeWithHeaders } from '../../../src/dataplane/mcp/hooks.ts';
import { compileMcpPolicy } from '../../../src/dataplane/mcp/policies/compile.ts';
import { compileMethodPhases } from '../../../src/dataplane/mcp/policies/method-phases.ts';
import {
  compileHeaderFilter,
  headerMutation,
  processorHeaders,
} from '../../../src/dataplane/mcp/policies/processor-headers.ts';
import { PolicyRuntime } from '../../../src/dataplane/policies/runtime.ts';
import { isProblem } from '../../../src/dataplane/policies/types.ts';

describe('guardrail method keys', () => {
  it('prefer the exact method, then prefix, then suffix wildcards, then *; longer wildcards first', () => {
    const phase = compileMethodPhases({
      '*': 'Request',
      '*/list': 'Response',
      'tools/*': 'Off',
      'resources/*': 'Request',
      'resources/templates/*': 'Full',
      'tools/call': 'Full',
    });
    assert.equal(phase('tools/call'), 'Full');
    assert.equal(phase('tools/list'), 'Off', 'the namespace owner (prefix) beats */list');
    assert.equal(phase('prompts/list'), 'Response');
    assert.equal(phase('resources/templates/list'), 'Full', 'the longer prefix');
    assert.equal(phase('resources/read'), 'Request');
    assert.equal(phase('ping'), 'Request');
    assert.equal(compileMethodPhases({ 'tools/call': 'Full' })('tools/list'), 'Off', 'unmatched methods bypass');
    assert.equal(
      compileMethodPhases({ '*/setLevel': 'Full', 'logging/*': 'Response' })('logging/setLevel'),
      'Response',
    );
  });
});

describe('guardrail processor headers', () => {
  const call = {
    info: { method: 'tools/call' },
    headers: { 'x-tenant': 'acme', 'x-multi': ['a', 'b'], authorization: 'Bearer t', 'x-latin': 'caf\u00e9' },
    pseudoHeaders: { ':authority': 'gw.example', ':method': 'POST', ':path': '/mcp', ':scheme': 'https' },
    cel: () => ({}),
  } as McpCall;
  const pairs = (allowed?: string[], disallowed?: string[]) =>
    processorHeaders(call, compileHeaderFilter(allowed, disallowed)).map((h) => [h.key, h.value.toString('latin1')]);

  it('sends everything, pseudo-headers first and one entry per value, when the allow list is empty', () => {
    assert.deepEqual(pairs([], ['AUTHORIZATION']), [
      [':authority', 'gw.example'],
      [':method', 'POST'],
      [':path', '/mcp'],
      [':scheme', 'https'],
      ['x-tenant', 'acme'],
      ['x-multi', 'a'],
      ['x-multi', 'b'],
      ['x-latin', 'caf\u00e9'],
    ]);
  });

  it('sends only the allowed names (case-insensitive), the deny list winning', () => {
    assert.deepEqual(pairs(['X-Multi', ':Path', 'Authorization'], ['authorization']), [
      [':path', '/mcp'],
      ['x-multi', 'a'],
      ['x-multi', 'b'],
    ]);
  });

  it('applies header changes to the targets headers, never to connection or MCP transport headers', () => {
    const mutation = headerMutation(
      [
        { key: 'X-Tenant', value: Buffer.from('one') },
        { key: 'x-tenant', value: Buffer.from('two') },
        { key: 'bad name', value: Buffer.from('v') },
        { key: 'x-newline', value: Buffer.from('a\r\nb') },
        { key: 'connection', value: Buffer.from('close') },
        { key: 'mcp-session-id', value: Buffer.from('forged') },
      ],
      ['X-Drop'],
    )!;
    const scope = { headers: { 'x-drop': '1', 'x-keep': 'k' }, incoming: {}, timeoutMs: undefined, sink: undefined };
    assert.deepEqual(scopeWithHeaders(scope, [mutation]).headers, { 'x-keep': 'k', 'x-tenant': ['one', 'two'] });
    assert.deepEqual(scope.headers, { 'x-drop': '1', 'x-keep': 'k' }, 'the client scope is left as it was');
    assert.equal(headerMutation([], []), undefined);
  });
});

describe('MCP policy configuration problems', () => {
  const context = { backends: {}, namespace: 'default', runtime: new PolicyRuntime() };
  const problem = (policy: unknown) => {
    const compiled = compileMcpPolicy(policy as never, context);
    assert.ok(isProblem(compiled), JSON.stringify(compiled));
    return compiled;
  };

  it('names the field that cannot work', () => {
    assert.equal(
      problem({ authorization: { policy: { matchExpressions: ['true', 'jwt.sub =='] } } }).field,
      'backend.mcp.authorization.policy.matchExpressions[1]',
    );
    assert.equal(
      problem({
        guardrails: { processors: [{ remote: { backendRef: { name: 'nowhere' } }, methods: { '*': 'Full' } }] },
      }).field,
      'backend.mcp.guardrails.processors[0].remote.backendRef',
    );
    assert.equal(
      problem({
        guardrails: {
          processors: [{ remote: { url: 'http://127.0.0.1:1', metadata: { who: '(' } }, methods: { '*': 'Full' } }],
        },
      }).field,
      'backend.mcp.guardrails.processors[0].remote.metadata.who',
    );
  });
});
