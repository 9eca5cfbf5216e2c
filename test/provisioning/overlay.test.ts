import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { parse } from 'yaml';
import type { GwParametersSpec } from '../../src/api/types/provisioning.ts';
import {
  applyOverlay,
  applyOverlays,
  type GeneratedObject,
  type OverlayProblem,
  overlaysFor,
  type SourcedOverlay,
} from '../../src/provisioning/overlay.ts';

interface ExpectAt {
  path: Array<string | number>;
  value?: unknown;
  absent?: boolean;
}

interface OverlayCase {
  name: string;
  object: GeneratedObject;
  overlays: SourcedOverlay[];
  expect?: GeneratedObject;
  expectAt?: ExpectAt[];
  problems?: string[];
}

const fixtures = parse(readFileSync(new URL('../fixtures/provisioning/overlays.yaml', import.meta.url), 'utf8')) as {
  cases: OverlayCase[];
};

const describeProblem = (p: OverlayProblem) => `${p.parameters} ${p.field}: ${p.message}`;

function at(value: unknown, path: Array<string | number>): { found: boolean; value: unknown } {
  let current = value;
  for (const step of path) {
    if (current === null || typeof current !== 'object' || !(step in current))
      return { found: false, value: undefined };
    current = (current as Record<string | number, unknown>)[step];
  }
  return { found: true, value: current };
}

describe('GwParameters overlays (golden cases)', () => {
  for (const testCase of fixtures.cases) {
    it(testCase.name, () => {
      const before = structuredClone(testCase.object);
      const result = applyOverlays(testCase.object, testCase.overlays);
      assert.deepEqual(testCase.object, before, 'the generated object given is not modified');
      if (testCase.problems) {
        assert.ok(!result.ok, 'expected problems');
        assert.deepEqual(result.problems.map(describeProblem), testCase.problems);
        return;
      }
      assert.ok(result.ok, `unexpected problems: ${result.ok ? '' : result.problems.map(describeProblem).join('; ')}`);
      assert.ok(!JSON.stringify(result.object).includes('$patch'), 'no directive is left in the object');
      if (testCase.expect) assert.deepEqual(result.object, testCase.expect);
      for (const expected of testCase.expectAt ?? []) {
        const actual = at(result.object, expected.path);
        if (expected.absent) assert.ok(!actual.found, `${expected.path.join('.')} should be absent`);
        else assert.deepEqual(actual.value, expected.value, expected.path.join('.'));
      }
      assert.ok(testCase.expect || testCase.expectAt, 'a case states what it expects');
    });
  }
});

describe('overlay order and atomicity', () => {
  const deployment = (): GeneratedObject => ({
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: 'gw-public', labels: { tier: 'generated' } },
    spec: { replicas: 1 },
  });

  it('overlaysFor picks the kind’s field, GatewayClass parameters first and Gateway parameters second', () => {
    const classSpec: GwParametersSpec = {
      deployment: { metadata: { labels: { tier: 'class' } }, spec: { replicas: 2 } },
      service: { metadata: { labels: { exposed: 'class' } } },
    };
    const gatewaySpec: GwParametersSpec = { deployment: { spec: { replicas: 5 } } };
    const overlays = overlaysFor('Deployment', {
      gateway: { parameters: 'team/gw-params', spec: gatewaySpec },
      gatewayClass: { parameters: 'infra/class-params', spec: classSpec },
    });
    assert.deepEqual(
      overlays.map((o) => `${o.parameters} ${o.field}`),
      ['infra/class-params spec.deployment', 'team/gw-params spec.deployment'],
    );
    const result = applyOverlays(deployment(), overlays);
    assert.ok(result.ok);
    assert.deepEqual(result.object.metadata.labels, { tier: 'class' });
    assert.equal(result.object.spec?.replicas, 5, 'the Gateway overlay applies last and wins');

    // Reversing the order reverses the winner: the order is what decides, not the values.
    const reversed = applyOverlays(deployment(), [...overlays].reverse());
    assert.ok(reversed.ok);
    assert.equal(reversed.object.spec?.replicas, 2);

    assert.deepEqual(
      overlaysFor('HorizontalPodAutoscaler', { gatewayClass: { parameters: 'x/y', spec: classSpec } }),
      [],
    );
    assert.equal(overlaysFor('Service', { gatewayClass: { parameters: 'x/y', spec: classSpec } }).length, 1);
  });

  it('an overlay with a problem yields no object, even when the other overlays apply', () => {
    const result = applyOverlays(deployment(), [
      {
        parameters: 'infra/class-params',
        field: 'spec.deployment',
        overlay: { spec: { template: { $patch: 'nope' } } },
      },
      { parameters: 'team/gw-params', field: 'spec.deployment', overlay: { spec: { replicas: 3 } } },
    ]);
    assert.ok(!result.ok);
    assert.equal(result.problems.length, 1);
    assert.equal(result.problems[0]?.field, 'spec.deployment.spec.template.$patch');
    assert.ok(!('object' in result), 'no half-applied object is returned');
  });

  it('a spec-level $patch delete removes the spec; no overlay leaves the object equal to the input', () => {
    const removed = applyOverlay(deployment(), {
      parameters: 'team/gw-params',
      field: 'spec.deployment',
      overlay: { spec: { $patch: 'delete' } },
    });
    assert.ok(removed.ok);
    assert.ok(!('spec' in removed.object));
    const untouched = applyOverlays(deployment(), []);
    assert.ok(untouched.ok);
    assert.deepEqual(untouched.object, deployment());
  });
});
