// The Passthrough route type's answers: whatever a provider answers on a Passthrough path goes
// back to the client as it came — binary bodies, another vendor's stream with its own content
// type, error statuses — unread (gw does not take it for the backend family's JSON), and a body
// cut off midway resets the client's response instead of completing it.
import assert from 'node:assert/strict';
import { createServer, request as httpRequest, type Server } from 'node:http';
import { after, before, describe, it } from 'node:test';
import {
  aiBackendYaml,
  freePort,
  gatewayYaml,
  lastAccessLogLine,
  llmRouteYaml,
  startTestGateway,
  type TestGateway,
} from '../../helpers/gateway.ts';
import { closeServer, listen, readBody } from '../../helpers/http-server.ts';

/** Bytes no JSON or SSE reader takes: a frame-like binary prelude, a NUL and invalid UTF-8. */
const BINARY = Buffer.from([0, 0, 0, 42, 0, 0, 0, 16, 0xff, 0xfe, 0x00, 0x80, 0x7b, 0x22, 0x0a, 0x0a]);

describe('Passthrough answers are passed back unread', () => {
  let upstream: Server;
  let gw: TestGateway;
  let base: string;
  const seen: { path: string; authorization: string | undefined; body: string }[] = [];

  before(async () => {
    upstream = createServer(async (req, res) => {
      seen.push({ path: req.url ?? '', authorization: req.headers.authorization, body: await readBody(req) });
      if (req.url === '/binary') {
        res.writeHead(200, { 'content-type': 'application/vnd.amazon.eventstream', 'x-amzn-requestid': 'r-1' });
        // In pieces, as a stream arrives.
        res.write(BINARY.subarray(0, 5));
        setTimeout(() => res.end(BINARY.subarray(5)), 5);
      } else if (req.url === '/error') {
        res.writeHead(418, { 'content-type': 'text/plain', 'x-amzn-errortype': 'TeapotException' });
        res.end('not JSON either');
      } else if (req.url === '/cut') {
        res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': '1000' });
        res.write(BINARY);
        setTimeout(() => res.destroy(), 5);
      }
    });
    const upstreamPort = await listen(upstream);
    const port = await freePort();
    base = `http://127.0.0.1:${port}/pass`;
    gw = await startTestGateway({
      'gateway.yaml': [
        gatewayYaml(port),
        aiBackendYaml('pass', upstreamPort, 'alpha: {}', 'sk-upstream', "{'*': Passthrough}"),
        llmRouteYaml(['pass']),
      ].join(''),
    });
  });

  after(async () => {
    await gw?.stop();
    await closeServer(upstream);
  });

  it('a binary body with its own content type: the same bytes and headers, not a 502 for "not JSON"', async () => {
    const response = await fetch(`${base}/binary`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: 'Bearer client' },
      body: '{"anything": true}',
    });
    assert.equal(response.status, 200);
    assert.equal(response.headers.get('content-type'), 'application/vnd.amazon.eventstream');
    assert.equal(response.headers.get('x-amzn-requestid'), 'r-1');
    assert.deepEqual(Buffer.from(await response.arrayBuffer()), BINARY);
    assert.deepEqual(seen.at(-1), { path: '/binary', authorization: 'Bearer sk-upstream', body: '{"anything": true}' });
    const log = await lastAccessLogLine(gw, '/pass/binary');
    assert.equal(log['http.response.status_code'], 200);
    assert.equal(log['gen_ai.usage.input_tokens'], undefined, 'a Passthrough answer is not metered');
  });

  it("an error status passes as it is: the provider's body and headers, not rewritten", async () => {
    const response = await fetch(`${base}/error`, { method: 'POST', body: 'x' });
    assert.equal(response.status, 418);
    assert.equal(response.headers.get('x-amzn-errortype'), 'TeapotException');
    assert.equal(await response.text(), 'not JSON either');
  });

  it('a body cut off midway resets the client instead of ending as if complete', async () => {
    const outcome = await new Promise<string>((resolve) => {
      const req = httpRequest(`${base}/cut`, { method: 'POST' }, (res) => {
        let bytes = 0;
        res.on('data', (chunk: Buffer) => {
          bytes += chunk.length;
        });
        res.on('end', () => resolve(`ended after ${bytes} bytes`));
        res.on('error', () => resolve('reset'));
        res.on('aborted', () => resolve('reset'));
      });
      req.on('error', () => resolve('reset'));
      req.end('x');
    });
    assert.equal(outcome, 'reset');
  });
});
