// gw explain and gw status on the examples: what applies where, and every object's conditions.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { runGw as run, spawnGw } from '../helpers/cli.ts';
import { freePort, holdPort, twoListenerGatewayYaml, webRouteYaml } from '../helpers/gateway.ts';
import { until } from '../helpers/until.ts';

const examples = new URL('../../examples/', import.meta.url).pathname;

describe('gw explain', () => {
  it('shows each effective field of a route with what set it and what it overrode', async () => {
    const result = await run(['explain', '-f', examples, 'route', 'default/llm']);
    assert.equal(result.code, 0, result.stderr);
    assert.match(result.stdout, /^HTTPRoute default\/llm on Gateway default\/ai listener http \(port 8080\)$/m);
    assert.match(
      result.stdout,
      / {2}timeouts: \{"request":"300s"\}\n {4}set by GwPolicy default\/llm-route \(Route, on HTTPRoute default\/llm\)\n {4}overrides GwPolicy default\/gateway-defaults \(Gateway, on Gateway default\/ai\)/,
    );
    assert.match(
      result.stdout,
      /backend GwBackend default\/demo-llm:\n {2}http: \{"requestTimeout":"120s"\}\n {4}set by GwPolicy default\/provider-timeouts \(Backend/,
    );
  });

  it('shows a backend on its own and from every route that reaches it', async () => {
    const result = await run(['explain', '-f', examples, 'backend', 'default/demo-llm']);
    assert.equal(result.code, 0, result.stderr);
    assert.match(result.stdout, /^GwBackend default\/demo-llm \(its own policies\):$/m);
    assert.match(
      result.stdout,
      /^GwBackend default\/demo-llm reached from HTTPRoute default\/llm on Gateway default\/ai listener http:$/m,
    );
    assert.match(
      result.stdout,
      / {2}http: \{"requestTimeout":"120s"\}\n {4}set by GwPolicy default\/provider-timeouts \(Backend/,
    );
  });

  it('marks a field the data plane refuses there as refused, with why, instead of effective', async () => {
    const refused = new URL('../fixtures/controller/translate/refused-fields/input.yaml', import.meta.url).pathname;
    const ai = await run(['explain', '-f', refused, 'route', 'default/mixed/chat']);
    assert.equal(ai.code, 0, ai.stderr);
    assert.match(
      ai.stdout,
      / {2}retry: .*\n {4}set by GwPolicy default\/retry-all .*\n {4}REFUSED by the data plane \(the traffic it covers is answered 500\): retry: traffic.retry applies only to HTTP backends/,
    );
    // The same policy on the rule whose backend is plain HTTP is in effect.
    const web = await run(['explain', '-f', refused, 'route', 'default/mixed/web']);
    assert.match(web.stdout, / {2}retry: .*\n {4}set by GwPolicy default\/retry-all/);
    assert.doesNotMatch(web.stdout, /REFUSED by the data plane [^\n]*: retry:/);
    const backend = await run(['explain', '-f', refused, 'backend', 'default/web']);
    assert.match(
      backend.stdout,
      / {4}REFUSED by the data plane .*: tunnel.backendRef.namespace: An endpoint reference resolves only/,
    );
  });

  it('says clearly what is missing', async () => {
    assert.match(
      (await run(['explain', '-f', examples, 'route', 'default/nope'])).stderr,
      /HTTPRoute default\/nope is not in the given files/,
    );
    assert.match(
      (await run(['explain', '-f', examples, 'route', 'default/llm/chat'])).stderr,
      /has no rule named "chat"/,
    );
    assert.equal((await run(['explain', '-f', examples, 'route', 'llm'])).code, 2);
  });
});

describe('gw status', () => {
  it('prints every object with its conditions', async () => {
    const result = await run(['status', '-f', examples]);
    assert.equal(result.code, 0, result.stderr);
    assert.match(
      result.stdout,
      /^GatewayClass gw\n {2}Accepted=True \(Accepted\): Handled by gw.dev\/gateway-controller$/m,
    );
    assert.match(result.stdout, /^HTTPRoute default\/llm\n {2}parent Gateway ai:\n {4}Accepted=True \(Accepted\)/m);
    assert.match(result.stdout, /^GwPolicy default\/llm-route\n {2}ancestor Gateway default\/ai:\n {4}Accepted=True/m);
  });

  it("prints GwParameters' model catalog condition: what is priced, what could not be read, what is ignored", async () => {
    const input = new URL('../fixtures/controller/translate/model-catalog-sources/input.yaml', import.meta.url)
      .pathname;
    const result = await run(['status', '-f', input]);
    assert.equal(result.code, 0, result.stderr);
    assert.match(
      result.stdout,
      /^GwParameters default\/priced\n {2}ModelCatalogResolved=True \(Resolved\): 3 models of 2 providers priced from ConfigMap default\/base catalog\.json, ConfigMap default\/overrides prices\.json$/m,
    );
    assert.match(
      result.stdout,
      /^GwParameters default\/invalid-only\n {2}ModelCatalogResolved=False \(InvalidModelCatalog\): spec\.modelCatalog\.sources\[0\]: ConfigMap default\/not-json key catalog\.json: not JSON/m,
    );
    assert.match(
      result.stdout,
      /^GwParameters default\/class-wide\n {2}ModelCatalogResolved=False \(Ignored\): spec\.modelCatalog is ignored/m,
    );
  });

  it('reports an invalid file with its path and keeps the rest', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'gw-status-'));
    writeFileSync(
      join(dir, 'policy.yaml'),
      `apiVersion: gw.dev/v1alpha1
kind: GwPolicy
metadata: {name: broken}
spec:
  targetRefs: [{group: gateway.networking.k8s.io, kind: HTTPRoute, name: nowhere}]
  traffic: {timeouts: {request: soon}}
`,
    );
    writeFileSync(
      join(dir, 'missing.yaml'),
      `apiVersion: gw.dev/v1alpha1
kind: GwPolicy
metadata: {name: orphan}
spec:
  targetRefs: [{group: gateway.networking.k8s.io, kind: HTTPRoute, name: nowhere}]
  traffic: {timeouts: {request: 5s}}
`,
    );
    const result = await run(['status', '-f', dir]);
    assert.equal(result.code, 1);
    assert.match(
      result.stderr,
      /policy\.yaml: document 1: GwPolicy default\/broken: spec\.traffic\.timeouts\.request: Invalid value: "soon"/,
    );
    assert.match(
      result.stdout,
      /GwPolicy default\/orphan\n {2}ancestor StatusSummary summary:\n {4}Accepted=False \(TargetNotFound\): HTTPRoute default\/nowhere does not exist/,
    );
  });
});

