// Golden tests of the Gateway API translation: each directory under
// test/fixtures/controller/gateway-api holds input.yaml (objects, admitted as `gw validate` admits
// them) and expected.yaml (every status and the effective listeners). UPDATE_GOLDEN=1 rewrites
// the expected files from the current output; without it they are only read and compared.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { parse, stringify } from 'yaml';
import { parseResources } from '../../src/api/load/documents.ts';
import { admit, type KubeObject } from '../../src/api/validate/admission.ts';
import { formatFieldError } from '../../src/api/validate/errors.ts';
import { effectiveHostnames, intersectHostname } from '../../src/contract/hostnames.ts';
import { type GatewayApiResult, translateGatewayApi } from '../../src/controller/gateway-api/index.ts';
import { snapshotOf } from '../../src/controller/snapshot.ts';

const NOW = '2026-01-01T00:00:00Z';
const fixtureDir = new URL('../fixtures/controller/gateway-api/', import.meta.url).pathname;
const update = process.env.UPDATE_GOLDEN === '1';

function loadObjects(file: string): KubeObject[] {
  const loaded = parseResources(readFileSync(file, 'utf8'), file);
  assert.deepEqual(loaded.problems, [], `${file} does not load`);
  return loaded.documents.map((document) => {
    const result = admit(document.value);
    const where = `${file}: document ${document.document}`;
    assert.deepEqual(result.errors.map(formatFieldError), [], `${where} is not admitted`);
    const object = result.object!;
    // A store sets generation on create; fixtures leave it out.
    object.metadata.generation ??= 1;
    return object;
  });
}

/** The result as plain data: Maps become objects with their keys in order. */
function plain(result: GatewayApiResult): unknown {
  return JSON.parse(
    JSON.stringify({
      gatewayClassStatuses: Object.fromEntries(result.gatewayClassStatuses),
      gatewayStatuses: Object.fromEntries(result.gatewayStatuses),
      listenerSetStatuses: Object.fromEntries(result.listenerSetStatuses),
      routeStatuses: Object.fromEntries(result.routeStatuses),
      listeners: Object.fromEntries(result.listeners),
    }),
  );
}

describe('Gateway API translation (golden)', () => {
  const cases = readdirSync(fixtureDir, { withFileTypes: true })
    .filter((entry) => entry.isDirectory())
    .map((entry) => entry.name)
    .sort();
  for (const name of cases) {
    it(name, () => {
      const dir = join(fixtureDir, name);
      const actual = plain(translateGatewayApi(snapshotOf(loadObjects(join(dir, 'input.yaml'))), NOW));
      const expectedFile = join(dir, 'expected.yaml');
      if (update) writeFileSync(expectedFile, stringify(actual, { lineWidth: 0 }));
      assert.deepEqual(actual, parse(readFileSync(expectedFile, 'utf8')));
    });
  }
});

describe('Gateway API translation', () => {
  it('is deterministic: the same snapshot in any order gives the same result', () => {
    const objects = loadObjects(join(fixtureDir, 'listener-sets', 'input.yaml'));
    const forward = plain(translateGatewayApi(snapshotOf(objects), NOW));
    const backward = plain(translateGatewayApi(snapshotOf([...objects].reverse()), NOW));
    assert.deepEqual(backward, forward);
    assert.equal(JSON.stringify(backward), JSON.stringify(forward));
  });

  it('does not modify the objects of the snapshot', () => {
    for (const name of readdirSync(fixtureDir).sort()) {
      const objects = loadObjects(join(fixtureDir, name, 'input.yaml'));
      const before = structuredClone(objects);
      const result = translateGatewayApi(snapshotOf(objects), NOW);
      assert.deepEqual(objects, before, name);
      // The listeners are plain data: serialising them loses nothing.
      const listeners = Object.fromEntries(result.listeners);
      assert.deepEqual(JSON.parse(JSON.stringify(listeners)), listeners, name);
    }
  });

  it('intersects hostnames as Gateway API does', () => {
    assert.equal(intersectHostname('api.example.com', 'api.example.com'), 'api.example.com');
    assert.equal(intersectHostname('*.example.com', 'a.b.example.com'), 'a.b.example.com');
    assert.equal(intersectHostname('*.example.com', 'example.com'), undefined);
    assert.equal(intersectHostname('api.example.com', '*.example.com'), 'api.example.com');
    assert.equal(intersectHostname('*.example.com', '*.a.example.com'), '*.a.example.com');
    assert.equal(intersectHostname('*.a.example.com', '*.example.com'), '*.a.example.com');
    assert.equal(intersectHostname('*.example.com', '*.example.org'), undefined);
    assert.equal(intersectHostname('*.example.com', 'xexample.com'), undefined);
    assert.deepEqual(effectiveHostnames(undefined, []), []);
    assert.deepEqual(effectiveHostnames('a.example.com', []), ['a.example.com']);
    assert.deepEqual(effectiveHostnames(undefined, ['b.example.com', 'b.example.com']), ['b.example.com']);
    assert.equal(effectiveHostnames('a.example.com', ['b.example.com']), undefined);
  });
});
