import assert from 'node:assert/strict';
import { test } from 'node:test';
import { compileAiRequestPolicy } from '../../../src/dataplane/ai/policies/index.ts';
import { chatBody, messagesBody, policy } from './helpers.ts';

test('no policy: the body is returned as is', () => {
  const input = chatBody();
  assert.equal(policy(undefined).applyToRequest(input, 'completions', 'Completions', {}).body, input);
  assert.equal(policy({}).applyFinal(input, {}).body, input);
});

test('model aliases replace the client model', () => {
  const aliases = policy({ modelAliases: { fast: 'gpt-4o-mini' } });
  assert.equal(aliases.applyToRequest(chatBody(), 'completions', 'Completions', {}).body.model, 'gpt-4o-mini');
  assert.equal(aliases.applyToRequest(messagesBody(), 'messages', 'Messages', {}).body.model, 'gpt-4o-mini');
  assert.equal(aliases.applyToRequest(chatBody({ model: 'x' }), 'completions', 'Completions', {}).body.model, 'x');
  assert.equal(
    aliases.applyToRequest({ input: 'a', model: 'fast' }, 'embeddings', 'Embeddings', {}).body.model,
    'gpt-4o-mini',
  );
  assert.equal(aliases.applyToRequest(chatBody(), 'completions', 'Detect', {}).body.model, 'fast');
  assert.equal(aliases.applyToRequest(chatBody(), 'completions', 'Passthrough', {}).body.model, 'fast');
});

test('defaults fill only fields the client left out or sent as null', () => {
  const defaults = policy({
    defaults: [
      { field: 'temperature', value: 0.2 },
      { field: 'max_tokens', value: 100 },
      { field: 'metadata', value: { team: 'a' } },
    ],
  });
  const { body } = defaults.applyToRequest(
    chatBody({ temperature: 1, max_tokens: null }),
    'completions',
    'Completions',
    {},
  );
  assert.equal(body.temperature, 1);
  assert.equal(body.max_tokens, 100);
  assert.deepEqual(body.metadata, { team: 'a' });
  assert.equal(
    defaults.applyToRequest(chatBody({ temperature: 0 }), 'completions', 'Completions', {}).body.temperature,
    0,
  );
});

test('overrides replace client values; configured values are copied per request', () => {
  const overrides = policy({
    overrides: [
      { field: 'metadata', value: { team: 'a' } },
      { field: 'temperature', value: 0 },
    ],
  });
  const first = overrides.applyToRequest(chatBody({ temperature: 1.5 }), 'completions', 'Completions', {}).body;
  assert.equal(first.temperature, 0);
  (first.metadata as Record<string, string>).team = 'changed';
  const second = overrides.applyToRequest(chatBody(), 'completions', 'Completions', {}).body;
  assert.deepEqual(second.metadata, { team: 'a' });
});

test('transformations compute fields from the body and the request variables', () => {
  const transform = policy({
    transformations: [
      { field: 'max_tokens', expression: 'llmRequest.max_tokens > 1000 ? 1000 : llmRequest.max_tokens' },
      { field: 'user', expression: 'request.headers["x-tenant"]' },
      { field: 'turns', expression: 'llmRequest.messages.size()' },
      { field: 'tags', expression: '{"model": llmRequest.model, "stream": llmRequest.?stream.orValue(false)}' },
    ],
  });
  const variables = { request: { headers: { 'x-tenant': 'gold' } } };
  const { body, warnings } = transform.applyToRequest(
    chatBody({ max_tokens: 5000 }),
    'completions',
    'Completions',
    variables,
  );
  assert.equal(warnings, undefined);
  assert.equal(body.max_tokens, 1000);
  assert.equal(body.user, 'gold');
  assert.equal(body.turns, 1);
  assert.deepEqual(body.tags, { model: 'fast', stream: false });
  assert.equal(JSON.stringify(body.max_tokens), '1000', 'CEL ints come back as JSON numbers');
});

