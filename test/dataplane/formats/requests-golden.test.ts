// Recorded client requests (test/fixtures/formats/<client>-request.json: a system prompt, an
// image, a tool round with two calls and their results, tools and sampling settings, streaming)
// translated into every other provider format (Chat Completions, Messages, Converse, Gemini),
// compared with the expected provider bodies and warnings (expected/<client>-request.to-<provider>.json).
// The same format on both sides is sent as the client wrote it, not translated. UPDATE_GOLDEN=1
// rewrites the goldens.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import {
  type ClientChatFormat,
  type ProviderChatFormat,
  translateRequest,
} from '../../../src/dataplane/ai/formats/index.ts';
import { golden } from './stream-helpers.ts';

const CLIENTS: readonly ClientChatFormat[] = ['completions', 'messages', 'responses'];
const PROVIDERS: readonly ProviderChatFormat[] = ['completions', 'messages', 'converse', 'gemini'];

for (const client of CLIENTS) {
  const request = JSON.parse(
    readFileSync(new URL(`../../fixtures/formats/${client}-request.json`, import.meta.url), 'utf8'),
  );
  for (const provider of PROVIDERS) {
    if (provider === client) continue;
    test(`${client} request → ${provider}`, () => {
      const actual = `${JSON.stringify(translateRequest(client, provider, structuredClone(request)), null, 2)}\n`;
      assert.equal(actual, golden(`${client}-request.to-${provider}.json`, actual));
    });
  }
}
