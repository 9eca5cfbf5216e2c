// traffic.extProc end to end: gw in-process in front of a recording node:http upstream, with a
// real Envoy ext_proc processor (@grpc/grpc-js on gw's own protos). Each scenario has its own
// HTTPRoute (path prefix) and GwPolicy; the processor picks its script from the policy's
// metadataContext (test.scenario), so one processor serves them all.
import assert from 'node:assert/strict';
import { Readable } from 'node:stream';
import { after, before, describe, it } from 'node:test';
import * as grpc from '@grpc/grpc-js';
import { request } from 'undici';
import { gatewayYaml, refusedPort, type TestGateway } from '../../helpers/gateway.ts';
import { httpRequest, type RequestOptions } from '../../helpers/http-request.ts';
import { indentYaml, prefixRouteYaml, staticBackendYaml, trafficPolicyYaml } from '../../helpers/policy-yaml.ts';
import type { Answer, RecordingUpstream } from '../../helpers/recording-upstream.ts';
import { until } from '../../helpers/until.ts';
import { startUpstreamGateway, type UpstreamGateway } from '../../helpers/upstream-gateway.ts';
import {
  byScenario,
  type Conversation,
  headerOf,
  type Processor,
  type Sent,
  scenarioOf,
  startProcessor,
  structJson,
} from './ext-proc-processor.ts';

/** URLs of ?hang requests whose connection closed. */
const hung: string[] = [];

/**
 * The upstream's answer: "upstream ok" with x-upstream: yes; ?size=N sends N bytes with a
 * Content-Length, ?hang a first chunk and then nothing until the client goes away.
 */
const upstreamAnswer: Answer = (req, res) => {
  const query = new URL(req.url ?? '/', 'http://x').searchParams;
  res.writeHead(200, {
    'content-type': 'text/plain',
    'x-upstream': 'yes',
    ...(query.has('size') ? { 'content-length': query.get('size')! } : {}),
  });
  if (query.has('size')) {
    // A large body in 64 KiB writes, with backpressure.
    let left = Number(query.get('size'));
    const write = (): void => {
      while (left > 0) {
        const size = Math.min(left, 64 * 1024);
        left -= size;
        if (!res.write(Buffer.alloc(size, 'x'))) return void res.once('drain', write);
      }
      res.end();
    };
    write();
  } else if (query.has('hang')) {
    res.write('first chunk');
    res.once('close', () => hung.push(req.url ?? ''));
  } else res.end('upstream ok');
};

// ---------------------------------------------------------------------------------------------
// The processor's scripts, by the scenario name gw sends in metadata_context.

const text = (bytes: Buffer | Uint8Array | undefined) => Buffer.from(bytes ?? []).toString('utf8');
const set = (key: string, value: string, extra: Record<string, unknown> = {}) => ({ header: { key, value }, ...extra });

/** Answers whatever comes without changing anything (bodies echoed in full-duplex mode). */
async function passThrough(conversation: Conversation): Promise<void> {
  const fullDuplex = { request: true, response: true };
  for (;;) {
    const message = await conversation.next();
    if (!message) return;
    if (message.protocol_config) {
      fullDuplex.request = message.protocol_config.request_body_mode === 'FULL_DUPLEX_STREAMED';
      fullDuplex.response = message.protocol_config.response_body_mode === 'FULL_DUPLEX_STREAMED';
    }
    const kind: string = message.request;
    if (kind === 'request_headers' || kind === 'response_headers') conversation.send({ [kind]: {} });
    else if (kind === 'request_body' || kind === 'response_body') {
      const body = message[kind];
      const streamed = fullDuplex[kind === 'request_body' ? 'request' : 'response'];
      conversation.send({
        [kind]: streamed
          ? {
              response: {
                body_mutation: { streamed_response: { body: body.body, end_of_stream: body.end_of_stream } },
              },
            }
          : {},
      });
    }
  }
}

