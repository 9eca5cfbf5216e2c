// Recorded client requests (test/fixtures/formats/<client>-request.json: a system prompt, an
// image, a tool round with two calls and their results — the Chat Completions one with the signed
// reasoning gw gives its clients (reasoning_content, reasoning_signature) — tools and sampling
// settings, streaming)
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

test("a dropped end-user id is reported where the client put it, in each client format's name", () => {
  const cases = [
    ['completions', { model: 'm', messages: [{ role: 'user', content: 'hi' }], user: 'u-1' }, 'user'],
    [
      'completions',
      { model: 'm', messages: [{ role: 'user', content: 'hi' }], safety_identifier: 'u-1' },
      'safety_identifier',
    ],
    [
      'messages',
      { model: 'm', max_tokens: 9, messages: [{ role: 'user', content: 'hi' }], metadata: { user_id: 'u-1' } },
      'metadata.user_id',
    ],
    ['responses', { model: 'm', input: 'hi', safety_identifier: 'u-1' }, 'safety_identifier'],
  ] as const;
  for (const [client, body, path] of cases) {
    for (const provider of ['converse', 'gemini'] as const) {
      const { warnings } = translateRequest(client, provider, structuredClone(body));
      assert.deepEqual(
        warnings?.map((warning) => warning.path),
        [path],
        `${client} → ${provider}`,
      );
    }
  }
});
