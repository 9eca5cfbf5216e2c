// gw crds: the gw.dev CRDs by default, the Gateway API's with --gateway-api (what
// deploy/gateway-api-crds.yaml holds), the InferencePool's with --inference-extension (what
// deploy/inference-extension-crds.yaml holds), one file per CRD with --output-dir.
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { parseAllDocuments } from 'yaml';
import { runGw } from '../helpers/cli.ts';

const crdNames = (text: string) =>
  parseAllDocuments(text).map((document) => (document.toJS() as { metadata: { name: string } }).metadata.name);

describe('gw crds', () => {
  it("prints gw's CRDs, and with --gateway-api the Gateway API's of deploy/gateway-api-crds.yaml", async () => {
    const gw = await runGw(['crds']);
    assert.equal(gw.code, 0, gw.stderr);
    assert.deepEqual(crdNames(gw.stdout), [
      'gwbackends.gw.dev',
      'gwmodels.gw.dev',
      'gwparameters.gw.dev',
      'gwpolicies.gw.dev',
    ]);
    const gatewayApi = await runGw(['crds', '--gateway-api']);
    assert.equal(gatewayApi.code, 0, gatewayApi.stderr);
    assert.deepEqual(crdNames(gatewayApi.stdout), [
      'gatewayclasses.gateway.networking.k8s.io',
      'gateways.gateway.networking.k8s.io',
      'listenersets.gateway.networking.k8s.io',
      'httproutes.gateway.networking.k8s.io',
      'referencegrants.gateway.networking.k8s.io',
    ]);
    assert.equal(
      gatewayApi.stdout,
      readFileSync(new URL('../../deploy/gateway-api-crds.yaml', import.meta.url), 'utf8'),
    );
  });

  it("with --inference-extension the InferencePool's of deploy/inference-extension-crds.yaml; not with --gateway-api too", async () => {
    const inference = await runGw(['crds', '--inference-extension']);
    assert.equal(inference.code, 0, inference.stderr);
    assert.deepEqual(crdNames(inference.stdout), ['inferencepools.inference.networking.k8s.io']);
    assert.equal(
      inference.stdout,
      readFileSync(new URL('../../deploy/inference-extension-crds.yaml', import.meta.url), 'utf8'),
    );
    const both = await runGw(['crds', '--gateway-api', '--inference-extension']);
    assert.equal(both.code, 2);
    assert.match(both.stderr, /give --gateway-api or --inference-extension, not both/);
  });

  it('--gateway-api --output-dir writes one file per CRD', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'gw-crds-'));
    try {
      const result = await runGw(['crds', '--gateway-api', '--output-dir', dir]);
      assert.equal(result.code, 0, result.stderr);
      assert.deepEqual(readdirSync(dir).sort(), [
        'gateway.networking.k8s.io_gatewayclasses.yaml',
        'gateway.networking.k8s.io_gateways.yaml',
        'gateway.networking.k8s.io_httproutes.yaml',
        'gateway.networking.k8s.io_listenersets.yaml',
        'gateway.networking.k8s.io_referencegrants.yaml',
      ]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