/** Streams body chunks back upper-cased until end_of_stream. */
async function upperCaseBody(conversation: Conversation, kind: 'request_body' | 'response_body'): Promise<void> {
  for (;;) {
    const message = await conversation.expect(kind);
    const body = message[kind];
    conversation.send({
      [kind]: {
        response: {
          body_mutation: {
            streamed_response: { body: Buffer.from(text(body.body).toUpperCase()), end_of_stream: body.end_of_stream },
          },
        },
      },
    });
    if (body.end_of_stream) return;
  }
}

const scripts: Record<string, (conversation: Conversation) => Promise<void>> = {
  async headers(c) {
    await c.expect('request_headers');
    c.send({
      request_headers: {
        response: {
          header_mutation: {
            set_headers: [
              { header: { key: 'x-added', raw_value: Buffer.from('yes') } },
              set('x-replace', 'new', { append_action: 'OVERWRITE_IF_EXISTS_OR_ADD' }),
              set('x-multi', 'two'),
              set('x-absent-only', 'no', { append_action: 'ADD_IF_ABSENT' }),
              set(':path', '/headers/rewritten?q=1'),
              set('host', 'evil.example'),
            ],
            remove_headers: ['x-remove'],
          },
        },
      },
    });
    await c.expect('response_headers');
    c.send({
      response_headers: {
        response: { header_mutation: { set_headers: [set('x-processed', 'response'), set(':status', '201')] } },
      },
    });
    await upperCaseBody(c, 'response_body');
  },

  async buffered(c) {
    await c.expect('request_headers');
    c.send({ request_headers: {} });
    const message = await c.expect('request_body');
    c.send({
      request_body: {
        response: {
          header_mutation: { set_headers: [set('x-body-seen', text(message.request_body.body))] },
          body_mutation: { body: Buffer.from('replaced body!') },
        },
      },
    });
  },

  // A full-duplex processor may hold everything until the body is complete: gw must keep sending.
  async 'stream-in'(c) {
    const chunks: Buffer[] = [];
    await c.expect('request_headers');
    for (;;) {
      const message = await c.expect('request_body');
      chunks.push(Buffer.from(message.request_body.body));
      if (message.request_body.end_of_stream) break;
    }
    c.send({ request_headers: {} });
    const all = Buffer.from(text(Buffer.concat(chunks)).toUpperCase());
    const half = Math.floor(all.length / 2);
    for (const [part, end] of [
      [all.subarray(0, half), false],
      [all.subarray(half), true],
    ] as const)
      c.send({
        request_body: { response: { body_mutation: { streamed_response: { body: part, end_of_stream: end } } } },
      });
  },

  async immediate(c) {
    await c.expect('request_headers');
    c.send({
      immediate_response: {
        status: { code: 403 },
        headers: { set_headers: [set('x-why', 'policy')] },
        body: Buffer.from('denied by processor'),
        details: 'test',
      },
    });
  },

  async 'response-buffered'(c) {
    await c.expect('response_headers');
    c.send({ response_headers: {} });
    const message = await c.expect('response_body');
    c.send({
      response_body: {
        response: {
          header_mutation: {
            set_headers: [set('content-type', 'application/json', { append_action: 'OVERWRITE_IF_EXISTS_OR_ADD' })],
          },
          body_mutation: { body: Buffer.from(JSON.stringify({ wrapped: text(message.response_body.body) })) },
        },
      },
    });
  },

  async fail(c) {
    await c.expect('request_headers');
    c.fail(grpc.status.INTERNAL, 'processor broke');
  },

  async 'clean-close'(c) {
    await c.expect('request_headers');
    c.end();
  },

  partial: prefixScript('request', 'PREFIX:'),

  'partial-response': prefixScript('response', 'HEAD:'),

  async override(c) {
    await c.expect('request_headers');
    c.send({ request_headers: {}, mode_override: { response_header_mode: 'SKIP', response_body_mode: 'NONE' } });
    await passThrough(c);
  },

  async dynamic(c) {
    await c.expect('request_headers');
    c.send({ request_headers: {}, dynamic_metadata: { fields: { tenant: { stringValue: 't-42' } } } });
    await passThrough(c);
  },

  async mark(c) {
    await c.expect('request_headers');
    c.send({ request_headers: { response: { header_mutation: { set_headers: [set('x-marked', 'yes')] } } } });
    await passThrough(c);
  },

  async 'response-fail'(c) {
    await c.expect('request_headers');
    c.send({ request_headers: {} });
    await c.expect('response_headers');
    c.fail(grpc.status.INTERNAL, 'processor broke on the response');
  },

  async replace(c) {
    await c.expect('request_headers');
    c.send({
      request_headers: {
        response: { status: 'CONTINUE_AND_REPLACE', body_mutation: { body: Buffer.from('replaced at headers') } },
      },
    });
    await passThrough(c);
  },

  'pass-through': passThrough,
};

