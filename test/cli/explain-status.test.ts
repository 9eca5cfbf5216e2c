// gw explain and gw status on the examples: what applies where, and every object's conditions.
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { runGw as run } from '../helpers/cli.ts';

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
      /backend GwBackend default\/openai:\n {2}auth: .*\n {4}set by GwBackend default\/openai \(BackendInline/,
    );
  });

  it('shows a backend on its own and from every route that reaches it', async () => {
    const result = await run(['explain', '-f', examples, 'backend', 'default/openai']);
    assert.equal(result.code, 0, result.stderr);
    assert.match(result.stdout, /^GwBackend default\/openai \(its own policies\):$/m);
    assert.match(
      result.stdout,
      /^GwBackend default\/openai reached from HTTPRoute default\/llm on Gateway default\/ai listener http:$/m,
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
    assert.match(backend.stdout, / {4}REFUSED by the data plane .*: tunnel: Tunnelling backend connections/);
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
