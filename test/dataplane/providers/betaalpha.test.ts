// The betaalpha family (Azure OpenAI) planned: paths and api-version by apiVersion, the endpoint
// as the host, the deployment as the model, the api-key key style, and the settings it refuses.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { LLMProvider } from '../../../src/api/types/llm-provider.ts';
import type { CompiledProvider } from '../../../src/dataplane/ai/providers/index.ts';
import { applied, compiledAuth } from '../backend-auth/helpers.ts';
import {
  BODY_OF,
  CHAT_BODY,
  compiled,
  configError,
  input,
  MESSAGES_BODY,
  planned,
  pathAndQuery as route,
} from './helpers.ts';

/** The path and query of each OpenAI format the provider serves as it is. */
function servedRoutes(provider: CompiledProvider): string[] {
  return (['completions', 'responses', 'embeddings', 'models'] as const).map((format) =>
    route(planned(provider, input(format, BODY_OF[format]))),
  );
}

test('apiVersion v1 (the default): the /openai/v1 paths, no api-version, the client naming the deployment', () => {
  const provider = compiled({ betaalpha: { endpoint: 'https://my-resource.openai.azure.com/' } });
  assert.deepEqual(provider.origin, { protocol: 'https:', host: 'my-resource.openai.azure.com', port: 443 });
  assert.equal(provider.keyStyle, 'api-key');
  assert.equal(provider.model, undefined);
  const paths = servedRoutes(provider);
  assert.deepEqual(paths, [
    '/openai/v1/chat/completions',
    '/openai/v1/responses',
    '/openai/v1/embeddings',
    '/openai/v1/models',
  ]);
  assert.equal(planned(provider, input('completions', CHAT_BODY)).body?.model, 'gpt-4o-mini');
});

test('apiVersion preview: the /openai/v1 paths with api-version=preview; a deployment overrides the model', () => {
  const provider = compiled({
    betaalpha: { endpoint: 'my-resource.openai.azure.com', apiVersion: 'preview', deploymentName: 'dep' },
  });
  const plan = planned(provider, input('completions', CHAT_BODY));
  assert.equal(route(plan), '/openai/v1/chat/completions?api-version=preview');
  assert.equal(plan.body?.model, 'dep');
});

test('a dated apiVersion: deployment paths for chat and embeddings, /openai/responses and /openai/models', () => {
  const provider = compiled({
    betaalpha: { endpoint: 'my-resource.openai.azure.com', deploymentName: 'gpt-4o', apiVersion: '2024-10-21' },
  });
  const paths = servedRoutes(provider);
  assert.deepEqual(paths, [
    '/openai/deployments/gpt-4o/chat/completions?api-version=2024-10-21',
    '/openai/responses?api-version=2024-10-21',
    '/openai/deployments/gpt-4o/embeddings?api-version=2024-10-21',
    '/openai/models?api-version=2024-10-21',
  ]);
  const messages = planned(provider, input('messages', MESSAGES_BODY));
  assert.equal(messages.providerFormat, 'completions', 'Messages clients are translated to Chat Completions');
  assert.equal(messages.body?.model, 'gpt-4o');
  assert.equal(messages.path, '/openai/deployments/gpt-4o/chat/completions');
});

test('host, port and path overrides; a configured path gets the api-version unless it has one', () => {
  const provider = compiled({
    betaalpha: { endpoint: 'my-resource.openai.azure.com', deploymentName: 'd', apiVersion: '2024-10-21' },
    host: '127.0.0.1',
    port: 8080,
    path: '/custom/chat',
  });
  assert.deepEqual(provider.origin, { protocol: 'http:', host: '127.0.0.1', port: 8080 });
  assert.equal(route(planned(provider, input('completions', CHAT_BODY))), '/custom/chat?api-version=2024-10-21');
  const own = compiled({
    betaalpha: { endpoint: 'r.openai.azure.com', deploymentName: 'd', apiVersion: '2024-10-21' },
    path: '/custom/chat?api-version=2025-01-01',
  });
  assert.equal(route(planned(own, input('completions', CHAT_BODY))), '/custom/chat?api-version=2025-01-01');
});

test('settings that cannot be served are refused, naming the field', () => {
  const cases: [LLMProvider, string, RegExp][] = [
    [{ betaalpha: { endpoint: 'https://r.openai.azure.com/openai' } }, 'betaalpha.endpoint', /must be a host/],
    [{ betaalpha: { endpoint: 'r.openai.azure.com:8443' } }, 'betaalpha.endpoint', /port/],
    [{ betaalpha: { endpoint: 'r', deploymentName: '../x' } }, 'betaalpha.deploymentName', /deployment name/],
    [{ betaalpha: { endpoint: 'r', apiVersion: '2024-10-21' } }, 'betaalpha.deploymentName', /required/],
    [{ betaalpha: { endpoint: 'r' }, pathPrefix: '/p' }, 'pathPrefix', /alpha and gamma/],
  ];
  for (const [provider, field, reason] of cases) {
    const error = configError(provider);
    assert.equal(error.field, field);
    assert.match(error.message, reason);
  }
});

test('the api-key key style: a key goes in api-key, an Entra ID token (a JWT) as Bearer', () => {
  const key = compiledAuth({ key: 'azure-key' }, { keyStyle: 'api-key' });
  assert.deepEqual(applied(key, { 'api-key': 'client-key', authorization: 'Bearer x' }).headers, {
    'api-key': 'azure-key',
  });
  const token = compiledAuth({ key: 'eyJhbGciOiJSUzI1NiJ9.e30.sig' }, { keyStyle: 'api-key' });
  assert.deepEqual(applied(token, {}).headers, { authorization: 'Bearer eyJhbGciOiJSUzI1NiJ9.e30.sig' });
});

test("passthrough to betaalpha: the client's api-key is forwarded; a Bearer key moves to api-key", () => {
  const auth = compiledAuth({ passthrough: {} }, { keyStyle: 'api-key' });
  assert.deepEqual(applied(auth, { 'api-key': 'client-key' }).headers, { 'api-key': 'client-key' });
  assert.deepEqual(applied(auth, { authorization: 'Bearer client-key' }).headers, { 'api-key': 'client-key' });
  assert.deepEqual(applied(auth, { authorization: 'Bearer eyJ.t' }).headers, { authorization: 'Bearer eyJ.t' });
  const other = compiledAuth({ key: 'k' });
  assert.deepEqual(applied(other, { 'api-key': 'client-key' }).headers, { authorization: 'Bearer k' });
});