test('a failing transformation removes its field and records a warning; the others still apply', () => {
  const transform = policy({
    defaults: [{ field: 'top_p', value: 0.9 }],
    transformations: [
      { field: 'max_tokens', expression: 'llmRequest.max_tokens * 2' },
      { field: 'top_p', expression: '1 / 0' },
      { field: 'when', expression: 'timestamp("2025-01-01T00:00:00Z")' },
      { field: 'user', expression: '"u-" + llmRequest.model' },
    ],
  });
  const { body, warnings } = transform.applyToRequest(chatBody({ top_p: 0.5 }), 'completions', 'Completions', {});
  assert.equal('max_tokens' in body, false);
  assert.equal('top_p' in body, false);
  assert.equal('when' in body, false);
  assert.equal(body.user, 'u-fast');
  assert.deepEqual(
    warnings?.map(({ path, field }) => ({ path, field })),
    [
      { path: 'ai.transformations[0].expression', field: 'max_tokens' },
      { path: 'ai.transformations[1].expression', field: 'top_p' },
      { path: 'ai.transformations[2].expression', field: 'when' },
    ],
  );
  assert.match(warnings?.[2].message ?? '', /timestamp, not a JSON value/);
  for (const warning of warnings ?? []) assert.ok(warning.message.length > 0);
});

test('order: aliases, then defaults and overrides, which the transformations see and beat', () => {
  const ordered = policy({
    modelAliases: { fast: 'gpt-4o-mini' },
    defaults: [
      { field: 'max_tokens', value: 300 },
      { field: 'temperature', value: 0.1 },
    ],
    overrides: [
      { field: 'temperature', value: 0.7 },
      { field: 'seed', value: 1 },
    ],
    transformations: [
      { field: 'seed', expression: 'llmRequest.seed + 41' },
      { field: 'model_seen', expression: 'llmRequest.model' },
      { field: 'max_tokens', expression: 'llmRequest.max_tokens + 1' },
      { field: 'temperature_seen', expression: 'llmRequest.temperature' },
    ],
  });
  const { body } = ordered.applyToRequest(chatBody({ seed: 5 }), 'completions', 'Completions', {});
  assert.equal(body.model, 'gpt-4o-mini');
  assert.equal(body.model_seen, 'gpt-4o-mini', 'transformations see the aliased model');
  assert.equal(body.max_tokens, 301, 'transformations see the defaults');
  assert.equal(body.temperature, 0.7, 'an override beats a default');
  assert.equal(body.temperature_seen, 0.7, 'transformations see the overrides');
  assert.equal(body.seed, 42, 'a transformation beats an override of the same field');
});

test('transformations of one list all see the same body, not each other', () => {
  const parallel = policy({
    transformations: [
      { field: 'a', expression: '"new"' },
      { field: 'b', expression: 'llmRequest.a' },
    ],
  });
  const { body } = parallel.applyToRequest(chatBody({ a: 'old' }), 'completions', 'Completions', {});
  assert.deepEqual([body.a, body.b], ['new', 'old']);
});

test('prompt enrichment runs before the transformations, which see the added messages', () => {
  const both = policy({
    prompt: { prepend: [{ role: 'system', content: 'Be kind.' }] },
    transformations: [{ field: 'count', expression: 'llmRequest.messages.size()' }],
  });
  assert.equal(both.applyToRequest(chatBody(), 'completions', 'Completions', {}).body.count, 2);
  const messages = both.applyToRequest(messagesBody(), 'messages', 'Messages', {}).body;
  assert.equal(messages.count, 1, 'on Messages the system prompt went to `system`');
});

