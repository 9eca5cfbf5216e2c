// The response path of AI and GwModel traffic (issue 16, item 5): external processing of the
// response (whole and streamed), a response body transformation and traffic.buffer.response apply
// to what an `ai` GwBackend or a GwModel answers, as they do to an HTTP backend's response; a
// client that leaves mid-stream through the path aborts the provider request and ends the
// processor's stream. The openai SDK against the OpenAI mock, a real ext_proc processor.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import * as grpc from '@grpc/grpc-js';
import OpenAI from 'openai';
import {
  aiBackendYaml,
  freePort,
  gatewayYaml,
  lastAccessLogLine,
  startTestGateway,
  type TestGateway,
} from '../../helpers/gateway.ts';
import { type HangingProvider, startHangingProvider } from '../../helpers/hanging-provider.ts';
import { GATEWAY_AI, trafficPolicyYaml } from '../../helpers/policy-yaml.ts';
import { until } from '../../helpers/until.ts';
import type { MockServer } from '../../support/providers/mock-server.ts';
import { startOpenAiMock } from '../../support/providers/openai-mock.ts';
import {
  byScenario,
  type Conversation,
  headerOf,
  type Processor,
  type Sent,
  scenarioOf,
  startProcessor,
  streamEventsBack,
} from './ext-proc-processor.ts';

const UPSTREAM_KEY = 'sk-upstream';
const text = (bytes: Buffer | Uint8Array | undefined) => Buffer.from(bytes ?? []).toString('utf8');
const set = (key: string, value: string) => ({ header: { key, value } });

// ---------------------------------------------------------------------------------------------
// The processor's scripts (only the response is sent to it), by the scenario in metadata_context.

/** Buffered: the whole body, with `from` replaced by `to`; x-processed set, x-saw-route telling the route filter's header. */
function replaceWhole(from: string, to: string): (c: Conversation) => Promise<void> {
  return async (c) => {
    const head = await c.expect('response_headers');
    c.send({
      response_headers: {
        response: {
          header_mutation: {
            set_headers: [
              set('x-processed', 'yes'),
              set('x-saw-route', headerOf(head.response_headers.headers, 'x-route') ?? 'no'),
            ],
          },
        },
      },
    });
    const body = await c.expect('response_body');
    c.send({
      response_body: {
        response: { body_mutation: { body: Buffer.from(text(body.response_body.body).replaceAll(from, to)) } },
      },
    });
  };
}

/** FullDuplexStreamed: the first body chunk back as it is, then the stream fails (a processor that breaks). */
async function failAfterFirstChunk(c: Conversation): Promise<void> {
  await c.expect('response_headers');
  c.send({ response_headers: {} });
  const first = await c.expect('response_body');
  c.send({
    response_body: {
      response: { body_mutation: { streamed_response: { body: first.response_body.body, end_of_stream: false } } },
    },
  });
  c.fail(grpc.status.INTERNAL, 'the processor broke');
}

const scripts: Record<string, (c: Conversation) => Promise<void>> = {
  whole: replaceWhole('echo:', 'processed:'),
  breaks: failAfterFirstChunk,
  events: (c) => streamEventsBack(c, (text) => text.replaceAll('echo', 'ECHO')),
  model: replaceWhole('echo:', 'model processed:'),
};

/** traffic.extProc sending only the response to the processor, in `mode`, as `scenario`. */
function extProcYaml(processorPort: number, scenario: string, mode: 'Buffered' | 'FullDuplexStreamed'): string {
  return `extProc:
  url: http://127.0.0.1:${processorPort}
  metadataContext: {test: {scenario: '"${scenario}"'}}
  processingOptions: {requestHeaderMode: Skip, requestBodyMode: None, responseBodyMode: ${mode}}`;
}

// ---------------------------------------------------------------------------------------------
// Configuration.

/**
 * HTTPRoute `name` serving /<name>/... from AI GwBackend `backend` (prefix stripped), with a
 * ResponseHeaderModifier adding x-route: yes.
 */
function llmRoute(name: string, backend: string): string {
  return `apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: ${name}}
spec:
  parentRefs: [{name: ai}]
  rules:
    - matches: [{path: {type: PathPrefix, value: /${name}}}]
      filters:
        - {type: URLRewrite, urlRewrite: {path: {type: ReplacePrefixMatch, replacePrefixMatch: /}}}
        - {type: ResponseHeaderModifier, responseHeaderModifier: {add: [{name: x-route, value: 'yes'}]}}
      backendRefs: [{group: gw.dev, kind: GwBackend, name: ${backend}}]
---
`;
}

const ROUTES = '{/v1/chat/completions: Completions}';

