// Everything provisioning generates can be found again by the controller, which deletes what it
// generated and no longer generates by looking in each kind of PROVISIONED_KIND_KEYS for gw's labels:
// every object of every provisioning golden (test/fixtures/provisioning/*.yaml) is of a listed
// kind and carries what generatedFor() reads, and every listed kind is one the API registry
// defines (the Kubernetes store can only list and watch those).
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { parseAllDocuments } from 'yaml';
import { KINDS } from '../../src/api/kinds/registry.ts';
import { generatedFor } from '../../src/provisioning/labels.ts';
import { PROVISIONED_KIND_KEYS } from '../../src/provisioning/provisioned-kinds.ts';
import { kindKey } from '../../src/store/store.ts';

const FIXTURES = new URL('../fixtures/provisioning/', import.meta.url);
/** Not manifests: the overlay cases (test/provisioning/overlay.test.ts). */
const NOT_MANIFESTS = new Set(['overlays.yaml']);

describe('the kinds provisioning writes', () => {
  it("every generated object in the goldens is of a listed kind, and recognisably gw's", () => {
    let objects = 0;
    for (const file of readdirSync(FIXTURES).filter((name) => name.endsWith('.yaml') && !NOT_MANIFESTS.has(name))) {
      for (const document of parseAllDocuments(readFileSync(new URL(file, FIXTURES), 'utf8'))) {
        const object = document.toJS();
        objects++;
        assert.ok(
          PROVISIONED_KIND_KEYS.includes(kindKey(object)),
          `${file}: ${object.kind} is not in PROVISIONED_KIND_KEYS`,
        );
        assert.deepEqual(
          generatedFor(object),
          {
            name: object.metadata.labels['gateway.networking.k8s.io/gateway-name'],
            namespace: object.metadata.namespace ?? object.metadata.labels['gw.dev/gateway-namespace'],
          },
          `${file}: ${object.kind} ${object.metadata.name}`,
        );
      }
    }
    assert.ok(objects > 20, 'the goldens were read');
  });

  it('every listed kind is defined in the API registry', () => {
    const defined = new Set(KINDS.map((kind) => `${kind.group}/${kind.kind}`));
    assert.deepEqual(
      PROVISIONED_KIND_KEYS.filter((kind) => !defined.has(kind)),
      [],
    );
  });

  it("an object with gw's labels but no controlling Gateway owner is not gw's (when namespaced), nor a cluster-scoped one without the Gateway's namespace", () => {
    const labels = { 'app.kubernetes.io/managed-by': 'gw', 'gateway.networking.k8s.io/gateway-name': 'ai' };
    assert.equal(generatedFor({ metadata: { name: 'x', namespace: 'team-a', labels } }), undefined);
    assert.equal(generatedFor({ metadata: { name: 'x', labels } }), undefined);
    assert.deepEqual(
      generatedFor({ metadata: { name: 'x', labels: { ...labels, 'gw.dev/gateway-namespace': 'team-b' } } }),
      { name: 'ai', namespace: 'team-b' },
    );
    assert.equal(
      generatedFor({ metadata: { name: 'x', labels: { ...labels, 'app.kubernetes.io/managed-by': 'helm' } } }),
      undefined,
    );
  });
});
