// The MCP conformance suite (@modelcontextprotocol/conformance, every server scenario) against the
// conformance fixture directly and through gw fronting it with one target: every scenario that
// passes directly passes through gw. Each side runs in its own child process, concurrently.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { freePort, gatewayYaml, startTestGateway, type TestGateway } from '../../helpers/gateway.ts';
import { type ConformanceFixture, startConformanceFixture } from '../../support/mcp-conformance/fixture.ts';
import { runServerScenarios, type ScenarioResult } from '../../support/mcp-conformance/run-suite.ts';

/**
 * One target, names unchanged (Conditional), on a route that serves every host name: gw's own
 * Origin check refuses the suite's DNS-rebinding request (a foreign Origin and Host over loopback).
 */
function conformanceYaml(targetPort: number): string {
  return `apiVersion: gw.dev/v1alpha1
kind: GwBackend
metadata: {name: conformance}
spec:
  mcp:
    prefixMode: Conditional
    targets:
      - name: fixture
        static: {host: 127.0.0.1, port: ${targetPort}}
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: mcp}
spec:
  parentRefs: [{name: ai}]
  rules: [{backendRefs: [{group: gw.dev, kind: GwBackend, name: conformance}]}]
`;
}

function failuresOf(results: readonly ScenarioResult[]): string {
  return results
    .filter((result) => !result.passed)
    .map((result) => `${result.scenario}: ${result.failures.join('; ')}`)
    .join('\n');
}

describe('MCP conformance suite', () => {
  let fixture: ConformanceFixture;
  let gw: TestGateway;
  let gwUrl: URL;

  before(async () => {
    fixture = await startConformanceFixture();
    const port = await freePort();
    gw = await startTestGateway({ 'gw.yaml': gatewayYaml(port) + conformanceYaml(fixture.port) });
    gwUrl = new URL(`http://127.0.0.1:${port}/mcp`);
  });
  after(async () => {
    await gw.stop();
    await fixture.close();
  });

  it('passes through gw every server scenario the fixture passes directly', async (t) => {
    const [direct, through] = await Promise.all([runServerScenarios(fixture.url), runServerScenarios(gwUrl)]);
    const passedDirectly = direct.filter((result) => result.passed);
    const passedThrough = new Set(through.filter((result) => result.passed).map((result) => result.scenario));
    t.diagnostic(`passed directly ${passedDirectly.length}, through gw ${passedThrough.size}, of ${direct.length}`);

    // The whole suite ran, and the fixture is complete: a failure here is the fixture's.
    assert.ok(direct.length >= 30, `the suite ran ${direct.length} server scenarios`);
    assert.deepEqual(
      through.map((result) => result.scenario).sort(),
      direct.map((result) => result.scenario).sort(),
      'both sides ran the same scenarios',
    );
    assert.equal(failuresOf(direct), '', 'every scenario passes against the fixture directly');

    const lost = passedDirectly.filter((result) => !passedThrough.has(result.scenario));
    assert.deepEqual(
      lost.map((result) => result.scenario),
      [],
      `scenarios that pass directly but fail through gw:\n${failuresOf(through)}`,
    );
  });
});
