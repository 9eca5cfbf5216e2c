// BackendTLS.alpnProtocols on plain HTTP routes: gw offers the configured list in its order, less
// the protocols the connection cannot speak (http/1.1; h2 too with http.version HTTP2) — the
// default h2, http/1.1 offers only http/1.1 on an HTTP/1.1 connection, so a backend cannot pick a
// protocol gw would then fail on — and a list with none of them is refused, naming the field.
import assert from 'node:assert/strict';
import { createSecureServer, type Http2SecureServer } from 'node:http2';
import { after, before, describe, it } from 'node:test';
import { gatewayYaml, ownFailureDetail } from '../../helpers/gateway.ts';
import { listen } from '../../helpers/http-server.ts';
import { testCaConfigMapYaml, tlsFixture } from '../../helpers/https-get.ts';
import { prefixRouteYaml, staticBackendYaml } from '../../helpers/policy-yaml.ts';
import { startUpstreamGateway, type UpstreamGateway } from '../../helpers/upstream-gateway.ts';

describe('backend tls.alpnProtocols on an HTTP route', () => {
  let server: Http2SecureServer;
  const offered: string[][] = [];
  let g: UpstreamGateway;

  before(async () => {
    // Speaks h2 and HTTP/1.1, picks the first protocol offered, records the offer, answers with the protocol used.
    server = createSecureServer(
      {
        key: tlsFixture('backend.key'),
        cert: tlsFixture('backend.crt'),
        allowHTTP1: true,
        ALPNCallback: ({ protocols }) => {
          offered.push(protocols);
          return protocols[0];
        },
      },
      (req, res) => res.end(`over ${req.httpVersion === '2.0' ? 'h2' : 'http/1.1'}`),
    );
    const port = await listen(server as never);
    const backend = (name: string, tlsFields: string, more = '') =>
      staticBackendYaml(name, port, `{tls: {caCertificateRefs: [{name: test-ca}], ${tlsFields}}${more}}`) +
      prefixRouteYaml(name, { backend: name });
    g = await startUpstreamGateway(({ port: gwPort }) => ({
      'gw.yaml': `${gatewayYaml(gwPort)}${testCaConfigMapYaml()}${backend('defaulted', 'sni: backend.example.test')}${backend('mixed', 'alpnProtocols: [x-gw-test, http/1.1]')}${backend('unspoken', 'alpnProtocols: [x-gw-test]')}${backend('h2-only', 'alpnProtocols: [h2]', ', http: {version: HTTP2}')}`,
    }));
  });

  after(async () => {
    await g?.stop();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  it('the default list (h2, http/1.1) offers only http/1.1 on an HTTP/1.1 connection', async () => {
    const reply = await g.send('GET', '/defaulted/x');
    assert.equal(reply.status, 200, reply.body);
    assert.equal(reply.body, 'over http/1.1');
    assert.deepEqual(offered.at(-1), ['http/1.1']);
  });

  it('a protocol the connection cannot speak is not offered', async () => {
    const reply = await g.send('GET', '/mixed/x');
    assert.equal(reply.status, 200, reply.body);
    assert.deepEqual(offered.at(-1), ['http/1.1']);
  });

  it('a list of only protocols the connection cannot speak is refused, naming the field', async () => {
    const count = offered.length;
    const reply = await g.send('GET', '/unspoken/x');
    assert.equal(reply.status, 500);
    assert.match(
      await ownFailureDetail(g.gw, reply),
      /tls\.alpnProtocols: offers none of the protocols this connection speaks/,
    );
    assert.equal(offered.length, count, 'no connection was made');
  });

  it('with http.version HTTP2, the configured list is offered as it is (h2 alone, not undici’s own)', async () => {
    const reply = await g.send('GET', '/h2-only/x');
    assert.equal(reply.status, 200, reply.body);
    assert.equal(reply.body, 'over h2');
    assert.deepEqual(offered.at(-1), ['h2']);
  });
});