test('the whole pipeline on both formats, streaming and not', () => {
  const full = policy({
    modelAliases: { fast: 'real-model' },
    prompt: { prepend: [{ role: 'SYSTEM', content: 'Sys' }], append: [{ role: 'USER', content: 'End' }] },
    defaults: [{ field: 'temperature', value: 0.3 }],
    overrides: [{ field: 'top_p', value: 1 }],
    transformations: [{ field: 'metadata', expression: '{"tenant": request.headers["x-tenant"]}' }],
  });
  const variables = { request: { headers: { 'x-tenant': 't1' } } };
  for (const stream of [false, true]) {
    const completions = full.applyToRequest(chatBody({ stream }), 'completions', 'Completions', variables);
    assert.deepEqual(completions, {
      body: {
        model: 'real-model',
        stream,
        messages: [
          { role: 'system', content: 'Sys' },
          { role: 'user', content: 'Hello' },
          { role: 'user', content: 'End' },
        ],
        temperature: 0.3,
        top_p: 1,
        metadata: { tenant: 't1' },
      },
    });
    const messages = full.applyToRequest(messagesBody({ stream, top_p: 0.2 }), 'messages', 'Messages', variables);
    assert.deepEqual(messages, {
      body: {
        model: 'real-model',
        max_tokens: 256,
        stream,
        top_p: 1,
        messages: [
          { role: 'user', content: 'Hello' },
          { role: 'user', content: 'End' },
        ],
        system: [{ type: 'text', text: 'Sys' }],
        temperature: 0.3,
        metadata: { tenant: 't1' },
      },
    });
  }
});

test('Passthrough, Models and Realtime traffic is left alone', () => {
  const full = policy({
    modelAliases: { fast: 'x' },
    overrides: [{ field: 'temperature', value: 0 }],
    transformations: [{ field: 'a', expression: '1' }],
  });
  for (const routeType of ['Passthrough', 'Models', 'Realtime'] as const) {
    const input = chatBody();
    assert.equal(full.applyToRequest(input, 'completions', routeType, {}).body, input);
  }
});

test('the client body is not modified', () => {
  const full = policy({
    modelAliases: { fast: 'x' },
    prompt: { append: [{ role: 'user', content: 'More' }] },
    defaults: [{ field: 'temperature', value: 0 }],
    overrides: [{ field: 'top_p', value: 1 }],
    transformations: [{ field: 'max_tokens', expression: 'llmRequest.missing' }],
  });
  const input = chatBody({ max_tokens: 10 });
  const before = structuredClone(input);
  full.applyToRequest(input, 'completions', 'Completions', {});
  assert.deepEqual(input, before);
});

test('fields are top-level keys: dots are part of the name, __proto__ is an ordinary key', () => {
  const odd = policy({
    overrides: [{ field: 'a.b', value: 1 }],
    transformations: [{ field: '__proto__', expression: '{"polluted": true}' }],
  });
  const { body } = odd.applyToRequest(chatBody({ a: { b: 0 } }), 'completions', 'Completions', {});
  assert.deepEqual(body.a, { b: 0 });
  assert.equal(body['a.b'], 1);
  assert.ok(Object.hasOwn(body, '__proto__'));
  assert.equal(Object.getPrototypeOf(body), Object.prototype);
  assert.equal(({} as Record<string, unknown>).polluted, undefined);
  const sent = JSON.parse(JSON.stringify(body));
  assert.deepEqual(Object.getOwnPropertyDescriptor(sent, '__proto__')?.value, { polluted: true });
});

test('final transformations run on the provider body, which they see as llmRequest', () => {
  const final = policy({
    transformations: [{ field: 'max_tokens', expression: '10' }],
    finalTransformations: [
      { field: 'system', expression: 'llmRequest.system + " (via gw)"' },
      {
        field: 'thinking',
        expression:
          'request.headers[?"x-think"].orValue("") == "1" ? {"type": "enabled", "budget_tokens": 1024} : {"type": "disabled"}',
      },
      { field: 'broken', expression: 'llmRequest.nope' },
    ],
  });
  const providerBody = { model: 'm', system: 'S', max_tokens: 4096, messages: [], broken: 1 };
  const before = structuredClone(providerBody);
  const { body, warnings } = final.applyFinal(providerBody, { request: { headers: { 'x-think': '1' } } });
  assert.deepEqual(providerBody, before);
  assert.equal(body.system, 'S (via gw)');
  assert.deepEqual(body.thinking, { type: 'enabled', budget_tokens: 1024 });
  assert.equal(body.max_tokens, 4096, 'request transformations are not final ones');
  assert.equal('broken' in body, false);
  assert.deepEqual(
    warnings?.map((w) => w.path),
    ['ai.finalTransformations[2].expression'],
  );
  assert.deepEqual(final.applyFinal(providerBody, { request: { headers: {} } }).body.thinking, {
    type: 'disabled',
  });
});

