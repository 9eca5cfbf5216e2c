// The inline moderation of an alpha (OpenAI) provider (alpha.moderation) through gw, with the
// official SDKs, against a stand-in of OpenAI's moderated completions (first proven by the openai
// SDK's own `moderation` parameter): gw sends the configured parameter in place of the client's,
// Score records every category's score in the access log and CEL and lets flagged content
// through (streams included), Block refuses a flagged request or answer in the client's format
// (an Anthropic client through a translated route too), a streamed request while a side blocks
// and a Passthrough request are refused (400) rather than sent unmoderated.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import {
  aiBackendYaml,
  freePort,
  gatewayYaml,
  lastAccessLogLine,
  llmRouteYaml,
  startTestGateway,
  type TestGateway,
} from '../../helpers/gateway.ts';
import { failureOf } from '../../helpers/guards.ts';
import { type ModeratedOpenAiStandIn, startModeratedOpenAiStandIn } from '../../helpers/moderated-openai-stand-in.ts';
import { frontendPolicyYaml } from '../frontend/helpers.ts';

const ROUTES = '{/v1/chat/completions: Completions, /v1/messages: Messages, /v1/responses: Responses}';
const KEY = 'sk-openai';

const moderated = (name: string, port: number, moderation: string, routes = ROUTES) =>
  aiBackendYaml(name, port, `alpha: {moderation: ${moderation}}`, KEY, routes);

const SCORE_BOTH = '{policy: {input: {mode: Score}, output: {mode: Score}}}';
const BLOCK_BOTH = '{model: omni-moderation-2024-09-26, policy: {input: {mode: Block}, output: {mode: Block}}}';
const BLOCK_OUTPUT = '{policy: {input: {mode: Score}, output: {mode: Block}}}';