describe('gw status and gw explain against a running gw (its API server, through the kubeconfig it writes)', () => {
  it('shows the statuses its controller wrote — a listener port it cannot bind included — and explains its objects', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'gw-status-kube-'));
    const [free, taken] = [await freePort(), await freePort()];
    const holder = await holdPort(taken);
    writeFileSync(join(dir, 'gateway.yaml'), twoListenerGatewayYaml(free, taken) + webRouteYaml(9));
    const dataDir = join(dir, 'data');
    const gw = spawnGw([
      'run',
      '-f',
      join(dir, 'gateway.yaml'),
      '--api-port',
      '0',
      '--data-dir',
      dataDir,
      '--admin-port',
      '0',
      '--log-format',
      'text',
    ]);
    try {
      const [, kubeconfig] = (await gw.waitForLog(/export KUBECONFIG=(\S+)\n/, 30_000)) as RegExpMatchArray;
      let status = { code: -1, stdout: '', stderr: '' };
      await until(async () => {
        status = await run(['status', '--kubeconfig', kubeconfig!]);
        return status.stdout.includes('PortUnavailable');
      }, 20_000);
      assert.equal(status.code, 0, status.stderr);
      assert.match(
        status.stdout,
        /^Gateway default\/ai\n(?: {2}.*\n)* {2}Programmed=False \(PortUnavailable\): listener taken cannot be served: port \d+ on 127\.0\.0\.1 is in use/m,
      );
      assert.match(
        status.stdout,
        /^ {2}listener taken \(1 routes\):\n(?: {4}.*\n)* {4}Programmed=False \(PortUnavailable\): port \d+ on 127\.0\.0\.1 is in use/m,
      );
      assert.match(status.stdout, /^ {2}listener http \(1 routes\):\n(?: {4}.*\n)* {4}Programmed=True \(Programmed\)/m);
      assert.match(status.stdout, /^HTTPRoute default\/web\n {2}parent Gateway ai:\n {4}Accepted=True/m);

      const explained = await run(['explain', '--kubeconfig', kubeconfig!, 'route', 'default/web']);
      assert.equal(explained.code, 0, explained.stderr);
      assert.match(
        explained.stdout,
        new RegExp(`^HTTPRoute default/web on Gateway default/ai listener http \\(port ${free}\\)$`, 'm'),
      );
      const missing = await run(['explain', '--kubeconfig', kubeconfig!, 'route', 'default/nope']);
      assert.equal(missing.code, 1);
      assert.match(missing.stderr, /HTTPRoute default\/nope is not at https:\/\/127\.0\.0\.1:\d+/);
      const context = await run(['status', '--kubeconfig', kubeconfig!, '--context', 'elsewhere']);
      assert.equal(context.code, 1);
      assert.match(context.stderr, /^gw status: the kubeconfig has no context "elsewhere" \(it has: /);
    } finally {
      gw.child.kill('SIGTERM');
      await gw.exited;
      holder.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('says what is wrong with the options or the kubeconfig', async () => {
    const unreadable = await run(['status', '--kubeconfig', '/nonexistent/kubeconfig']);
    assert.equal(unreadable.code, 1);
    assert.match(unreadable.stderr, /^gw status: cannot read \/nonexistent\/kubeconfig: /);
    const both = await run(['explain', '-f', examples, '--kubeconfig', 'x', 'route', 'default/llm']);
    assert.equal(both.code, 2);
    assert.match(both.stderr, /give -f FILE\|DIR or --kubeconfig FILE, not both/);
    const neither = await run(['status']);
    assert.equal(neither.code, 2);
    assert.match(neither.stderr, /name the resources with -f FILE\|DIR, or an API server with --kubeconfig FILE/);
  });
});