test('model-level transformations win over the backend ones for the same field; others combine', () => {
  const merged = policy(
    {
      transformations: [
        { field: 'model', expression: '"backend-model"' },
        { field: 'user', expression: '"backend"' },
      ],
      finalTransformations: [{ field: 'x', expression: '"backend"' }],
    },
    {
      transformations: [
        { field: 'model', expression: '"provider-model"' },
        { field: 'reasoning_effort', expression: '"low"' },
      ],
      finalTransformations: [
        { field: 'x', expression: '"model"' },
        { field: 'y', expression: 'llmRequest.nope' },
      ],
    },
  );
  const { body } = merged.applyToRequest(chatBody(), 'completions', 'Completions', {});
  assert.equal(body.model, 'provider-model');
  assert.equal(body.user, 'backend');
  assert.equal(body.reasoning_effort, 'low');
  const final = merged.applyFinal({ model: 'm' }, {});
  assert.equal(final.body.x, 'model');
  assert.deepEqual(
    final.warnings?.map((w) => w.path),
    ['policies.finalTransformations[1].expression'],
  );

  const modelOnly = policy(undefined, { transformations: [{ field: 'model', expression: '"p"' }] });
  assert.equal(modelOnly.applyToRequest(chatBody(), 'completions', 'Completions', {}).body.model, 'p');
});

test('compile errors: every CEL syntax error, with the path of its expression', () => {
  const errors = compileAiRequestPolicy(
    {
      transformations: [
        { field: 'a', expression: '1' },
        { field: 'b', expression: '2' },
        { field: 'c', expression: 'llmRequest.max_tokens +' },
      ],
      finalTransformations: [{ field: 'd', expression: '"unterminated' }],
    },
    { transformations: [{ field: 'e', expression: '(1' }], finalTransformations: [{ field: 'f', expression: 'true' }] },
  );
  assert.ok(Array.isArray(errors));
  assert.deepEqual(
    errors.map((error) => error.path),
    [
      'ai.transformations[2].expression',
      'policies.transformations[0].expression',
      'ai.finalTransformations[0].expression',
    ],
  );
  for (const error of errors) assert.ok(error.message.length > 0 && !error.message.includes('\n'));
});

test('a CEL error in a backend entry the model replaces is still reported', () => {
  const errors = compileAiRequestPolicy(
    { transformations: [{ field: 'a', expression: '((' }] },
    { transformations: [{ field: 'a', expression: '1' }] },
  );
  assert.ok(Array.isArray(errors));
  assert.deepEqual(
    errors.map((e) => e.path),
    ['ai.transformations[0].expression'],
  );
});

test('routeTypeOf follows the routes of the policy', () => {
  const routed = policy({ routes: { '/v1/messages': 'Messages', '*': 'Passthrough' } });
  assert.equal(routed.routeTypeOf('/api/v1/messages?x=1'), 'Messages');
  assert.equal(routed.routeTypeOf('/v1/models'), 'Passthrough');
  // No routes: the default table (docs/decisions/0012-default-ai-routes.md).
  assert.equal(policy(undefined).routeTypeOf('/v1/messages'), 'Messages');
  assert.equal(policy(undefined).routeTypeOf('/v1/other'), 'Completions');
});