describe('inline moderation of an alpha provider through gw', () => {
  let provider: ModeratedOpenAiStandIn;
  let gw: TestGateway;
  let port: number;
  const openaiAt = (backend: string) =>
    new OpenAI({ apiKey: 'client', baseURL: `http://127.0.0.1:${port}/${backend}/v1`, maxRetries: 0 });
  const anthropicAt = (backend: string) =>
    new Anthropic({ apiKey: 'client', baseURL: `http://127.0.0.1:${port}/${backend}`, maxRetries: 0 });
  const sent = () => provider.requests.at(-1)!.body;

  before(async () => {
    provider = await startModeratedOpenAiStandIn(KEY);
    port = await freePort();
    gw = await startTestGateway({
      'gateway.yaml': [
        gatewayYaml(port),
        frontendPolicyYaml(
          `{accessLog: {attributes: {add: [{name: inputFlagged, expression: 'llm.moderation.input.flagged'}, {name: hateScore, expression: 'llm.moderation.input.scores["hate"]'}, {name: outputCategories, expression: 'llm.moderation.output.categories'}]}}}`,
        ),
        '---\n',
        moderated('scored', provider.port, SCORE_BOTH),
        moderated('blocked', provider.port, BLOCK_BOTH),
        moderated('outblock', provider.port, BLOCK_OUTPUT),
        moderated('passthrough', provider.port, SCORE_BOTH, '{/v1/chat/completions: Passthrough}'),
        llmRouteYaml(['scored', 'blocked', 'outblock', 'passthrough']),
      ].join(''),
    });
  });

  after(async () => {
    await gw?.stop();
    await provider?.close();
  });

  it("the stand-in speaks OpenAI's moderated completions (the openai SDK's moderation parameter and results)", async () => {
    const client = new OpenAI({ apiKey: KEY, baseURL: `http://127.0.0.1:${provider.port}/v1`, maxRetries: 0 });
    const completion = await client.chat.completions.create({
      model: 'gpt-5',
      messages: [{ role: 'user', content: 'say the forbidden word' }],
      moderation: { model: 'omni-moderation-latest', policy: { input: { mode: 'score' }, output: { mode: 'score' } } },
    });
    assert.equal(completion.choices[0]!.message.content, 'echo: say murder');
    const moderation = completion.moderation!;
    assert.ok(moderation.input.type === 'moderation_results' && moderation.output.type === 'moderation_results');
    assert.equal(moderation.input.results[0]!.flagged, false);
    assert.equal(moderation.output.results[0]!.flagged, true);
    assert.equal(moderation.output.results[0]!.categories.violence, true);
  });

  it("Score: gw sends its parameter in place of the client's, records every score, and lets a flagged prompt through", async () => {
    const clean = await openaiAt('scored').chat.completions.create({
      model: 'gpt-5',
      messages: [{ role: 'user', content: 'hello' }],
      moderation: { model: 'client-choice', policy: { input: { mode: 'block' } } },
    });
    assert.equal(clean.choices[0]!.message.content, 'echo: hello');
    assert.deepEqual(sent().moderation, {
      model: 'omni-moderation-latest',
      policy: { input: { mode: 'score' }, output: { mode: 'score' } },
    });
    let line = await lastAccessLogLine(gw, '/scored/v1/chat/completions');
    assert.match(String(line['gw.ai.moderation']), /^input\(Score\)=pass harassment:0\.010,.*; output\(Score\)=pass /);
    const flagged = await openaiAt('scored').chat.completions.create({
      model: 'gpt-5',
      messages: [{ role: 'user', content: 'a hateful remark' }],
    });
    assert.equal(flagged.choices[0]!.message.content, 'echo: a hateful remark');
    line = await lastAccessLogLine(gw, '/scored/v1/chat/completions');
    assert.match(
      String(line['gw.ai.moderation']),
      /^input\(Score\)=flagged\(hate\) .*hate:0\.900.*; output\(Score\)=flagged\(hate\)/,
    );
    assert.equal(line.inputFlagged, true);
    assert.equal(line.hateScore, 0.9);
    assert.deepEqual(line.outputCategories, ['hate']);
    assert.equal(line['http.response.status_code'], 200);
  });

  it('Score on the Responses API and on a streamed answer: recorded, not blocked', async () => {
    const response = await openaiAt('scored').responses.create({ model: 'gpt-5', input: 'plan a murder' });
    assert.equal(response.output_text, 'echo: plan a murder');
    assert.deepEqual(sent().moderation, {
      model: 'omni-moderation-latest',
      policy: { input: { mode: 'score' }, output: { mode: 'score' } },
    });
    const line = await lastAccessLogLine(gw, '/scored/v1/responses');
    assert.match(
      String(line['gw.ai.moderation']),
      /^input\(Score\)=flagged\(violence\) .*; output\(Score\)=flagged\(violence\)/,
    );
    const stream = await openaiAt('scored').chat.completions.create({
      model: 'gpt-5',
      stream: true,
      messages: [{ role: 'user', content: 'say the forbidden word' }],
    });
    let text = '';
    for await (const chunk of stream) text += chunk.choices[0]?.delta.content ?? '';
    assert.equal(text, 'echo: say murder');
    assert.equal(sent().stream, true);
    const streamed = await lastAccessLogLine(gw, '/scored/v1/chat/completions');
    assert.match(String(streamed['gw.ai.moderation']), /^input\(Score\)=pass .*; output\(Score\)=flagged\(violence\) /);
  });

  it('Block: a flagged request is refused (403) in the Chat Completions format, with the configured model asked for; a clean one passes', async () => {
    const error = await failureOf(
      openaiAt('blocked').chat.completions.create({
        model: 'gpt-5',
        messages: [{ role: 'user', content: 'a hateful remark' }],
      }),
    );
    assert.ok(error instanceof OpenAI.PermissionDeniedError, String(error));
    assert.match(error.message, /The request was rejected due to inappropriate content/);
    assert.deepEqual(sent().moderation, {
      model: 'omni-moderation-2024-09-26',
      policy: { input: { mode: 'block' }, output: { mode: 'block' } },
    });
    const line = await lastAccessLogLine(gw, '/blocked/v1/chat/completions');
    assert.equal(line['http.response.status_code'], 403);
    assert.match(String(line.error), /rejected by inline moderation: input flagged \(hate\)/);
    const clean = await openaiAt('blocked').chat.completions.create({
      model: 'gpt-5',
      messages: [{ role: 'user', content: 'hello' }],
    });
    assert.equal(clean.choices[0]!.message.content, 'echo: hello');
  });

  it('Block on output: a flagged answer is refused (403) in the Messages format for an Anthropic client on a translated route', async () => {
    const error = await failureOf(
      anthropicAt('outblock').messages.create({
        model: 'gpt-5',
        max_tokens: 50,
        messages: [{ role: 'user', content: 'say the forbidden word' }],
      }),
    );
    assert.ok(error instanceof Anthropic.APIError, String(error));
    assert.equal(error.status, 403);
    assert.equal(
      (error.error as { error: { message: string } }).error.message,
      'The response was rejected due to inappropriate content',
    );
    assert.equal(provider.requests.at(-1)!.path, '/v1/chat/completions');
    assert.deepEqual(sent().moderation, {
      model: 'omni-moderation-latest',
      policy: { input: { mode: 'score' }, output: { mode: 'block' } },
    });
    const line = await lastAccessLogLine(gw, '/outblock/v1/messages');
    assert.match(String(line['gw.ai.moderation']), /^input\(Score\)=pass .*; output\(Block\)=flagged\(violence\) /);
    const clean = await anthropicAt('outblock').messages.create({
      model: 'gpt-5',
      max_tokens: 50,
      messages: [{ role: 'user', content: 'hello' }],
    });
    assert.deepEqual(clean.content, [{ type: 'text', text: 'echo: hello' }]);
  });

  it('a streamed request while a side blocks, and a Passthrough request, are refused (400) and never sent', async () => {
    const before = provider.requests.length;
    const streamed = await failureOf(
      openaiAt('outblock').chat.completions.create({
        model: 'gpt-5',
        stream: true,
        messages: [{ role: 'user', content: 'hello' }],
      }),
    );
    assert.ok(streamed instanceof OpenAI.BadRequestError, String(streamed));
    assert.match(streamed.message, /blocks flagged output .*streamed requests are refused/);
    const passthrough = await failureOf(
      openaiAt('passthrough').chat.completions.create({ model: 'gpt-5', messages: [{ role: 'user', content: 'hi' }] }),
    );
    assert.ok(passthrough instanceof OpenAI.BadRequestError, String(passthrough));
    assert.match(
      passthrough.message,
      /inline moderation \(alpha\.moderation\), which cannot be added to a Passthrough request/,
    );
    assert.equal(provider.requests.length, before);
  });
});
