// Packages only some configurations need (gRPC for external services and OTLP/gRPC, the
// OpenTelemetry SDK, the Kubernetes client, undici) are loaded on first use: a gateway that does
// not use them does not carry their memory. Checked in a fresh process, since this test runner's own
// imports would fill the module cache.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { describe, it } from 'node:test';
import { promisify } from 'node:util';

const helpers = new URL('../helpers/gateway.ts', import.meta.url).href;

const PROBE = `
import { createRequire } from 'node:module';
import { aiBackendYaml, freePort, gatewayYaml, llmRouteYaml, startTestGateway, webRouteYaml } from '${helpers}';
const cache = createRequire(import.meta.url).cache;
const loaded = () => {
  const names = new Set();
  for (const file of Object.keys(cache)) {
    const match = /node_modules\\/((?:@[^/]+\\/)?[^/]+)/.exec(file);
    if (match) names.add(match[1]);
  }
  return [...names].sort();
};
// First (the module cache only grows): LLM traffic alone, to an HTTP/1.1 provider.
const llm = await startTestGateway({
  'gw.yaml': gatewayYaml(await freePort()) + aiBackendYaml('gpt', 9, 'alpha: {}', 'sk', '{"*": Completions}') + llmRouteYaml(['gpt']),
});
const llmOnly = loaded();
await llm.stop();
const plain = await startTestGateway({ 'gw.yaml': gatewayYaml(await freePort()) + webRouteYaml(9) });
const withoutExport = loaded();
await plain.stop();
const exporting = await startTestGateway({
  'gw.yaml': gatewayYaml(await freePort()) + webRouteYaml(9) + \`---
apiVersion: gw.dev/v1alpha1
kind: GwPolicy
metadata: {name: telemetry}
spec:
  targetRefs: [{group: gateway.networking.k8s.io, kind: Gateway, name: ai}]
  frontend: {accessLog: {otlp: {url: "http://127.0.0.1:9", protocol: GRPC}}}
\`,
});
const withExport = loaded();
await exporting.stop();
process.stdout.write(JSON.stringify({ llmOnly, withoutExport, withExport }));
`;

const OPTIONAL = [
  '@grpc/grpc-js',
  '@grpc/proto-loader',
  'protobufjs',
  '@opentelemetry/sdk-logs',
  '@opentelemetry/sdk-trace',
  '@kubernetes/client-node',
];

describe('optional packages', () => {
  it('are not loaded by a gateway that does not use them (undici by one serving only LLM traffic), and are once a Frontend exports OTLP', async () => {
    const { stdout } = await promisify(execFile)(process.execPath, ['--input-type=module', '-e', PROBE], {
      timeout: 60_000,
    });
    const { llmOnly, withoutExport, withExport } = JSON.parse(stdout) as {
      llmOnly: string[];
      withoutExport: string[];
      withExport: string[];
    };
    // LLM traffic to an HTTP/1.1 provider goes through gw's own client; a plain HTTP route needs undici.
    assert.ok(llmOnly.includes('yaml'), `the probe sees loaded packages: ${llmOnly.join(', ')}`);
    assert.deepEqual(
      [...OPTIONAL, 'undici'].filter((name) => llmOnly.includes(name)),
      [],
      'loaded without being used',
    );
    assert.ok(withoutExport.includes('undici'), `a plain HTTP route loads undici: ${withoutExport.join(', ')}`);
    assert.deepEqual(
      OPTIONAL.filter((name) => withoutExport.includes(name)),
      [],
      'loaded without being used',
    );
    // (the exporter itself opens its gRPC channel, and loads @grpc/grpc-js, at the first export)
    for (const name of ['@opentelemetry/sdk-logs', '@opentelemetry/exporter-logs-otlp-grpc']) {
      assert.ok(
        withExport.includes(name),
        `${name} is loaded once the access log is exported over OTLP/gRPC (loaded: ${withExport.join(', ')})`,
      );
    }
    assert.ok(!withExport.includes('@kubernetes/client-node'));
  });
});
