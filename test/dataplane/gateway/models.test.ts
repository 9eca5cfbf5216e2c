// GwModels on the request path: matching by the body's model (exact, wildcard, `*`), Internal
// models reachable only through virtual models, failover between targets, and discovery listing
// exactly the Public models.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import OpenAI from 'openai';
import {
  freePort,
  gatewayYaml,
  gwModelYaml,
  MODEL_ROUTE_YAML,
  startTestGateway,
  type TestGateway,
} from '../../helpers/gateway.ts';
import { startAnthropicMock } from '../../support/providers/anthropic-mock.ts';
import { startOpenAiMock } from '../../support/providers/openai-mock.ts';

describe('GwModels through gw', () => {
  let openaiUpstream: Awaited<ReturnType<typeof startOpenAiMock>>;
  let backupUpstream: Awaited<ReturnType<typeof startOpenAiMock>>;
  let anthropicUpstream: Awaited<ReturnType<typeof startAnthropicMock>>;
  let gw: TestGateway;
  let client: OpenAI;

  before(async () => {
    openaiUpstream = await startOpenAiMock({ apiKey: 'sk-openai' });
    backupUpstream = await startOpenAiMock({ apiKey: 'sk-openai' });
    anthropicUpstream = await startAnthropicMock({ apiKey: 'sk-anthropic' });
    const port = await freePort();
    gw = await startTestGateway({
      'gateway.yaml': `${gatewayYaml(port)}${MODEL_ROUTE_YAML}${gwModelYaml('gpt-4o-mini', `  provider: Alpha\n  baseURL: http://127.0.0.1:${openaiUpstream.port}/v1\n  policies: {auth: {key: sk-openai}}`)}${gwModelYaml('claude', `  match: {model: 'claude-*'}\n  provider: Gamma\n  baseURL: http://127.0.0.1:${anthropicUpstream.port}/v1\n  policies: {auth: {key: sk-anthropic}}`)}${gwModelYaml('primary', `  visibility: Internal\n  provider: Alpha\n  baseURL: http://127.0.0.1:${openaiUpstream.port}/v1\n  policies: {auth: {key: sk-openai}, health: {eviction: {duration: 60s}}}`)}${gwModelYaml('backup', `  visibility: Internal\n  provider: Alpha\n  baseURL: http://127.0.0.1:${backupUpstream.port}/v1\n  policies: {auth: {key: sk-openai}}`)}${gwModelYaml('smart', `  virtualModel:\n    failover:\n      targets:\n        - {modelRef: {name: primary}, model: gpt-4o, priority: 0}\n        - {modelRef: {name: backup}, model: gpt-4o-mini, priority: 1}`)}`,
    });
    client = new OpenAI({ apiKey: 'client', baseURL: `http://127.0.0.1:${port}/v1`, maxRetries: 0 });
  });

  after(async () => {
    await gw?.stop();
    await Promise.all([openaiUpstream?.close(), backupUpstream?.close(), anthropicUpstream?.close()]);
  });

  it('lists exactly the Public models', async () => {
    const models = await client.models.list();
    assert.deepEqual(models.data.map((m) => m.id).sort(), ['claude-*', 'gpt-4o-mini', 'smart']);
  });

  it('matches an exact model and a wildcard model (translated to the Messages provider)', async () => {
    const exact = await client.chat.completions.create({
      model: 'gpt-4o-mini',
      messages: [{ role: 'user', content: 'a' }],
    });
    assert.equal(exact.choices[0]!.message.content, 'echo: a');
    const wildcard = await client.chat.completions.create({
      model: 'claude-opus-4',
      messages: [{ role: 'user', content: 'b' }],
    });
    assert.equal(wildcard.choices[0]!.message.content, 'echo: b');
    assert.equal((anthropicUpstream.requests.at(-1)!.body as { model: string }).model, 'claude-opus-4');
  });

  it('refuses an unknown model and an Internal one with 404 model_not_found', async () => {
    for (const model of ['nope', 'primary']) {
      await assert.rejects(
        client.chat.completions.create({ model, messages: [{ role: 'user', content: 'x' }] }),
        (error: unknown) => error instanceof OpenAI.NotFoundError && error.code === 'model_not_found',
      );
    }
  });

  it('fails over from the preferred target to the next priority, sending each its model', async () => {
    openaiUpstream.script('/v1/chat/completions', { reply: { kind: 'error', status: 503 } });
    const answer = await client.chat.completions.create({ model: 'smart', messages: [{ role: 'user', content: 'c' }] });
    assert.equal(answer.choices[0]!.message.content, 'echo: c');
    assert.equal((backupUpstream.requests.at(-1)!.body as { model: string }).model, 'gpt-4o-mini');
    // primary is now evicted (60 s): the next request goes straight to backup.
    const before = openaiUpstream.requests.length;
    await client.chat.completions.create({ model: 'smart', messages: [{ role: 'user', content: 'd' }] });
    assert.equal(openaiUpstream.requests.length, before);
  });
});
