import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  compileExpression,
  ExpressionError,
  evaluateOr,
  fromCelValue,
  toCelValue,
} from '../../../src/dataplane/cel/expression.ts';

test('an expression compiles once and evaluates against plain objects', () => {
  const expression = compileExpression('response.code >= 500 || request.headers["x-retry"] == "yes"');
  assert.ok(!(expression instanceof ExpressionError));
  assert.equal(compileExpression('response.code >= 500 || request.headers["x-retry"] == "yes"'), expression);
  assert.equal(expression.evaluate({ response: { code: 502n }, request: { headers: {} } }), true);
  assert.equal(expression.evaluate({ response: { code: 200n }, request: { headers: { 'x-retry': 'yes' } } }), true);
  assert.equal(expression.evaluate({ response: { code: 200n }, request: { headers: { 'x-retry': 'no' } } }), false);
});

test('a syntax error is returned, not thrown, with the source', () => {
  const result = compileExpression('request.path ==');
  assert.ok(result instanceof ExpressionError);
  assert.equal(result.source, 'request.path ==');
  assert.match(result.message, /./);
});

test('a failing evaluation gives the fallback', () => {
  const expression = compileExpression('missing.field == 1') as Exclude<
    ReturnType<typeof compileExpression>,
    ExpressionError
  >;
  assert.equal(evaluateOr(expression, {}, 'unknown'), 'unknown');
});

test('JSON values go in as CEL values and come back as JSON', () => {
  const expression = compileExpression('{"n": body.max_tokens * 2, "names": body.messages.map(m, m.role)}');
  assert.ok(!(expression instanceof ExpressionError));
  const body = toCelValue({ max_tokens: 100, messages: [{ role: 'user' }, { role: 'assistant' }] });
  assert.deepEqual(fromCelValue(expression.evaluate({ body })), { n: 200, names: ['user', 'assistant'] });
});