describe('the response path of ai backends', () => {
  let provider: MockServer;
  let hanging: HangingProvider;
  let processor: Processor;
  let gw: TestGateway;
  let base: string;
  const client = (prefix: string) => new OpenAI({ apiKey: 'client', baseURL: `${base}/${prefix}/v1`, maxRetries: 0 });
  const conversationsOf = (scenario: string) =>
    processor.conversations.filter((conversation) => scenarioOf(conversation.messages[0]) === scenario);

  before(async () => {
    provider = await startOpenAiMock({ apiKey: UPSTREAM_KEY });
    hanging = await startHangingProvider('echo: first');
    processor = await startProcessor(byScenario(scripts));
    const port = await freePort();
    base = `http://127.0.0.1:${port}`;
    const scenario = (name: string, traffic: string, backend = 'openai') =>
      llmRoute(name, backend) + trafficPolicyYaml(name, name, traffic);
    gw = await startTestGateway({
      'gw.yaml': [
        gatewayYaml(port),
        aiBackendYaml('openai', provider.port, 'alpha: {}', UPSTREAM_KEY, ROUTES),
        aiBackendYaml('hanging', hanging.port, 'alpha: {}', UPSTREAM_KEY, ROUTES),
        scenario('whole', extProcYaml(processor.port, 'whole', 'Buffered')),
        scenario('events', extProcYaml(processor.port, 'events', 'FullDuplexStreamed')),
        scenario('leave', extProcYaml(processor.port, 'events', 'FullDuplexStreamed'), 'hanging'),
        scenario('breaks', extProcYaml(processor.port, 'breaks', 'FullDuplexStreamed'), 'hanging'),
        scenario(
          'transform',
          `transformation: {response: {body: 'string(response.body).split("echo:").join("transformed:")'}}`,
        ),
        scenario('buffer-closed', 'buffer: {response: {maxBytes: 64}}'),
        scenario('buffer-open', 'buffer: {response: {maxBytes: 2Ki, failureMode: FailOpen}}'),
        scenario('buffer-fits', 'buffer: {response: {maxBytes: 1Mi}}'),
      ].join(''),
    });
    assert.deepEqual(gw.logs, [], 'the configuration is served as written');
  });

  after(async () => {
    await gw.stop();
    await processor.close();
    await provider.close();
    await hanging.close();
  });

  it("extProc (Buffered) changes a whole completion, after the route's response filters", async () => {
    const { data, response } = await client('whole')
      .chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hello there' }] })
      .withResponse();
    assert.equal(data.choices[0]!.message.content, 'processed: hello there');
    assert.equal(response.headers.get('x-processed'), 'yes');
    assert.equal(response.headers.get('x-saw-route'), 'yes', 'the processor saw the route filter header');
    assert.equal(response.headers.get('content-length'), String(Buffer.byteLength(JSON.stringify(data))));
  });

  it('extProc (Buffered) reads a streamed completion whole and changes it', async () => {
    const stream = await client('whole').chat.completions.create({
      model: 'gpt-4o-mini',
      messages: [{ role: 'user', content: 'one two' }],
      stream: true,
    });
    let content = '';
    for await (const chunk of stream) content += chunk.choices[0]?.delta?.content ?? '';
    assert.equal(content, 'processed: one two');
  });

  it('extProc (FullDuplexStreamed) changes a streamed completion event by event', async () => {
    provider.script('/v1/chat/completions', { chunkDelayMs: 60 });
    const before = conversationsOf('events').length;
    const stream = await client('events').chat.completions.create({
      model: 'gpt-4o-mini',
      messages: [{ role: 'user', content: 'one two three four' }],
      stream: true,
    });
    let content = '';
    let endSeenAtFirstChunk: boolean | undefined;
    for await (const chunk of stream) {
      if (endSeenAtFirstChunk === undefined) {
        const conversation = conversationsOf('events')[before]!;
        endSeenAtFirstChunk = conversation.messages.some((m: Sent) => m.response_body?.end_of_stream === true);
      }
      content += chunk.choices[0]?.delta?.content ?? '';
    }
    assert.equal(content, 'ECHO: one two three four');
    assert.equal(endSeenAtFirstChunk, false, 'the client had its first event before the provider finished');
    const bodies = conversationsOf('events')[before]!.messages.filter((m: Sent) => m.request === 'response_body');
    assert.ok(bodies.length > 3, `the body reached the processor event by event (${bodies.length} messages)`);
  });

  it('a response body transformation changes an AI completion', async () => {
    const { data, response } = await client('transform')
      .chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] })
      .withResponse();
    assert.equal(data.choices[0]!.message.content, 'transformed: hi');
    assert.equal(response.headers.get('content-length'), String(Buffer.byteLength(JSON.stringify(data))));
  });

  it('buffer.response over its limit answers 502 (FailClosed), and the access log says why', async () => {
    await assert.rejects(
      client('buffer-closed').chat.completions.create({
        model: 'gpt-4o-mini',
        messages: [{ role: 'user', content: 'hi' }],
      }),
      (error: unknown) => error instanceof OpenAI.APIError && error.status === 502,
    );
    const line = await lastAccessLogLine(gw, '/buffer-closed/v1/chat/completions');
    assert.equal(line['http.response.status_code'], 502);
    assert.match(String(line.error), /larger than the 64-byte buffer limit/);
  });

  it('buffer.response with FailOpen sends an AI stream within its limit whole, and one over it as it is', async () => {
    const streamed = (words: number) =>
      fetch(`${base}/buffer-open/v1/chat/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({
          model: 'gpt-4o-mini',
          messages: [{ role: 'user', content: Array.from({ length: words }, (_, i) => `w${i}`).join(' ') }],
          stream: true,
        }),
      });
    const within = await streamed(1);
    const withinBody = await within.text();
    assert.equal(within.headers.get('content-length'), String(Buffer.byteLength(withinBody)), 'read whole');
    const over = await streamed(40);
    const overBody = await over.text();
    assert.ok(overBody.length > 2048);
    assert.equal(over.headers.get('content-length'), null, 'streamed as it came');
    assert.match(overBody, /w39/);
    assert.match(overBody, /data: \[DONE\]/);
    // The SDK reads the one over the limit as any stream.
    const stream = await client('buffer-open').chat.completions.create({
      model: 'gpt-4o-mini',
      messages: [{ role: 'user', content: Array.from({ length: 40 }, (_, i) => `w${i}`).join(' ') }],
      stream: true,
    });
    let content = '';
    for await (const chunk of stream) content += chunk.choices[0]?.delta?.content ?? '';
    assert.match(content, /^echo: w0 w1 .* w39$/);
  });

  it('buffer.response within its limit sends a streamed AI response whole, with its length', async () => {
    const response = await fetch(`${base}/buffer-fits/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'x y' }], stream: true }),
    });
    const body = await response.text();
    assert.equal(response.status, 200);
    assert.equal(response.headers.get('content-length'), String(Buffer.byteLength(body)));
    assert.match(body, /data: \[DONE\]/);
  });

  it('a client leaving mid-stream through the path aborts the provider request and ends the processor stream', async () => {
    const closedBefore = hanging.closed();
    const before = conversationsOf('events').length;
    const abort = new AbortController();
    const response = await fetch(`${base}/leave/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'x' }], stream: true }),
      signal: abort.signal,
    });
    assert.equal(response.status, 200);
    const reader = response.body!.getReader();
    const first = await reader.read();
    assert.match(Buffer.from(first.value!).toString(), /ECHO: first/, 'the event came through the processor');
    abort.abort();
    assert.ok(await until(() => hanging.closed() > closedBefore, 2000), 'the provider request was aborted');
    const conversation = conversationsOf('events')[before];
    assert.ok(conversation, 'the response went to the processor');
    assert.ok(await until(() => conversation.halfClosed, 2000), 'the processor stream ended');
    const line = await lastAccessLogLine(gw, '/leave/v1/chat/completions');
    assert.equal(line['http.response.status_code'], 200);
  });

  it('a processor failing mid-stream ends the client response (a reset) and aborts the provider request', async () => {
    const closedBefore = hanging.closed();
    const response = await fetch(`${base}/breaks/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'x' }], stream: true }),
      signal: AbortSignal.timeout(5000),
    });
    assert.equal(response.status, 200);
    let received = '';
    await assert.rejects(
      (async () => {
        for await (const chunk of response.body!) received += Buffer.from(chunk).toString('utf8');
      })(),
      (error: Error) => error.name !== 'TimeoutError',
      'the response was cut off, not left open',
    );
    assert.match(received, /echo: first/, 'what the processor sent came through');
    assert.ok(await until(() => hanging.closed() > closedBefore, 2000), 'the provider request was aborted');
  });
});

