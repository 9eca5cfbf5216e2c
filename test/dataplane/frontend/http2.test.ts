// HTTP/2 downstream: HTTPS listeners negotiate h2 (ALPN, falling back to HTTP/1.1), HTTP listeners
// take h2c with prior knowledge; requests go through the same routing and telemetry (Host from
// :authority, bodies without content-length), and Frontend.http's http2* fields set the
// connection's SETTINGS, window, PINGs and header limit; tls.alpnProtocols limits what is offered.
import assert from 'node:assert/strict';
import { type ClientHttp2Session, connect, type IncomingHttpHeaders } from 'node:http2';
import { request as httpsRequest } from 'node:https';
import { after, before, describe, it } from 'node:test';
import { Agent, request } from 'undici';
import { until } from '../../helpers/until.ts';
import type { MockServer } from '../../support/providers/mock-server.ts';
import { startOpenAiMock } from '../../support/providers/openai-mock.ts';
import { accessEntries, CA, type Echo, type FrontendGateway, startFrontendGateway } from './helpers.ts';

interface Answer {
  status: number;
  headers: IncomingHttpHeaders;
  body: string;
}

/** One request on an HTTP/2 session. */
function h2Request(
  session: ClientHttp2Session,
  headers: Record<string, string>,
  body?: string | string[],
): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const stream = session.request(headers, { endStream: body === undefined });
    let status = 0;
    let responseHeaders: IncomingHttpHeaders = {};
    const chunks: Buffer[] = [];
    stream.on('response', (received) => {
      status = Number(received[':status']);
      responseHeaders = received;
    });
    stream.on('data', (chunk: Buffer) => chunks.push(chunk));
    stream.on('end', () => resolve({ status, headers: responseHeaders, body: Buffer.concat(chunks).toString() }));
    stream.on('error', reject);
    if (body !== undefined) {
      // Several DATA frames and no content-length: the length is unknown until the stream ends.
      for (const part of Array.isArray(body) ? body : [body]) stream.write(part);
      stream.end();
    }
  });
}

function h2Session(url: string): Promise<ClientHttp2Session> {
  return new Promise((resolve, reject) => {
    const session = connect(url, { ca: CA, servername: 'a.example.test' });
    session.once('connect', () => resolve(session));
    session.once('error', reject);
  });
}

