// The routing information gw writes into what clients see: prefixed names and URIs, tagged ids,
// folded cursors — each must come back to the same target and original, and anything gw did not
// make must be refused rather than misrouted.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { isInvalid, toMessage } from '../../../src/dataplane/mcp/jsonrpc.ts';
import {
  decodeCursor,
  encodeCursor,
  namingFor,
  prefixedName,
  prefixedUri,
  splitPrefixedName,
  splitPrefixedUri,
  tagId,
  untagId,
} from '../../../src/dataplane/mcp/naming.ts';
import { lowestVersion, offeredVersion } from '../../../src/dataplane/mcp/protocol-version.ts';

const TARGETS = new Set(['alpha', 'beta-2', 'svc.ns']);

describe('MCP naming', () => {
  it('prefixes per prefixMode and the number of targets', () => {
    assert.deepEqual(namingFor('Conditional', 1), { multiplexed: false, prefixNames: false });
    assert.deepEqual(namingFor('Conditional', 2), { multiplexed: true, prefixNames: true });
    assert.deepEqual(namingFor('Always', 1), { multiplexed: true, prefixNames: true });
    assert.deepEqual(namingFor('Never', 1), { multiplexed: false, prefixNames: false });
    assert.deepEqual(namingFor('Never', 3), { multiplexed: true, prefixNames: false });
  });

  it('splits names at the first separator, for known targets only', () => {
    assert.equal(prefixedName('alpha', 'get_weather'), 'alpha_get_weather');
    assert.deepEqual(splitPrefixedName('alpha_get_weather', TARGETS), { target: 'alpha', name: 'get_weather' });
    assert.deepEqual(splitPrefixedName('beta-2_x', TARGETS), { target: 'beta-2', name: 'x' });
    assert.equal(splitPrefixedName('gamma_x', TARGETS), undefined);
    assert.equal(splitPrefixedName('_x', TARGETS), undefined);
    assert.equal(splitPrefixedName('alpha', TARGETS), undefined);
  });

  it('prefixes URIs with a scheme, and splits them back (schemes with + included)', () => {
    assert.equal(prefixedUri('alpha', 'file:///a b'), 'alpha+file:///a b');
    assert.equal(prefixedUri('alpha', 'urn:uuid:1'), 'alpha+urn:uuid:1');
    assert.equal(prefixedUri('alpha', 'relative/path'), 'relative/path');
    assert.deepEqual(splitPrefixedUri('svc.ns+svn+ssh://host/x', TARGETS), {
      target: 'svc.ns',
      uri: 'svn+ssh://host/x',
    });
    assert.equal(splitPrefixedUri('gamma+file:///x', TARGETS), undefined);
    assert.equal(splitPrefixedUri('alpha+not a uri', TARGETS), undefined);
    assert.equal(splitPrefixedUri('file:///x', TARGETS), undefined);
  });

  it('tags ids keeping their type, and refuses ids gw did not tag', () => {
    for (const id of [0, 42, -1, 'abc', 'with_under_scores', '']) {
      const tagged = tagId('beta-2', id);
      assert.deepEqual(untagId(tagged), { target: 'beta-2', id });
    }
    assert.equal(untagId(5), undefined);
    assert.equal(untagId('agw_alpha_n_1'), undefined);
    assert.equal(untagId('gw_alpha_x_1'), undefined);
    assert.equal(untagId('gw_alpha_n_1.5'), undefined);
    assert.equal(untagId('gw_alpha_n_99999999999999999999'), undefined);
  });

  it("folds targets' cursors into one and refuses cursors it did not make", () => {
    assert.equal(encodeCursor([]), undefined);
    const cursor = encodeCursor([
      ['alpha', 'page-2'],
      ['svc.ns', '{"opaque":true}'],
    ])!;
    assert.deepEqual(
      [...decodeCursor(cursor, TARGETS)!],
      [
        ['alpha', 'page-2'],
        ['svc.ns', '{"opaque":true}'],
      ],
    );
    assert.equal(decodeCursor(cursor, new Set(['alpha'])), undefined, 'a target this session lacks');
    assert.equal(decodeCursor('page-2', TARGETS), undefined);
    assert.equal(decodeCursor(`gw1.${Buffer.from('[["alpha",3]]').toString('base64url')}`, TARGETS), undefined);
    assert.equal(decodeCursor(`gw1.${Buffer.from('{').toString('base64url')}`, TARGETS), undefined);
    assert.equal(decodeCursor(`gw1.${'A'.repeat(70_000)}`, TARGETS), undefined);
  });

  it('negotiates: the version asked when known, else the newest; the client gets the lowest', () => {
    assert.equal(offeredVersion('2025-06-18'), '2025-06-18');
    assert.equal(offeredVersion('2099-01-01'), '2025-11-25');
    assert.equal(offeredVersion(undefined), '2025-11-25');
    assert.equal(lowestVersion(['2025-06-18', '2025-03-26'], '2025-11-25'), '2025-03-26');
  });

  it('reads JSON-RPC messages strictly', () => {
    const ok = toMessage({ jsonrpc: '2.0', id: 1, method: 'ping' });
    assert.ok(!isInvalid(ok));
    assert.ok(!isInvalid(toMessage({ jsonrpc: '2.0', method: 'notifications/initialized' })));
    assert.ok(!isInvalid(toMessage({ jsonrpc: '2.0', id: 'x', error: { code: 1, message: 'm' } })));
    for (const bad of [
      [],
      { jsonrpc: '2.0', id: null, method: 'ping' },
      { jsonrpc: '2.0', id: 1.5, method: 'ping' },
      { jsonrpc: '2.0', id: 'x'.repeat(257), method: 'ping' },
      { jsonrpc: '2.0', id: 1, method: '' },
      { jsonrpc: '2.0', id: 1, result: {}, error: { code: 1, message: 'm' } },
      { jsonrpc: '2.0', id: 1, result: [] },
      { jsonrpc: '2.0', id: 1, error: { code: 'x' } },
    ])
      assert.ok(isInvalid(toMessage(bad)), JSON.stringify(bad));
  });
});