/**
 * BufferedPartial on `side`: answers its headers, then the body prefix with the prefix's size and
 * end_of_stream in x-prefix and `replacement` as the new prefix.
 */
function prefixScript(side: 'request' | 'response', replacement: string): (c: Conversation) => Promise<void> {
  const headers = `${side}_headers`;
  const body = `${side}_body`;
  return async (c) => {
    await c.expect(headers);
    c.send({ [headers]: {} });
    const prefix = (await c.expect(body))[body];
    c.send({
      [body]: {
        response: {
          header_mutation: { set_headers: [set('x-prefix', `${prefix.body.length}/${prefix.end_of_stream}`)] },
          body_mutation: { body: Buffer.from(replacement) },
        },
      },
    });
  };
}

// ---------------------------------------------------------------------------------------------
// Configuration: one HTTPRoute and GwPolicy per scenario.

/** HTTPRoute `name` serving /<name> from GwBackend web, with a GwPolicy whose traffic section is `traffic` (YAML). */
function route(name: string, traffic: string): string {
  return prefixRouteYaml(name) + trafficPolicyYaml(name, name, traffic);
}

/** A route whose extProc runs `script`, with more ExtProc fields in `fields` (YAML lines). */
function scenario(name: string, endpoint: string, script: string, fields = '', more = ''): string {
  return route(
    name,
    `extProc:
  ${endpoint}
  metadataContext: {test: {scenario: '"${script}"'}}
${indentYaml(fields, 2)}
${more}`,
  );
}

const OPTIONS_RESPONSE_OFF = 'processingOptions: {responseHeaderMode: Skip, responseBodyMode: None}';
const MiB = 1024 * 1024;