describe('the response path of GwModels', () => {
  let provider: MockServer;
  let processor: Processor;
  let gw: TestGateway;
  let client: OpenAI;

  before(async () => {
    provider = await startOpenAiMock({ apiKey: UPSTREAM_KEY });
    processor = await startProcessor(byScenario(scripts));
    const port = await freePort();
    gw = await startTestGateway({
      'gw.yaml': `${gatewayYaml(port)}apiVersion: gw.dev/v1alpha1
kind: GwModel
metadata: {name: gpt-4o-mini}
spec:
  parentRefs: [{group: gateway.networking.k8s.io, kind: Gateway, name: ai}]
  provider: Alpha
  baseURL: http://127.0.0.1:${provider.port}/v1
  policies: {auth: {key: ${UPSTREAM_KEY}}}
---
${trafficPolicyYaml('models', GATEWAY_AI, extProcYaml(processor.port, 'model', 'Buffered'))}`,
    });
    assert.deepEqual(gw.logs, [], 'the configuration is served as written');
    client = new OpenAI({ apiKey: 'client', baseURL: `http://127.0.0.1:${port}/v1`, maxRetries: 0 });
  });

  after(async () => {
    await gw.stop();
    await processor.close();
    await provider.close();
  });

  it("extProc changes a listener-attached GwModel's completion", async () => {
    const { data, response } = await client.chat.completions
      .create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] })
      .withResponse();
    assert.equal(data.choices[0]!.message.content, 'model processed: hi');
    assert.equal(response.headers.get('x-processed'), 'yes');
    assert.equal(processor.conversations.length, 1);
  });
});