describe('HTTP/2 downstream', () => {
  let gateway: FrontendGateway;

  before(async () => {
    gateway = await startFrontendGateway('');
  });

  after(async () => {
    await gateway?.stop();
  });

  it('HTTPS listeners speak HTTP/2 (ALPN h2), routing by :authority', async () => {
    const session = await h2Session(`https://127.0.0.1:${gateway.httpsPort}`);
    try {
      assert.equal((session.socket as unknown as { alpnProtocol: string }).alpnProtocol, 'h2');
      const answer = await h2Request(session, {
        ':path': '/h2?x=1',
        ':authority': 'api.example.test',
        'x-custom': 'yes',
      });
      assert.equal(answer.status, 200, answer.body);
      const echo = JSON.parse(answer.body) as Echo;
      assert.equal(echo.url, '/h2?x=1');
      assert.equal(echo.headers.host, 'api.example.test');
      assert.equal(echo.headers['x-custom'], 'yes');
      assert.equal(echo.headers['x-forwarded-proto'], 'https');
      assert.ok(!Object.keys(echo.headers).some((name) => name.startsWith(':')), JSON.stringify(echo.headers));
      assert.ok(await until(() => accessEntries(gateway.gw).some((entry) => entry['url.path'] === '/h2'), 2000));
      const entry = accessEntries(gateway.gw).find((line) => line['url.path'] === '/h2')!;
      assert.equal(entry['network.protocol.version'], '2');
      assert.equal(entry['server.address'], 'api.example.test');
      assert.equal(entry['http.response.status_code'], 200);
    } finally {
      session.close();
    }
  });

  it('forwards a request body sent without content-length', async () => {
    const session = await h2Session(`https://127.0.0.1:${gateway.httpsPort}`);
    try {
      const answer = await h2Request(session, { ':method': 'POST', ':path': '/upload' }, ['first,', 'second']);
      assert.equal(answer.status, 200, answer.body);
      const echo = JSON.parse(answer.body) as Echo;
      assert.equal(echo.method, 'POST');
      assert.equal(echo.body, 'first,second');
    } finally {
      session.close();
    }
  });

  it('serves undici with allowH2 over HTTPS and HTTP/1.1 clients on the same port', async () => {
    const agent = new Agent({ allowH2: true, connect: { ca: CA, servername: 'a.example.test' } });
    try {
      const response = await request(`https://127.0.0.1:${gateway.httpsPort}/undici`, { dispatcher: agent });
      assert.equal(response.statusCode, 200);
      assert.equal((JSON.parse(await response.body.text()) as Echo).url, '/undici');
      assert.ok(await until(() => accessEntries(gateway.gw).some((entry) => entry['url.path'] === '/undici'), 2000));
      const entry = accessEntries(gateway.gw).find((line) => line['url.path'] === '/undici')!;
      assert.equal(entry['network.protocol.version'], '2');
    } finally {
      await agent.close();
    }
    const http1 = await new Promise<number>((resolve, reject) => {
      const req = httpsRequest(
        { host: '127.0.0.1', port: gateway.httpsPort, path: '/h1', ca: CA, servername: 'a.example.test', agent: false },
        (res) => {
          res.resume();
          resolve(res.statusCode ?? 0);
        },
      );
      req.on('error', reject);
      req.end();
    });
    assert.equal(http1, 200);
  });

  it('HTTP listeners take h2c with prior knowledge', async () => {
    const session = await h2Session(`http://127.0.0.1:${gateway.httpPort}`);
    try {
      const answer = await h2Request(session, { ':path': '/h2c' });
      assert.equal(answer.status, 200, answer.body);
      assert.equal((JSON.parse(answer.body) as Echo).headers['x-forwarded-proto'], 'http');
    } finally {
      session.close();
    }
  });

  it('applies the http2* settings: SETTINGS, connection window, PINGs, header list limit', async () => {
    await gateway.reconfigure(
      '{http: {http2WindowSize: 1Mi, http2ConnectionWindowSize: 4Mi, http2FrameSize: 32Ki, http2MaxHeaderSize: 8Ki, http2KeepaliveInterval: 50ms, http2KeepaliveTimeout: 1s}}',
      async () => {
        const session = await h2Session(`https://127.0.0.1:${gateway.httpsPort}`);
        await new Promise((resolve) => setTimeout(resolve, 20));
        const ready = session.remoteSettings.maxFrameSize === 32_768;
        session.close();
        return ready;
      },
    );
    for (const url of [`https://127.0.0.1:${gateway.httpsPort}`, `http://127.0.0.1:${gateway.httpPort}`]) {
      const session = await h2Session(url);
      let pings = 0;
      session.on('ping', () => pings++);
      try {
        await h2Request(session, { ':path': '/settings' });
        assert.equal(session.remoteSettings.initialWindowSize, 1024 * 1024, url);
        assert.equal(session.remoteSettings.maxFrameSize, 32 * 1024, url);
        assert.equal(session.remoteSettings.maxHeaderListSize, 8 * 1024, url);
        assert.equal(session.state.remoteWindowSize, 4 * 1024 * 1024, url);
        assert.ok(await until(() => pings >= 2, 2000), `${url}: ${pings} pings`);
        const fine = await h2Request(session, { ':path': '/small', 'x-large': 'x'.repeat(7000) });
        assert.equal(fine.status, 200);
      } finally {
        session.close();
      }
      // node's client holds itself to the advertised limit once it has the SETTINGS: a request sent
      // before they arrive shows what gw does with a client that does not.
      const eager = connect(url, { ca: CA, servername: 'a.example.test' });
      try {
        const tooLarge = await h2Request(eager, { ':path': '/big', 'x-large': 'x'.repeat(9000) });
        assert.equal(tooLarge.status, 431, url);
      } finally {
        eager.close();
      }
    }
  });

  it('offers only the ALPN protocols of tls.alpnProtocols', async () => {
    await gateway.reconfigure('{tls: {alpnProtocols: [http/1.1]}}', async () => {
      try {
        (await h2Session(`https://127.0.0.1:${gateway.httpsPort}`)).close();
        return false;
      } catch {
        return true;
      }
    });
    await assert.rejects(h2Session(`https://127.0.0.1:${gateway.httpsPort}`), /no application protocol|ERR_SSL|alert/i);
    const agent = new Agent({ allowH2: true, connect: { ca: CA, servername: 'a.example.test' } });
    try {
      const response = await request(`https://127.0.0.1:${gateway.httpsPort}/alpn`, { dispatcher: agent });
      assert.equal(response.statusCode, 200);
      await response.body.text();
      assert.ok(await until(() => accessEntries(gateway.gw).some((entry) => entry['url.path'] === '/alpn'), 2000));
      const entry = accessEntries(gateway.gw).find((line) => line['url.path'] === '/alpn')!;
      assert.equal(entry['network.protocol.version'], '1.1');
    } finally {
      await agent.close();
    }
  });
});

describe('HTTP/2 downstream to an AI backend', () => {
  let gateway: FrontendGateway;
  let provider: MockServer;

  before(async () => {
    provider = await startOpenAiMock();
    gateway = await startFrontendGateway(
      '',
      `apiVersion: gw.dev/v1alpha1
kind: GwBackend
metadata: {name: llm}
spec:
  ai: {provider: {host: 127.0.0.1, port: ${provider.port}, alpha: {}}}
  policies: {auth: {key: sk-test}}
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: llm}
spec:
  parentRefs: [{name: ai}]
  rules: [{matches: [{path: {type: PathPrefix, value: /v1}}], backendRefs: [{group: gw.dev, kind: GwBackend, name: llm}]}]
---
`,
    );
  });

  after(async () => {
    await gateway?.stop();
    await provider?.close();
  });

  it('streams a chat completion to an HTTP/2 client that sent its body without content-length', async () => {
    const session = await h2Session(`https://127.0.0.1:${gateway.httpsPort}`);
    try {
      const body = JSON.stringify({
        model: 'gpt-4o-mini',
        stream: true,
        messages: [{ role: 'user', content: 'hello over h2' }],
      });
      const answer = await h2Request(
        session,
        { ':method': 'POST', ':path': '/v1/chat/completions', 'content-type': 'application/json' },
        [body.slice(0, 20), body.slice(20)],
      );
      assert.equal(answer.status, 200, answer.body);
      assert.match(String(answer.headers['content-type']), /text\/event-stream/);
      assert.match(answer.body, /^data: /m);
      assert.match(answer.body, /data: \[DONE\]/);
    } finally {
      session.close();
    }
    assert.ok(
      await until(() => accessEntries(gateway.gw).some((entry) => entry['gen_ai.request.model'] !== undefined), 2000),
    );
    const entry = accessEntries(gateway.gw).find((line) => line['gen_ai.request.model'] !== undefined)!;
    assert.equal(entry['network.protocol.version'], '2');
    assert.equal(entry['gw.ai.streaming'], true);
  });
});
