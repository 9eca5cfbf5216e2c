// The Detect route type through gw with the official SDKs, as agentgateway defines it: the request
// is forwarded as it is (the client's path and format, no translation, no model aliases, no prompt
// enrichment), except that a JSON body goes through the body policies (defaults, overrides,
// transformations, final transformations); the answer is passed on as it is and metered from
// whatever format it turns out to be in. A body that is not a JSON object is forwarded unread.
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
import { startAnthropicMock } from '../../support/providers/anthropic-mock.ts';
import type { MockServer } from '../../support/providers/mock-server.ts';
import { startOpenAiMock } from '../../support/providers/openai-mock.ts';

type Body = Record<string, unknown>;

const DETECT = "{'*': Detect}";

/** policies.ai entries in YAML flow style, one a line (continuation lines indented inside `ai: {`). */
const policies = (...entries: string[]) => entries.join(',\n      ');

describe('the Detect route type', () => {
  let openaiUpstream: MockServer;
  let anthropicUpstream: MockServer;
  let gw: TestGateway;
  let base: string;

  const logLine = (path: string) => lastAccessLogLine(gw, path);
  const openai = (backend: string) =>
    new OpenAI({
      apiKey: 'client',
      baseURL: `${base}/${backend}/v1`,
      maxRetries: 0,
      defaultHeaders: { 'x-tenant': 'acme' },
    });
  const lastSeen = (upstream: MockServer) => upstream.requests.at(-1)!;

  before(async () => {
    openaiUpstream = await startOpenAiMock({ apiKey: 'sk-openai' });
    anthropicUpstream = await startAnthropicMock({ apiKey: 'sk-anthropic' });
    const port = await freePort();
    base = `http://127.0.0.1:${port}`;
    gw = await startTestGateway({
      'gateway.yaml': [
        gatewayYaml(port),
        // Aliases and prompt enrichment are configured to show that Detect leaves them out.
        aiBackendYaml(
          'gpt',
          openaiUpstream.port,
          'alpha: {}',
          'sk-openai',
          DETECT,
          policies(
            'modelAliases: {fast: gpt-4o}',
            'prompt: {prepend: [{role: system, content: house rules}]}',
            'defaults: [{field: temperature, value: 0.3}]',
            'overrides: [{field: seed, value: 7}]',
            `transformations: [{field: user, expression: 'request.headers["x-tenant"]'}]`,
            `finalTransformations: [{field: metadata, expression: '{"sent_model": llmRequest.model}'}]`,
          ),
        ),
        aiBackendYaml(
          'embed',
          openaiUpstream.port,
          'alpha: {}',
          'sk-openai',
          DETECT,
          'defaults: [{field: dimensions, value: 4}]',
        ),
        aiBackendYaml(
          'claude',
          anthropicUpstream.port,
          'gamma: {}',
          'sk-anthropic',
          DETECT,
          policies(
            'defaults: [{field: temperature, value: 0.5}]',
            'overrides: [{field: max_tokens, value: 3}]',
            `transformations: [{field: metadata, expression: '{"user_id": request.headers["x-tenant"]}'}]`,
          ),
        ),
        aiBackendYaml('pass', openaiUpstream.port, 'alpha: {}', 'sk-openai', "{'*': Passthrough}"),
        llmRouteYaml(['gpt', 'embed', 'claude', 'pass']),
      ].join(''),
    });
  });

  after(async () => {
    await gw?.stop();
    await Promise.all([openaiUpstream?.close(), anthropicUpstream?.close()]);
  });

  describe('a Chat Completions body', () => {
    it('reaches the provider with the body policies applied, not aliased or enriched, and is metered', async () => {
      const completion = await openai('gpt').chat.completions.create({
        model: 'fast',
        messages: [{ role: 'user', content: 'hello detect' }],
      });
      assert.equal(completion.choices[0]!.message.content, 'echo: hello detect');
      const seen = lastSeen(openaiUpstream);
      assert.equal(seen.path, '/v1/chat/completions');
      assert.equal(seen.headers.authorization, 'Bearer sk-openai');
      assert.equal(seen.headers['content-type'], 'application/json');
      const body = seen.body as Body;
      assert.equal(body.temperature, 0.3, 'defaults');
      assert.equal(body.seed, 7, 'overrides');
      assert.equal(body.user, 'acme', 'transformations');
      assert.deepEqual(body.metadata, { sent_model: 'fast' }, 'finalTransformations');
      assert.equal(body.model, 'fast', 'no model alias on Detect');
      assert.deepEqual(body.messages, [{ role: 'user', content: 'hello detect' }], 'no prompt enrichment on Detect');
      const line = await logLine('/gpt/v1/chat/completions');
      assert.equal(line['http.response.status_code'], 200);
      assert.equal(line['gen_ai.request.model'], 'fast');
      assert.equal(line['gen_ai.response.model'], completion.model);
      assert.equal(line['gen_ai.usage.input_tokens'], completion.usage!.prompt_tokens);
      assert.equal(line['gen_ai.usage.output_tokens'], completion.usage!.completion_tokens);
    });

    it('streamed: the chunks pass as they are, metered from the usage chunk the client asked for', async () => {
      const stream = await openai('gpt').chat.completions.create({
        model: 'gpt-4o-mini',
        messages: [{ role: 'user', content: 'one two three' }],
        stream: true,
        stream_options: { include_usage: true },
      });
      let text = '';
      let usage: OpenAI.CompletionUsage | undefined;
      for await (const chunk of stream) {
        text += chunk.choices[0]?.delta.content ?? '';
        if (chunk.usage) usage = chunk.usage;
      }
      assert.equal(text, 'echo: one two three');
      assert.ok(usage, 'the usage chunk the client asked for reaches it');
      const body = lastSeen(openaiUpstream).body as Body;
      assert.equal(body.temperature, 0.3);
      assert.equal(body.seed, 7);
      const line = await logLine('/gpt/v1/chat/completions');
      assert.equal(line['gw.ai.streaming'], true);
      assert.equal(line['gen_ai.usage.input_tokens'], usage.prompt_tokens);
      assert.equal(line['gen_ai.usage.output_tokens'], usage.completion_tokens);
    });

    it('streamed without include_usage: gw asks for nothing on the client’s behalf', async () => {
      const stream = await openai('gpt').chat.completions.create({
        model: 'gpt-4o-mini',
        messages: [{ role: 'user', content: 'quiet' }],
        stream: true,
      });
      for await (const chunk of stream) assert.equal(chunk.usage ?? undefined, undefined);
      assert.equal((lastSeen(openaiUpstream).body as Body).stream_options, undefined);
      const line = await logLine('/gpt/v1/chat/completions');
      assert.equal(line['gen_ai.usage.input_tokens'], undefined);
    });
  });

  describe('a Responses body', () => {
    it('reaches the provider with the body policies applied and is metered', async () => {
      const response = await openai('gpt').responses.create({ model: 'gpt-4o-mini', input: 'hello responses' });
      assert.equal(response.output_text, 'echo: hello responses');
      const seen = lastSeen(openaiUpstream);
      assert.equal(seen.path, '/v1/responses');
      assert.equal((seen.body as Body).temperature, 0.3);
      assert.equal((seen.body as Body).user, 'acme');
      const line = await logLine('/gpt/v1/responses');
      assert.equal(line['gen_ai.usage.input_tokens'], response.usage!.input_tokens);
      assert.equal(line['gen_ai.usage.output_tokens'], response.usage!.output_tokens);
    });

    it('streamed: the events pass as they are, metered from response.completed', async () => {
      const stream = openai('gpt').responses.stream({ model: 'gpt-4o-mini', input: 'stream four words here' });
      let text = '';
      for await (const event of stream) if (event.type === 'response.output_text.delta') text += event.delta;
      const final = await stream.finalResponse();
      assert.equal(text, 'echo: stream four words here');
      assert.equal((lastSeen(openaiUpstream).body as Body).seed, 7);
      const line = await logLine('/gpt/v1/responses');
      assert.equal(line['gen_ai.usage.input_tokens'], final.usage!.input_tokens);
      assert.equal(line['gen_ai.usage.output_tokens'], final.usage!.output_tokens);
      assert.equal(typeof line['gw.ai.time_to_first_token'], 'number');
    });
  });

  it('an Embeddings body: a default the client left out shapes the answer, and it is metered', async () => {
    const response = await openai('embed').embeddings.create({
      model: 'text-embedding-3-small',
      input: 'one two three',
      encoding_format: 'float',
    });
    assert.equal(response.data[0]!.embedding.length, 4, 'dimensions: 4 from ai.defaults');
    assert.equal((lastSeen(openaiUpstream).body as Body).dimensions, 4);
    const line = await logLine('/embed/v1/embeddings');
    assert.equal(line['gen_ai.request.model'], 'text-embedding-3-small');
    assert.equal(line['gen_ai.usage.input_tokens'], response.usage.prompt_tokens);
    assert.equal(line['gen_ai.usage.output_tokens'], 0);
  });

  describe('a Messages body to a gamma provider', () => {
    const anthropic = () =>
      new Anthropic({
        apiKey: 'client-key',
        baseURL: `${base}/claude`,
        maxRetries: 0,
        defaultHeaders: { 'x-tenant': 'acme' },
      });

    it('reaches the provider with the override applied (the answer is cut at 3 tokens) and is metered', async () => {
      const message = await anthropic().messages.create({
        model: 'claude-sonnet-4-5',
        max_tokens: 1000,
        messages: [{ role: 'user', content: 'one two three four five' }],
      });
      assert.equal(message.stop_reason, 'max_tokens');
      assert.deepEqual(message.content, [{ type: 'text', text: 'echo: one two' }]);
      const seen = lastSeen(anthropicUpstream);
      assert.equal(seen.path, '/v1/messages');
      assert.equal(seen.headers['x-api-key'], 'sk-anthropic');
      assert.equal(JSON.stringify(seen.headers).includes('client-key'), false);
      assert.ok(seen.headers['anthropic-version']);
      const body = seen.body as Body;
      assert.equal(body.max_tokens, 3);
      assert.equal(body.temperature, 0.5);
      assert.deepEqual(body.metadata, { user_id: 'acme' });
      const line = await logLine('/claude/v1/messages');
      assert.equal(line['gen_ai.request.model'], 'claude-sonnet-4-5');
      assert.equal(line['gen_ai.usage.input_tokens'], message.usage.input_tokens);
      assert.equal(line['gen_ai.usage.output_tokens'], message.usage.output_tokens);
      assert.equal(line['gen_ai.usage.cache_read.input_tokens'], 0);
    });

    it('streamed: the events pass as they are, metered from message_start and message_delta', async () => {
      const stream = anthropic().messages.stream({
        model: 'claude-sonnet-4-5',
        max_tokens: 1000,
        messages: [{ role: 'user', content: 'alpha beta gamma delta' }],
      });
      const final = await stream.finalMessage();
      assert.deepEqual(final.content, [{ type: 'text', text: 'echo: alpha beta' }]);
      assert.equal((lastSeen(anthropicUpstream).body as Body).max_tokens, 3);
      const line = await logLine('/claude/v1/messages');
      assert.equal(line['gw.ai.streaming'], true);
      assert.equal(line['gen_ai.usage.input_tokens'], final.usage.input_tokens);
      assert.equal(line['gen_ai.usage.output_tokens'], final.usage.output_tokens);
    });

    it('a stream the provider breaks ends with an error event in the stream’s own format', async () => {
      anthropicUpstream.script('/v1/messages', { resetAfterEvents: 3 });
      const stream = anthropic().messages.stream({
        model: 'claude-sonnet-4-5',
        max_tokens: 1000,
        messages: [{ role: 'user', content: 'one two three' }],
      });
      // An OpenAI-shaped error event (no `event: error`) would be ignored by this SDK.
      await assert.rejects(
        stream.finalMessage(),
        (error: unknown) =>
          error instanceof Anthropic.APIError && /ended before the response was complete/.test(error.message),
      );
    });

    it('is not translated: a Chat Completions body goes to the gamma provider as it is, its error comes back as it is', async () => {
      const error = await openai('claude')
        .chat.completions.create({ model: 'claude-sonnet-4-5', messages: [{ role: 'user', content: 'hi' }] })
        .then(
          () => assert.fail('the gamma provider has no /v1/chat/completions'),
          (caught: unknown) => caught,
        );
      assert.ok(error instanceof OpenAI.NotFoundError);
      assert.deepEqual(error.error, { type: 'not_found_error', message: 'Not found.' });
      const seen = lastSeen(anthropicUpstream);
      assert.equal(seen.path, '/v1/chat/completions');
      assert.deepEqual((seen.body as Body).messages, [{ role: 'user', content: 'hi' }]);
      assert.equal((seen.body as Body).max_tokens, 3, 'the body policies apply to any JSON object');
    });
  });

  describe('a body that is not a JSON object is forwarded unread, as Passthrough', () => {
    const post = (path: string, contentType: string, body: string, backend = 'gpt') =>
      fetch(`${base}/${backend}${path}`, { method: 'POST', headers: { 'content-type': contentType }, body });

    it('multipart form data: the same bytes and content type reach the provider (on Passthrough too)', async () => {
      const boundary = 'gw-detect-boundary';
      const form = [
        `--${boundary}`,
        'Content-Disposition: form-data; name="model"',
        '',
        'whisper-1',
        `--${boundary}`,
        'Content-Disposition: form-data; name="file"; filename="a.wav"',
        'Content-Type: audio/wav',
        '',
        'RIFF....WAVEfmt ',
        `--${boundary}--`,
        '',
      ].join('\r\n');
      for (const backend of ['gpt', 'pass']) {
        const response = await post(
          '/v1/audio/transcriptions',
          `multipart/form-data; boundary=${boundary}`,
          form,
          backend,
        );
        // The OpenAI mock has no audio API: its own 404 comes back as it is.
        assert.equal(response.status, 404);
        assert.match(((await response.json()) as { error: { message: string } }).error.message, /Invalid URL/);
        const seen = lastSeen(openaiUpstream);
        assert.equal(seen.path, '/v1/audio/transcriptions');
        assert.equal(seen.headers['content-type'], `multipart/form-data; boundary=${boundary}`, backend);
        assert.equal(seen.body, form);
      }
    });

    it('malformed JSON and a JSON array: forwarded byte for byte, the provider answers', async () => {
      for (const text of ['{"model": "gpt-4o-mini", "messages": [', '[{"model": "gpt-4o-mini"}]']) {
        const response = await post('/v1/chat/completions', 'application/json', text);
        assert.equal(response.status, 400, text);
        const error = (await response.json()) as { error: { message: string } };
        assert.match(error.error.message, /could not parse the JSON body/, 'the provider’s error, not gw’s');
        // The mock records what it could parse (the array); the length shows the spaces were kept.
        const seen = lastSeen(openaiUpstream);
        assert.equal(seen.headers['content-length'], String(text.length));
        assert.deepEqual(seen.body, typeof seen.body === 'string' ? text : JSON.parse(text));
      }
    });

    it('a JSON object nested deeper than gw reads (128 levels): forwarded byte for byte', async () => {
      const text = `{"model":"gpt-4o-mini","deep":${'{"a":'.repeat(200)}1${'}'.repeat(200)}}`;
      const response = await post('/v1/chat/completions', 'application/json', text);
      // The provider answers (the mock: no messages), not gw's "nested too deep" 400.
      assert.equal(response.status, 400);
      assert.doesNotMatch(await response.text(), /nested/);
      const seen = lastSeen(openaiUpstream);
      assert.equal(seen.headers['content-length'], String(text.length));
      assert.equal((seen.body as Body).temperature, undefined);
    });

    it('JSON sent as text/plain: unread, no policy applied, and still metered from the answer', async () => {
      const text = JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'plain text' }] });
      const response = await post('/v1/chat/completions', 'text/plain', text);
      assert.equal(response.status, 200);
      const completion = (await response.json()) as OpenAI.ChatCompletion;
      const seen = lastSeen(openaiUpstream);
      assert.equal(seen.headers['content-type'], 'text/plain');
      assert.equal(JSON.stringify(seen.body), text, 'no default, override or transformation');
      const line = await logLine('/gpt/v1/chat/completions');
      assert.equal(line['gen_ai.usage.input_tokens'], completion.usage!.prompt_tokens);
    });

    it('an answer that is not JSON is passed on as it is', async () => {
      const audio = new Uint8Array([0x52, 0x49, 0x46, 0x46, 0x00, 0xff, 0x10, 0x80]);
      openaiUpstream.script('/v1/audio/speech', { reply: { kind: 'body', body: audio, contentType: 'audio/wav' } });
      const response = await post('/v1/audio/speech', 'application/json', '{"model":"tts-1","input":"hi"}');
      assert.equal(response.status, 200);
      assert.equal(response.headers.get('content-type'), 'audio/wav');
      assert.deepEqual(new Uint8Array(await response.arrayBuffer()), audio);
      const line = await logLine('/gpt/v1/audio/speech');
      assert.equal(line['gen_ai.usage.input_tokens'], undefined);
    });
  });
});