describe('traffic.extProc', () => {
  let g: UpstreamGateway;
  let upstream: RecordingUpstream;
  let processor: Processor;
  let gw: TestGateway;
  let base: string;

  const send = (path: string, options: RequestOptions = {}) => httpRequest(`${base}${path}`, options);
  const conversationsOf = (script: string) =>
    processor.conversations.filter((conversation) => scenarioOf(conversation.messages[0]) === script);

  before(async () => {
    processor = await startProcessor(byScenario(scripts));
    const closedPort = await refusedPort();
    const url = `url: http://127.0.0.1:${processor.port}`;
    const closed = `url: http://127.0.0.1:${closedPort}`;
    g = await startUpstreamGateway(
      ({ port, upstreamPort }) => ({
        'gw.yaml': `${gatewayYaml(port)}${staticBackendYaml('web', upstreamPort)}${[
          scenario(
            'headers',
            url,
            'headers',
            `requestAttributes: {path: request.path, method: request.method, broken: request.nothing}
responseAttributes: {code: response.code}`,
          ),
          scenario(
            'buffered',
            url,
            'buffered',
            `processingOptions: {requestBodyMode: Buffered, responseHeaderMode: Skip, responseBodyMode: None}`,
          ),
          scenario('stream-in', url, 'stream-in', OPTIONS_RESPONSE_OFF),
          scenario('immediate', url, 'immediate'),
          scenario(
            'response-buffered',
            url,
            'response-buffered',
            'processingOptions: {requestHeaderMode: Skip, requestBodyMode: None, responseBodyMode: Buffered}',
          ),
          scenario('fail-closed', url, 'fail'),
          scenario('fail-open', url, 'fail', 'failureMode: FailOpen'),
          scenario('unreachable-closed', closed, 'pass-through'),
          scenario('unreachable-open', closed, 'pass-through', 'failureMode: FailOpen'),
          scenario('clean-close', url, 'clean-close'),
          scenario('stream-out', url, 'pass-through'),
          scenario(
            'partial-out',
            url,
            'partial-response',
            'processingOptions: {requestHeaderMode: Skip, requestBodyMode: None, responseBodyMode: BufferedPartial}',
          ),
          scenario(
            'partial',
            url,
            'partial',
            'processingOptions: {requestBodyMode: BufferedPartial, responseHeaderMode: Skip, responseBodyMode: None}',
          ),
          scenario('too-large', url, 'pass-through', `processingOptions: {requestBodyMode: Buffered}`),
          scenario('override', url, 'override', 'processingOptions: {allowModeOverride: true}'),
          scenario('override-ignored', url, 'override'),
          scenario(
            'dynamic',
            url,
            'dynamic',
            OPTIONS_RESPONSE_OFF,
            "transformation: {request: {set: [{name: x-tenant, value: 'extproc.tenant'}]}}",
          ),
          scenario('response-fail', url, 'response-fail', 'failureMode: FailOpen'),
          scenario(
            'replace',
            url,
            'replace',
            `processingOptions: {requestBodyMode: Buffered, responseHeaderMode: Skip, responseBodyMode: None}`,
          ),
          route(
            'conditional',
            `extProc:
  conditional:
    - condition: 'request.headers["x-process"] == "yes"'
      policy: {${url}, metadataContext: {test: {scenario: '"mark"'}}}`,
          ),
        ].join('')}`,
      }),
      upstreamAnswer,
    );
    ({ gw, upstream, base } = g);
    // Refusals (a policy gw cannot compile) show in the log; there must be none.
    assert.deepEqual(
      gw.logs.filter((line) => line.includes('extProc')),
      [],
    );
  });

  after(async () => {
    await g.stop();
    await processor.close();
  });

  it('mutates request headers and path, then response status, headers and the streamed body', async () => {
    const response = await send('/headers?a=b', {
      headers: { 'x-replace': 'old', 'x-multi': 'one', 'x-absent-only': 'kept', 'x-remove': 'gone' },
    });
    assert.equal(response.status, 201);
    assert.equal(response.headers['x-processed'], 'response');
    assert.equal(response.headers['x-upstream'], 'yes');
    assert.equal(response.body, 'UPSTREAM OK');
    assert.equal(response.headers['content-length'], undefined, 'a streamed body has no known length');

    const saw = upstream.latest('/headers')!;
    assert.equal(saw.url, '/headers/rewritten?q=1');
    assert.equal(saw.headers['x-added'], 'yes');
    assert.equal(saw.headers['x-replace'], 'new');
    assert.equal(saw.headers['x-multi'], 'one, two');
    assert.equal(saw.headers['x-absent-only'], 'kept');
    assert.equal(saw.headers['x-remove'], undefined);
    assert.equal(saw.headers.host, base.slice('http://'.length), 'host cannot be changed by the processor');

    const [conversation] = conversationsOf('headers');
    const [first, responseHeaders] = conversation!.messages;
    assert.equal(first.request, 'request_headers');
    assert.equal(first.request_headers.end_of_stream, true);
    assert.equal(headerOf(first.request_headers.headers, ':method'), 'GET');
    assert.equal(headerOf(first.request_headers.headers, ':path'), '/headers?a=b');
    assert.equal(headerOf(first.request_headers.headers, ':authority'), base.slice('http://'.length));
    assert.equal(headerOf(first.request_headers.headers, 'x-replace'), 'old');
    assert.equal(headerOf(first.request_headers.headers, 'host'), undefined);
    assert.deepEqual(first.protocol_config, {
      request_body_mode: 'FULL_DUPLEX_STREAMED',
      response_body_mode: 'FULL_DUPLEX_STREAMED',
      send_body_without_waiting_for_header_response: false,
    });
    assert.deepEqual(structJson(first.attributes['envoy.filters.http.ext_proc']), { path: '/headers', method: 'GET' });
    assert.equal(responseHeaders.request, 'response_headers');
    assert.equal(headerOf(responseHeaders.response_headers.headers, ':status'), '200');
    assert.equal(headerOf(responseHeaders.response_headers.headers, 'x-upstream'), 'yes');
    assert.deepEqual(structJson(responseHeaders.attributes['envoy.filters.http.ext_proc']), { code: 200 });
    assert.equal(responseHeaders.protocol_config, null, 'protocol_config goes on the first message only');
    assert.equal(scenarioOf(responseHeaders), 'headers', 'metadata_context goes on every message');
    assert.ok(await until(() => conversation!.halfClosed, 2000), 'gw half-closes the stream when the exchange is done');
  });

  it('sends a Buffered request body whole and forwards the body the processor returns', async () => {
    const response = await send('/buffered', { method: 'POST', body: 'hello world' });
    assert.equal(response.status, 200);
    const saw = upstream.latest('/buffered')!;
    assert.equal(saw.body.toString(), 'replaced body!');
    assert.equal(saw.headers['content-length'], '14');
    assert.equal(saw.headers['x-body-seen'], 'hello world');
    const [conversation] = conversationsOf('buffered');
    const body = conversation!.messages.find((message: Sent) => message.request === 'request_body');
    assert.equal(body.request_body.end_of_stream, true);
    assert.equal(conversation!.messages[0].request_headers.end_of_stream, false);
    assert.ok(await until(() => conversation!.halfClosed, 2000));
    assert.equal(conversation!.messages.length, 2, 'response modes Skip/None send nothing on the response');
  });

  it('streams a FullDuplexStreamed request body to a processor that answers only once it has all of it', async () => {
    const chunk = 'abcdefghijklmnopqrstuvwxyz'.repeat(1000);
    const parts = Array.from({ length: 8 }, () => Buffer.from(chunk));
    const response = await send('/stream-in', { method: 'POST', body: Readable.from(parts) });
    assert.equal(response.status, 200);
    const saw = upstream.latest('/stream-in')!;
    assert.equal(saw.body.toString(), chunk.toUpperCase().repeat(8));
    assert.equal(saw.headers['content-length'], String(chunk.length * 8));
    const [conversation] = conversationsOf('stream-in');
    const bodies = conversation!.messages.filter((message: Sent) => message.request === 'request_body');
    assert.ok(bodies.length >= 2, 'the body went in several messages');
    assert.equal(bodies.at(-1).request_body.end_of_stream, true);
  });

  it('answers the client with an immediate_response', async () => {
    const before = upstream.seen.length;
    const response = await send('/immediate', { method: 'POST', body: 'some body' });
    assert.equal(response.status, 403);
    assert.equal(response.headers['x-why'], 'policy');
    assert.equal(response.headers['content-type'], 'text/plain');
    assert.equal(response.body, 'denied by processor');
    assert.equal(upstream.seen.length, before, 'the upstream never sees the request');
    // The connection stays usable: the next request on the same client works.
    assert.equal((await send('/buffered', { method: 'POST', body: 'again' })).status, 200);
  });

  it('replaces a Buffered response body and its headers, with the length fixed', async () => {
    const response = await send('/response-buffered');
    assert.equal(response.status, 200);
    assert.equal(response.body, '{"wrapped":"upstream ok"}');
    assert.equal(response.headers['content-type'], 'application/json');
    assert.equal(response.headers['content-length'], '25');
    const [conversation] = conversationsOf('response-buffered');
    const [first] = conversation!.messages;
    assert.equal(first.request, 'response_headers', 'request headers skipped: the response is the first message');
    assert.equal(first.protocol_config.response_body_mode, 'BUFFERED');
  });

  it('FailClosed: a processor that fails the stream answers 500', async () => {
    const before = upstream.seen.length;
    const response = await send('/fail-closed');
    assert.equal(response.status, 500);
    assert.equal(response.body, 'external processing failed\n');
    assert.equal(upstream.seen.length, before);
  });

  it('FailOpen: the request goes on unprocessed when the processor fails before any body', async () => {
    const response = await send('/fail-open', { headers: { 'x-remove': 'still here' } });
    assert.equal(response.status, 200);
    assert.equal(response.body, 'upstream ok');
    assert.equal(upstream.latest('/fail-open')!.headers['x-remove'], 'still here');
  });

  it('an unreachable processor: FailClosed answers 500, FailOpen forwards the body untouched', async () => {
    assert.equal((await send('/unreachable-closed', { method: 'POST', body: 'payload' })).status, 500);
    const open = await send('/unreachable-open', {
      method: 'POST',
      body: Readable.from([Buffer.from('pay'), Buffer.from('load')]),
    });
    assert.equal(open.status, 200);
    assert.equal(upstream.latest('/unreachable-open')!.body.toString(), 'payload');
  });

  it('a processor that closes the stream cleanly lets the request go on unprocessed', async () => {
    const response = await send('/clean-close');
    assert.equal(response.status, 200);
    assert.equal(response.body, 'upstream ok');
  });

  it('BufferedPartial sends the first max-buffer bytes and streams the rest after the processed prefix', async () => {
    const body = Buffer.alloc(2 * MiB + 300_000);
    for (let i = 0; i < body.length; i++) body[i] = 97 + (i % 26);
    const response = await send('/partial', { method: 'POST', body });
    assert.equal(response.status, 200);
    const saw = upstream.latest('/partial')!;
    assert.equal(saw.headers['x-prefix'], `${2 * MiB}/false`);
    assert.equal(saw.body.length, 'PREFIX:'.length + 300_000);
    assert.equal(saw.body.subarray(0, 7).toString(), 'PREFIX:');
    assert.ok(saw.body.subarray(7).equals(body.subarray(2 * MiB)));
    assert.equal(saw.headers['content-length'], String(saw.body.length));
  });

  it('Buffered refuses a body over the max buffer with 413', async () => {
    const response = await send('/too-large', { method: 'POST', body: Buffer.alloc(2 * MiB + 1) });
    assert.equal(response.status, 413);
    assert.equal(response.headers.connection, 'close');
  });

  it('honours mode_override only when allowModeOverride is set', async () => {
    assert.equal((await send('/override')).body, 'upstream ok');
    const [allowed] = conversationsOf('override').filter((c) =>
      c.messages.some((m: Sent) => headerOf(m.request_headers?.headers ?? { headers: [] }, ':path') === '/override'),
    );
    assert.ok(await until(() => allowed!.halfClosed, 2000));
    assert.deepEqual(
      allowed!.messages.map((message: Sent) => message.request),
      ['request_headers'],
      'the response is not sent once the processor turned it off',
    );
    assert.equal((await send('/override-ignored')).body, 'upstream ok');
    const ignored = conversationsOf('override').find((c) =>
      c.messages.some(
        (m: Sent) => headerOf(m.request_headers?.headers ?? { headers: [] }, ':path') === '/override-ignored',
      ),
    );
    assert.ok(ignored!.messages.some((message: Sent) => message.request === 'response_headers'));
  });

  it('dynamic_metadata is CEL extproc for the policies after it', async () => {
    assert.equal((await send('/dynamic')).status, 200);
    assert.equal(upstream.latest('/dynamic')!.headers['x-tenant'], 't-42');
  });

  it('conditional: the entry whose condition holds runs; none holding skips processing', async () => {
    const before = conversationsOf('mark').length;
    assert.equal((await send('/conditional', { headers: { 'x-process': 'yes' } })).status, 200);
    assert.equal(upstream.latest('/conditional')!.headers['x-marked'], 'yes');
    assert.equal(conversationsOf('mark').length, before + 1);
    assert.equal((await send('/conditional')).status, 200);
    assert.equal(upstream.latest('/conditional')!.headers['x-marked'], undefined);
    assert.equal(conversationsOf('mark').length, before + 1);
  });

  it('a failure on the response is closed (500) even with FailOpen', async () => {
    const response = await send('/response-fail');
    assert.equal(response.status, 500);
    assert.equal(response.body, 'external processing failed\n');
    assert.ok(upstream.latest('/response-fail'), 'the request itself was forwarded');
  });

  it('CONTINUE_AND_REPLACE on the request headers replaces the body without sending it', async () => {
    const response = await send('/replace', { method: 'POST', body: 'original' });
    assert.equal(response.status, 200);
    const saw = upstream.latest('/replace')!;
    assert.equal(saw.body.toString(), 'replaced at headers');
    assert.equal(saw.headers['content-length'], '19');
    const [conversation] = conversationsOf('replace');
    assert.ok(await until(() => conversation!.halfClosed, 2000));
    assert.deepEqual(
      conversation!.messages.map((message: Sent) => message.request),
      ['request_headers'],
    );
  });

  it('streams a large response through a full-duplex processor chunk by chunk', async () => {
    const size = 5 * MiB + 123;
    const response = await send(`/stream-out?size=${size}`);
    assert.equal(response.status, 200);
    assert.equal(response.bytes.length, size);
    assert.ok(response.bytes.every((byte) => byte === 0x78));
    const conversation = conversationsOf('pass-through').find((c) =>
      c.messages.some((m: Sent) =>
        headerOf(m.request_headers?.headers ?? { headers: [] }, ':path')?.startsWith('/stream-out'),
      ),
    );
    const bodies = conversation!.messages.filter((message: Sent) => message.request === 'response_body');
    assert.ok(bodies.length > 10, 'the body went to the processor in many chunks, not buffered whole');
  });

  it('a client that leaves mid-response ends the processor stream and the upstream request', async () => {
    const response = await request(`${base}/stream-out?hang=1`);
    const reader = response.body[Symbol.asyncIterator]();
    const first = await reader.next();
    assert.equal(Buffer.from(first.value).toString(), 'first chunk');
    response.body.destroy();
    assert.ok(await until(() => hung.includes('/stream-out?hang=1'), 2000), 'the upstream request was closed');
    const conversation = conversationsOf('pass-through').find((c) =>
      c.messages.some(
        (m: Sent) => headerOf(m.request_headers?.headers ?? { headers: [] }, ':path') === '/stream-out?hang=1',
      ),
    );
    assert.ok(await until(() => conversation!.halfClosed, 2000), 'the processor stream ended');
  });

  it('BufferedPartial on the response: the processed prefix, then the rest of the body as it comes', async () => {
    const size = 2 * MiB + 5000;
    const response = await send(`/partial-out?size=${size}`);
    assert.equal(response.status, 200);
    assert.equal(response.headers['x-prefix'], `${2 * MiB}/false`);
    assert.equal(response.bytes.subarray(0, 5).toString(), 'HEAD:');
    assert.equal(response.bytes.length, 5 + 5000);
    assert.equal(response.headers['content-length'], String(5 + 5000), 'the length follows the new prefix');
  });
});
