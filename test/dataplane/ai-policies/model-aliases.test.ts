import assert from 'node:assert/strict';
import { test } from 'node:test';
import { compileModelAliases } from '../../../src/dataplane/ai/policies/index.ts';

test('no aliases compile to nothing', () => {
  assert.equal(compileModelAliases(undefined), undefined);
  assert.equal(compileModelAliases({}), undefined);
});

test('an exact alias gives its model; other names are not aliased', () => {
  const resolve = compileModelAliases({ fast: 'gpt-4o-mini', smart: 'gpt-4o' });
  assert.ok(resolve);
  assert.equal(resolve('fast'), 'gpt-4o-mini');
  assert.equal(resolve('smart'), 'gpt-4o');
  assert.equal(resolve('Fast'), undefined);
  assert.equal(resolve('fastest'), undefined);
  assert.equal(resolve('constructor'), undefined);
});

test('wildcard aliases: an exact key wins, then the longest pattern, whatever the declared order', () => {
  const resolve = compileModelAliases({
    'gpt-*': 'gpt-4o',
    'gpt-4*': 'gpt-4.1',
    'gpt-4-mini': 'gpt-4o-mini',
    '*-latest': 'claude-sonnet-4',
  });
  assert.ok(resolve);
  assert.equal(resolve('gpt-4-mini'), 'gpt-4o-mini');
  assert.equal(resolve('gpt-4-turbo'), 'gpt-4.1');
  assert.equal(resolve('gpt-3.5'), 'gpt-4o');
  assert.equal(resolve('sonnet-latest'), 'claude-sonnet-4');
  assert.equal(resolve('claude'), undefined);
});

test('pattern characters other than * are literal', () => {
  const resolve = compileModelAliases({ 'a.b*': 'x', '(c)+*': 'y' });
  assert.ok(resolve);
  assert.equal(resolve('a.b-1'), 'x');
  assert.equal(resolve('aXb-1'), undefined);
  assert.equal(resolve('(c)+d'), 'y');
  assert.equal(resolve('ccd'), undefined);
});
