// Provider configurations that cannot be served are returned as ProviderConfigError, never thrown.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { LLMProvider } from '../../../src/api/types/llm-provider.ts';
import { compileProvider, ProviderConfigError } from '../../../src/dataplane/ai/providers/index.ts';

function configError(provider: LLMProvider, options?: { name?: string }): ProviderConfigError {
  const result = compileProvider(provider, options);
  assert.ok(result instanceof ProviderConfigError, 'expected a ProviderConfigError');
  return result;
}

test("a named provider's error carries its name", () => {
  const error = configError({ delta: { model: 'gemini-2.5-flash' }, path: 'v1beta' }, { name: 'google' });
  assert.equal(error.provider, 'google');
  assert.equal(error.field, 'path');
  assert.equal(error.message, 'provider google: path: must start with "/" (got "v1beta")');
});

test('no family, or two, is an error', () => {
  assert.equal(configError({}).field, '');
  assert.match(configError({ alpha: {}, gamma: {} }).message, /exactly one provider family/);
});

test('paths must be absolute; the host must not be empty', () => {
  assert.equal(configError({ alpha: {}, path: 'v1/chat' }).field, 'path');
  assert.equal(configError({ gamma: {}, pathPrefix: 'api' }).field, 'pathPrefix');
  assert.equal(configError({ gamma: {}, pathPrefix: '/api?x=1' }).field, 'pathPrefix');
  assert.equal(configError({ alpha: {}, host: ' ' }).field, 'host');
});

test('an epsilon (Vertex AI) provider is refused a region or project id that would change its host or path', () => {
  const region = configError({ epsilon: { projectId: 'p', region: 'us-central1.evil.example' } });
  assert.equal(region.field, 'epsilon.region');
  assert.match(region.message, /not a Vertex AI location/);
  const project = configError({ epsilon: { projectId: 'p/../other' } });
  assert.equal(project.field, 'epsilon.projectId');
  assert.match(project.message, /not a Google Cloud project id/);
});

test("an epsilon provider's region picks its Vertex AI host", () => {
  const hosts = Object.entries({
    global: 'aiplatform.googleapis.com',
    us: 'aiplatform.us.rep.googleapis.com',
    eu: 'aiplatform.eu.rep.googleapis.com',
    'europe-west4': 'europe-west4-aiplatform.googleapis.com',
  });
  for (const [region, host] of hosts) {
    const provider = compileProvider({ epsilon: { projectId: 'p', region } });
    assert.ok(!(provider instanceof ProviderConfigError), `region ${region} compiles`);
    assert.deepEqual(provider.origin, { protocol: 'https:', host, port: 443 }, region);
  }
  const unset = compileProvider({ epsilon: { projectId: 'p' } });
  assert.ok(!(unset instanceof ProviderConfigError));
  assert.equal(unset.origin.host, 'aiplatform.googleapis.com', 'region defaults to global');
  const plan = unset.plan({
    clientFormat: 'completions',
    routeType: 'Completions',
    body: { model: 'gemini-2.5-flash', messages: [{ role: 'user', content: 'x' }] },
    stream: false,
  });
  assert.ok('path' in plan);
  assert.equal(plan.path, '/v1/projects/p/locations/global/publishers/google/models/gemini-2.5-flash:generateContent');
});
