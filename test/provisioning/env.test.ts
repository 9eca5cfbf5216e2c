// Kubernetes' `$(VAR)` expansion of container env as gw models it (src/provisioning/env.ts): only
// earlier variables expand, unknown references and malformed ones stay literal, `$$` escapes; and
// the merge of gw's variables with GwParameters' (same name in place, new ones appended).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { effectiveEnv, expandValue, mergeEnv } from '../../src/provisioning/env.ts';

const known = (values: Record<string, string>) => (name: string) => values[name];

test('expandValue: a known reference expands, an unknown one stays as written', () => {
  assert.equal(expandValue('http://$(HOST):$(PORT)/', known({ HOST: 'a', PORT: '80' })), 'http://a:80/');
  assert.equal(expandValue('$(MISSING)-x', known({})), '$(MISSING)-x');
});

test('expandValue: $$ is one literal $, so $$(VAR) is the literal text $(VAR)', () => {
  assert.equal(expandValue('$$(HOST)', known({ HOST: 'a' })), '$(HOST)');
  assert.equal(expandValue('cost $$5', known({})), 'cost $5');
  assert.equal(expandValue('$$$(HOST)', known({ HOST: 'a' })), '$a');
  assert.equal(expandValue('$$$$', known({})), '$$');
});

test('expandValue: a lone $, a $ before another character, an unclosed or empty reference stay literal', () => {
  assert.equal(expandValue('$', known({})), '$');
  assert.equal(expandValue('a$', known({})), 'a$');
  assert.equal(expandValue('$HOST', known({ HOST: 'a' })), '$HOST');
  assert.equal(expandValue('x$(HOST', known({ HOST: 'a' })), 'x$(HOST');
  assert.equal(expandValue('$(A $$x', known({ A: '1' })), '$(A $x');
  assert.equal(expandValue('$(A$(B)', known({ A: '1', B: '2' })), '$(A$(B)');
  assert.equal(expandValue('$()', known({ A: 'a' })), '$()');
  assert.equal(expandValue('$(A)$(B)', known({ A: '1', B: '2' })), '12');
});

test('expandValue: an expanded value is not expanded again', () => {
  assert.equal(expandValue('$(A)', known({ A: '$(B)', B: 'no' })), '$(B)');
});

test('effectiveEnv: only variables defined earlier expand; a redefinition sees the earlier value', () => {
  const env = effectiveEnv([
    { name: 'LATER_REF', value: '$(B)' },
    { name: 'B', value: 'b' },
    { name: 'C', value: '$(B)-$(B)' },
    { name: 'B', value: '$(B)2' },
    { name: 'POD', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } },
    { name: 'USES_POD', value: 'pod=$(POD)' },
    { name: 'EMPTY' },
  ]);
  assert.deepEqual(Object.fromEntries(env), {
    LATER_REF: { value: '$(B)' },
    B: { value: 'b2' },
    C: { value: 'b-b' },
    POD: { from: 'valueFrom' },
    USES_POD: { value: 'pod=$(POD)' },
    EMPTY: { value: '' },
  });
});

test('mergeEnv: a variable of the same name replaces in place, new ones are appended', () => {
  const merged = mergeEnv(
    [
      { name: 'A', value: '1' },
      { name: 'B', value: '2' },
    ],
    [
      { name: 'C', value: '3' },
      { name: 'A', value: 'one' },
    ],
  );
  assert.deepEqual(merged, [
    { name: 'A', value: 'one' },
    { name: 'B', value: '2' },
    { name: 'C', value: '3' },
  ]);
});
