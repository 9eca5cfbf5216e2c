// The Realtime route type through gw: OpenAI's Realtime API over WebSocket. A stand-in realtime
// server on loopback (the event protocol: session.created, response.create → deltas →
// response.done with usage) is proven by the openai package's own realtime client
// (OpenAIRealtimeWS), then reached through gw by the same client and by plain ws clients: events
// relayed both ways (text and binary), gw's key upstream instead of the client's (a key carried
// in a browser's subprotocol included), the model override, an auth policy refusing before the
// upgrade, a message over http.maxBufferSize closing the session with 1009, the provider's close
// code and its refusal of the handshake passed on, and the session's usage in the access log and
// the metrics when it closes.
import assert from 'node:assert/strict';
import { connect as netConnect } from 'node:net';
import { after, before, describe, it } from 'node:test';
import OpenAI, { AzureOpenAI } from 'openai';
import { OpenAIRealtimeWS } from 'openai/realtime/ws';
import { WebSocket } from 'ws';
import {
  aiBackendYaml,
  freePort,
  lastAccessLogLine,
  llmRouteYaml,
  loggedFailure,
  pricedGatewayYaml,
  startTestGateway,
  type TestGateway,
} from '../../helpers/gateway.ts';
import { trafficPolicyYaml } from '../../helpers/policy-yaml.ts';
import { keepaliveReadbackUnavailable, socketKeepalive } from '../../helpers/socket-keepalive.ts';
import { until } from '../../helpers/until.ts';
import { HANGING_PATH, type RealtimeMock, startRealtimeMock } from '../../support/providers/realtime-mock.ts';

const KEY = 'realtime-upstream-key-0123456789';
const CLIENT_KEY = 'client-key-abcdefghijklmnop';
const ROUTES = '{/v1/realtime: Realtime}';
const MODEL = 'gpt-realtime';
const AZURE_KEY = 'azure-realtime-key-0123456789';
const AZURE_VERSION = '2025-04-01-preview';
const DEPLOYMENT = 'gpt-realtime-deployment';

/** The openai client's URLs are wss: gw's test listener and the stand-in have no TLS, so its socket is plain TCP. */
const PLAIN_TCP = {
  createConnection: (options: { host?: string; port?: number | string }) =>
    netConnect(Number(options.port), options.host ?? '127.0.0.1'),
} as unknown as import('ws').ClientOptions;

/** A rule named `name` (for a GwPolicy's sectionName) serving GwBackend rt at /<name>. */
function namedRule(name: string): string {
  return `    - name: ${name}
      matches: [{path: {type: PathPrefix, value: /${name}}}]
      filters: [{type: URLRewrite, urlRewrite: {path: {type: ReplacePrefixMatch, replacePrefixMatch: /}}}]
      backendRefs: [{group: gw.dev, kind: GwBackend, name: rt}]
`;
}

/** One conversation turn with the realtime client: its text and the usage response.done reports. */
async function turn(rt: OpenAIRealtimeWS, text: string): Promise<{ text: string; usage: unknown }> {
  let reply = '';
  const done = new Promise<unknown>((resolve, reject) => {
    rt.on('response.output_text.delta', (event) => {
      reply += event.delta;
    });
    rt.on('response.done', (event) => resolve(event.response.usage));
    rt.on('error', reject);
  });
  rt.send({
    type: 'conversation.item.create',
    item: { type: 'message', role: 'user', content: [{ type: 'input_text', text }] },
  });
  rt.send({ type: 'response.create' });
  const usage = await done;
  return { text: reply, usage };
}

function opened(rt: OpenAIRealtimeWS): Promise<{ model: string }> {
  return new Promise((resolve, reject) => {
    rt.on('session.created', (event) => resolve({ model: String((event.session as { model?: string }).model) }));
    rt.socket.once('error', reject);
  });
}

function closedWith(ws: WebSocket): Promise<{ code: number; reason: string }> {
  return new Promise((resolve) => ws.once('close', (code, reason) => resolve({ code, reason: reason.toString() })));
}

