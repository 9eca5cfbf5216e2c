// Every neutral identifier of the API has its vendor in src/api/vendors.ts, so that a family,
// GwModel provider or identity provider added to the schema cannot reach users unnamed.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { BackendAuth } from '../../src/api/types/backend-auth.ts';
import { McpIDP } from '../../src/api/types/inbound-auth.ts';
import { LLMProvider } from '../../src/api/types/llm-provider.ts';
import { ModelProvider } from '../../src/api/types/model.ts';
import {
  authKindLabel,
  cloudName,
  familyLabel,
  identityProviderName,
  modelProviderLabel,
  modelProviderVendor,
  vendorName,
} from '../../src/api/vendors.ts';

/** The provider-family fields of LLMProvider: the lowercase names that are not address overrides. */
const ADDRESS_FIELDS = new Set(['host', 'port', 'path', 'pathPrefix', 'custom']);

test('every provider family has a vendor', () => {
  const families = Object.keys(LLMProvider.properties ?? {}).filter((name) => !ADDRESS_FIELDS.has(name));
  assert.ok(families.includes('alpha') && families.includes('zeta'));
  for (const family of families) assert.ok(vendorName(family), `provider family ${family} has no vendor`);
  assert.equal(familyLabel('delta'), 'delta (Google Gemini)');
  assert.equal(familyLabel('alpha'), 'alpha (OpenAI)');
  assert.equal(familyLabel('custom'), 'custom');
});

test('every GwModel provider but Custom has a vendor', () => {
  for (const provider of ModelProvider.enum ?? []) {
    if (provider === 'Custom') continue;
    assert.ok(modelProviderVendor(String(provider)), `GwModel provider ${provider} has no vendor`);
  }
  assert.equal(modelProviderLabel('Provider07'), 'Provider07 (Cohere)');
  assert.equal(modelProviderLabel('Provider19'), 'Provider19 (Fireworks AI)');
});

test('the cloud credential kinds and identity providers name their products', () => {
  const kinds = Object.keys(BackendAuth.properties ?? {});
  for (const cloud of ['cloudone', 'cloudtwo', 'beta']) {
    assert.ok(kinds.includes(cloud), `BackendAuth has no ${cloud}`);
    assert.ok(cloudName(cloud));
  }
  assert.equal(authKindLabel('cloudone'), 'cloudone (AWS)');
  assert.equal(authKindLabel('key'), 'key');
  for (const idp of McpIDP.enum ?? []) assert.ok(identityProviderName(String(idp)), `${idp} has no product name`);
  assert.equal(identityProviderName('Idp02'), 'Keycloak');
});