function openSocket(url: string, options: import('ws').ClientOptions = {}, protocols?: string[]): Promise<WebSocket> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url, protocols, options);
    ws.once('open', () => resolve(ws));
    ws.once('error', reject);
  });
}

/** What gw answered instead of a WebSocket: its status, body and request id (for an answer of gw's own 5xx). */
function refusal(
  url: string,
  headers: Record<string, string> = {},
): Promise<{ status: number; body: string; requestId: string }> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url, { headers });
    ws.once('open', () => reject(new Error('the upgrade was accepted')));
    ws.once('error', () => {});
    ws.once('unexpected-response', (_request, response) => {
      let body = '';
      response.on('data', (chunk: Buffer) => {
        body += chunk.toString();
      });
      response.on('end', () =>
        resolve({ status: response.statusCode ?? 0, body, requestId: String(response.headers['x-request-id'] ?? '') }),
      );
    });
  });
}

describe('Realtime route type', () => {
  let upstream: RealtimeMock;
  let azure: RealtimeMock;
  let gw: TestGateway;
  let port: number;
  const url = (rulePath: string, model = MODEL) => `ws://127.0.0.1:${port}/${rulePath}/v1/realtime?model=${model}`;
  const client = (rulePath: string) =>
    new OpenAI({ apiKey: 'client-token', baseURL: `http://127.0.0.1:${port}/${rulePath}/v1` });

  before(async () => {
    upstream = await startRealtimeMock(KEY);
    azure = await startRealtimeMock(AZURE_KEY, {
      paths: ['/openai/realtime', '/openai/v1/realtime'],
      keyHeader: 'api-key',
    });
    port = await freePort();
    gw = await startTestGateway({
      'gateway.yaml': [
        // The session's cost (USD per million tokens) by the Gateway's model catalog.
        pricedGatewayYaml(port, {
          catalog: {
            providers: { openai: { models: { [MODEL]: { rates: { input: '4', output: '16', cache_read: '0.4' } } } } },
          },
        }),
        `apiVersion: gw.dev/v1alpha1
kind: GwPolicy
metadata: {name: small-messages}
spec:
  targetRefs: [{group: gateway.networking.k8s.io, kind: Gateway, name: ai}]
  frontend: {http: {maxBufferSize: 64Ki}}
---
apiVersion: v1
kind: Secret
metadata: {name: client-keys}
stringData: {app: ${CLIENT_KEY}}
---
`,
        aiBackendYaml('rt', upstream.port, 'alpha: {}', KEY, ROUTES),
        aiBackendYaml('pinned', upstream.port, 'alpha: {model: gpt-realtime-pinned}', KEY, ROUTES),
        `apiVersion: gw.dev/v1alpha1
kind: GwBackend
metadata: {name: kept}
spec:
  ai: {provider: {host: 127.0.0.1, port: ${upstream.port}, alpha: {}}}
  policies:
    auth: {key: ${KEY}}
    tcp: {keepalive: {time: 7s, interval: 3s, retries: 4}}
    ai: {routes: ${ROUTES}}
---
apiVersion: gw.dev/v1alpha1
kind: GwBackend
metadata: {name: hanging}
spec:
  ai: {provider: {host: 127.0.0.1, port: ${upstream.port}, custom: {formats: [{type: Realtime, path: ${HANGING_PATH}}]}}}
  policies:
    auth: {key: ${KEY}}
    http: {requestTimeout: 300ms}
    ai: {routes: ${ROUTES}}
---
`,
        aiBackendYaml(
          'custom',
          upstream.port,
          'custom: {formats: [{type: Realtime, path: /v1/realtime}]}',
          KEY,
          ROUTES,
        ),
        aiBackendYaml('wrongkey', upstream.port, 'alpha: {}', 'not-the-key', ROUTES),
        aiBackendYaml(
          'azdated',
          azure.port,
          `betaalpha: {endpoint: my-resource.openai.azure.com, deploymentName: ${DEPLOYMENT}, apiVersion: "${AZURE_VERSION}"}`,
          AZURE_KEY,
          '{/openai/realtime: Realtime}',
        ),
        aiBackendYaml(
          'azv1',
          azure.port,
          `betaalpha: {endpoint: my-resource.openai.azure.com, deploymentName: ${DEPLOYMENT}}`,
          AZURE_KEY,
          '{/openai/v1/realtime: Realtime}',
        ),
        trafficPolicyYaml(
          'buffered',
          { kind: 'HTTPRoute', name: 'llm', sectionName: 'buffered' },
          { buffer: { response: {} } },
        ),
        trafficPolicyYaml(
          'limited',
          { kind: 'HTTPRoute', name: 'llm', sectionName: 'limited' },
          { rateLimit: { local: [{ requests: 1, unit: 'Minutes' }] } },
        ),
        trafficPolicyYaml(
          'keyed',
          { kind: 'HTTPRoute', name: 'llm', sectionName: 'keyed' },
          { apiKeyAuthentication: { secretRef: { name: 'client-keys' } } },
        ),
        // Rules the policies name (keyed, limited) need a name, the others serve /<backend>.
        llmRouteYaml(
          ['rt', 'pinned', 'kept', 'hanging', 'custom', 'wrongkey', 'azdated', 'azv1'],
          namedRule('keyed') +
            namedRule('limited') +
            namedRule('buffered') +
            `    - matches: [{path: {type: PathPrefix, value: /headered}}]
      filters:
        - {type: URLRewrite, urlRewrite: {path: {type: ReplacePrefixMatch, replacePrefixMatch: /}}}
        - {type: ResponseHeaderModifier, responseHeaderModifier: {add: [{name: x-route-note, value: realtime}], remove: [x-nothing]}}
      backendRefs: [{group: gw.dev, kind: GwBackend, name: rt}]
`,
        ),
      ].join(''),
    });
  });

  after(async () => {
    await gw?.stop();
    await upstream?.close();
    await azure?.close();
  });

  it('the stand-in speaks the Realtime event protocol as the openai realtime client expects it', async () => {
    const rt = new OpenAIRealtimeWS(
      { model: MODEL, options: PLAIN_TCP },
      new OpenAI({ apiKey: KEY, baseURL: `http://127.0.0.1:${upstream.port}/v1` }),
    );
    assert.equal((await opened(rt)).model, MODEL);
    const { text, usage } = await turn(rt, 'hello stand-in');
    assert.equal(text, 'echo: hello stand-in');
    assert.deepEqual((usage as { input_tokens: number }).input_tokens, upstream.usage.input_tokens);
    rt.close();
    const refused = new OpenAIRealtimeWS(
      { model: MODEL, options: PLAIN_TCP },
      new OpenAI({ apiKey: 'wrong', baseURL: `http://127.0.0.1:${upstream.port}/v1` }),
    );
    refused.on('error', () => {});
    await assert.rejects(opened(refused), /401/);
  });

  it('relays a session both ways with gw key upstream, and logs its usage when it closes', async () => {
    const before = upstream.handshakes.length;
    const rt = new OpenAIRealtimeWS({ model: MODEL, options: PLAIN_TCP }, client('rt'));
    assert.equal((await opened(rt)).model, MODEL);
    const first = await turn(rt, 'hello through gw');
    assert.equal(first.text, 'echo: hello through gw');
    assert.equal((first.usage as { output_tokens: number }).output_tokens, upstream.usage.output_tokens);
    const second = await turn(rt, 'and again');
    assert.equal(second.text, 'echo: and again');
    const handshake = upstream.handshakes[before]!;
    assert.equal(upstream.handshakes.length, before + 1);
    assert.equal(handshake.path, '/v1/realtime');
    assert.equal(handshake.query.get('model'), MODEL);
    assert.equal(handshake.headers.authorization, `Bearer ${KEY}`, "gw's key, not the client's");
    assert.equal(handshake.headers['x-forwarded-for'], '127.0.0.1');
    assert.deepEqual(
      upstream.events.at(-1)!.map((event) => event.type),
      ['conversation.item.create', 'response.create', 'conversation.item.create', 'response.create'],
    );
    rt.close();

    const line = await lastAccessLogLine(gw, '/rt/v1/realtime');
    assert.equal(line['http.response.status_code'], 101);
    assert.equal(line.error, undefined);
    assert.equal(line['gen_ai.request.model'], MODEL);
    assert.equal(line['gen_ai.response.model'], MODEL);
    assert.equal(line['gen_ai.provider.name'], 'openai');
    // Two responses, each reporting the stand-in's usage: the session's is their sum.
    assert.equal(line['gen_ai.usage.input_tokens'], 2 * upstream.usage.input_tokens);
    assert.equal(line['gen_ai.usage.output_tokens'], 2 * upstream.usage.output_tokens);
    assert.equal(line['gen_ai.usage.cache_read.input_tokens'], 2 * upstream.usage.cached_tokens);
    // Priced once the session closes: (24 - 8 cached) × 4 + 8 × 0.4 + 10 × 16, per million tokens.
    assert.deepEqual(
      [upstream.usage.input_tokens, upstream.usage.cached_tokens, upstream.usage.output_tokens],
      [12, 4, 5],
    );
    assert.equal(line['gw.ai.usage.cost.total'], 0.0002272);
    assert.ok((line.duration_ms as number) > 0);
    assert.equal(typeof line['gw.ai.time_to_first_token'], 'number', 'the first output delta was seen');
    const metrics = gw.gateway.dataPlane.telemetry.metrics.render();
    assert.match(metrics, /gen_ai_client_token_usage_sum\{[^}]*gen_ai_token_type="output"[^}]*\} [1-9]/);
  });

  it("never sends the client's key upstream, a browser's key subprotocol included, and relays binary messages", async () => {
    const before = upstream.handshakes.length;
    const ws = await openSocket(url('rt'), { headers: { authorization: 'Bearer client-secret' } }, [
      'realtime',
      'openai-insecure-api-key.client-secret',
    ]);
    assert.equal(ws.protocol, 'realtime', 'the protocol the provider chose');
    const handshake = upstream.handshakes[before]!;
    assert.equal(handshake.headers.authorization, `Bearer ${KEY}`);
    assert.equal(handshake.headers['sec-websocket-protocol'], 'realtime');
    assert.doesNotMatch(JSON.stringify(handshake.headers), /client-secret/);
    const payload = Buffer.from([0, 1, 2, 250, 251, 252, 253, 254, 255]);
    const echoed = new Promise<{ data: Buffer; binary: boolean }>((resolve) =>
      ws.on('message', (data, binary) => {
        if (binary) resolve({ data: data as Buffer, binary });
      }),
    );
    ws.send(payload);
    const echo = await echoed;
    assert.equal(echo.binary, true);
    assert.deepEqual(echo.data, payload);
    ws.close();
  });

  it("holds the session's provider connection to the backend policy's tcp.keepalive", async (t) => {
    const unavailable = keepaliveReadbackUnavailable();
    const ws = await openSocket(url('kept'));
    try {
      if (unavailable) return void t.diagnostic(`keepalive not read back: ${unavailable}`);
      assert.deepEqual(await socketKeepalive(upstream.handshakes.at(-1)!.clientPort, upstream.port), {
        enabled: true,
        idleSeconds: 7,
        intervalSeconds: 3,
        probes: 4,
      });
    } finally {
      ws.close();
    }
  });

  it("applies the provider's model override, and serves a custom provider listing the Realtime format", async () => {
    let ws = await openSocket(url('pinned'));
    assert.equal(upstream.handshakes.at(-1)!.query.get('model'), 'gpt-realtime-pinned');
    ws.close();
    ws = await openSocket(url('custom'));
    assert.equal(upstream.handshakes.at(-1)!.headers.authorization, `Bearer ${KEY}`);
    ws.close();
  });

  it('refuses a client without the key before the upgrade, with an HTTP error; with the key the session opens', async () => {
    const before = upstream.handshakes.length;
    const refused = await refusal(url('keyed'));
    assert.equal(refused.status, 401);
    assert.match((JSON.parse(refused.body) as { error: { message: string } }).error.message, /./);
    assert.equal(upstream.handshakes.length, before, 'nothing went upstream');
    const ws = await openSocket(url('keyed'), { headers: { authorization: `Bearer ${CLIENT_KEY}` } });
    assert.equal(upstream.handshakes.at(-1)!.headers.authorization, `Bearer ${KEY}`);
    ws.close();
  });

  it('refuses a session over the rate limit before the upgrade (429), the open one unaffected', async () => {
    const ws = await openSocket(url('limited'));
    const before = upstream.handshakes.length;
    const refused = await refusal(url('limited'));
    assert.equal(refused.status, 429);
    assert.equal((JSON.parse(refused.body) as { error: { code: string } }).error.code, 'rate_limit_exceeded');
    assert.equal(upstream.handshakes.length, before);
    const echoed = new Promise<Buffer>((resolve) =>
      ws.on('message', (data, binary) => binary && resolve(data as Buffer)),
    );
    ws.send(Buffer.from('still open'));
    assert.equal((await echoed).toString(), 'still open');
    ws.close();
  });

  it('refuses a session on a route whose policy works on response bodies (buffer.response), nothing upstream', async () => {
    const before = upstream.handshakes.length;
    const refused = await refusal(url('buffered'));
    assert.equal(refused.status, 501);
    assert.equal(upstream.handshakes.length, before);
    assert.match(await loggedFailure(gw, refused.requestId), /works on response bodies/);
  });

  it("puts the route's response header changes on the 101 answer, the handshake's own fields intact", async () => {
    const ws = new WebSocket(url('headered'), ['realtime']);
    const open = new Promise((resolve) => ws.once('open', resolve));
    const response = await new Promise<import('node:http').IncomingMessage>((resolve, reject) => {
      ws.once('upgrade', resolve);
      ws.once('error', reject);
    });
    assert.equal(response.headers['x-route-note'], 'realtime');
    assert.equal(response.headers.upgrade, 'websocket');
    assert.equal(response.headers['sec-websocket-protocol'], 'realtime');
    await open;
    ws.close();
  });

  it('closes the session with 1009 when a message is larger than http.maxBufferSize, upstream too', async () => {
    const ws = await openSocket(url('rt'));
    const session = upstream.events.length - 1;
    const closed = closedWith(ws);
    ws.send(JSON.stringify({ type: 'input_audio_buffer.append', audio: 'A'.repeat(100 * 1024) }));
    assert.equal((await closed).code, 1009);
    assert.ok(await until(() => upstream.closes[session] !== undefined, 2000));
    assert.equal(upstream.closes[session], 1009);
    const line = await lastAccessLogLine(gw, '/rt/v1/realtime');
    assert.match(String(line.error), /client: .*Max payload size exceeded/);
  });

  it("bounds the provider's opening handshake by the request deadline (requestTimeout): 504", async () => {
    const started = performance.now();
    const refused = await refusal(url('hanging'));
    assert.equal(refused.status, 504);
    assert.match(refused.body, /did not answer in time/);
    assert.ok(performance.now() - started < 5000, 'not the 10 s connect timeout');
  });

  it('stops reading from the provider while the client does not read (backpressure), and loses nothing', async () => {
    const ws = await openSocket(url('rt'));
    const size = 60 * 1024;
    const count = 1024; // 60 MiB: far more than the kernel's socket buffers and gw's 1 MiB queue
    let received = 0;
    let bytes = 0;
    const all = new Promise<void>((resolve) =>
      ws.on('message', (data, binary) => {
        if (!binary) return;
        received++;
        bytes += (data as Buffer).length;
        if (received === count) resolve();
      }),
    );
    const floods = upstream.flooded.length;
    ws.pause();
    // Long enough for the whole flood to cross loopback twice were nothing holding it back.
    ws.send(JSON.stringify({ type: 'test.flood', size, count, sampleAfterMs: 3000 }));
    assert.ok(await until(() => upstream.flooded.length > floods, 8000));
    // gw stopped reading once its queue towards the client was full: most of the flood is still
    // queued at the provider (without backpressure gw would have read it all into its memory).
    assert.ok(upstream.flooded.at(-1)! > 20 * 1024 * 1024, `queued at the provider: ${upstream.flooded.at(-1)}`);
    ws.resume();
    await all;
    assert.equal(bytes, size * count);
    ws.close();
  });

  it("passes the provider's close code and reason on to the client", async () => {
    const ws = await openSocket(url('rt'));
    const closed = closedWith(ws);
    ws.send(JSON.stringify({ type: 'test.close', code: 4001, reason: 'bye now' }));
    assert.deepEqual(await closed, { code: 4001, reason: 'bye now' });
  });

  it("passes the provider's refusal of the handshake on, and refuses a plain GET on a Realtime path", async () => {
    const refused = await refusal(url('wrongkey'));
    assert.equal(refused.status, 401);
    assert.match(refused.body, /Incorrect API key provided/);

    const plain = await fetch(`http://127.0.0.1:${port}/rt/v1/realtime?model=${MODEL}`);
    assert.equal(plain.status, 400);
    const body = (await plain.json()) as { error: { message: string } };
    assert.match(body.error.message, /served as a WebSocket session only/);
  });
  it('opens Azure OpenAI sessions (betaalpha): the AzureOpenAI realtime client, dated and v1 paths, gw key in api-key', async () => {
    // The stand-in first, as the AzureOpenAI client reaches it.
    const direct = await OpenAIRealtimeWS.azure(
      new AzureOpenAI({ apiKey: AZURE_KEY, endpoint: `http://127.0.0.1:${azure.port}`, apiVersion: AZURE_VERSION }),
      { deploymentName: DEPLOYMENT, options: PLAIN_TCP },
    );
    assert.equal((await opened(direct)).model, DEPLOYMENT);
    direct.close();

    const rt = await OpenAIRealtimeWS.azure(
      new AzureOpenAI({
        apiKey: 'client-azure-key',
        endpoint: `http://127.0.0.1:${port}/azdated`,
        apiVersion: '2024-10-01-preview',
      }),
      { deploymentName: 'the-clients-deployment', options: PLAIN_TCP },
    );
    assert.equal((await opened(rt)).model, DEPLOYMENT, "the provider's deployment, not the client's");
    assert.equal((await turn(rt, 'hello azure')).text, 'echo: hello azure');
    let handshake = azure.handshakes.at(-1)!;
    assert.equal(handshake.path, '/openai/realtime');
    assert.equal(handshake.query.get('api-version'), AZURE_VERSION);
    assert.equal(handshake.query.get('deployment'), DEPLOYMENT);
    assert.equal(handshake.headers['api-key'], AZURE_KEY, "gw's key, not the client's");
    rt.close();

    // A browser's client puts its key in the query: it does not go upstream either.
    const ws = await openSocket(`ws://127.0.0.1:${port}/azv1/openai/v1/realtime?model=x&api-key=client-azure-key`);
    handshake = azure.handshakes.at(-1)!;
    assert.equal(handshake.path, '/openai/v1/realtime');
    assert.equal(handshake.query.get('model'), DEPLOYMENT);
    assert.equal(handshake.query.get('api-key'), null);
    assert.equal(handshake.headers['api-key'], AZURE_KEY);
    ws.close();
  });
});
