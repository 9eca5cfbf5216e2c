// Frontend.proxyProtocol: the PROXY header's client becomes the request's source (access log,
// CEL source.address); Strict refuses connections without one, Optional serves them; the
// versions not accepted are refused; on HTTPS ports the header comes before TLS.
import assert from 'node:assert/strict';
import { connect as netConnect } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { connect as tlsConnect } from 'node:tls';
import { parseProxyHeader } from '../../../src/dataplane/server/proxy-protocol.ts';
import { until } from '../../helpers/until.ts';
import {
  accessEntries,
  bodyOf,
  CA,
  type Echo,
  type FrontendGateway,
  getRequest,
  proxyV1,
  proxyV2,
  proxyV2Local,
  rawExchange,
  startFrontendGateway,
  statusOf,
} from './helpers.ts';

const BOTH = { v1: true, v2: true };

describe('PROXY header parsing', () => {
  it('reads v1 TCP4, TCP6 and UNKNOWN lines', () => {
    const tcp4 = parseProxyHeader(Buffer.from(`${proxyV1('192.0.2.7', 5000)}GET /`), BOTH);
    assert.deepEqual(tcp4, {
      kind: 'header',
      length: proxyV1('192.0.2.7', 5000).length,
      source: { address: '192.0.2.7', port: 5000 },
    });
    const tcp6 = parseProxyHeader(Buffer.from('PROXY TCP6 2001:DB8:0:0::1 ::1 65535 443\r\n'), BOTH);
    assert.equal(tcp6.kind, 'header');
    assert.deepEqual(tcp6.kind === 'header' && tcp6.source, { address: '2001:db8::1', port: 65535 });
    const unknown = parseProxyHeader(Buffer.from('PROXY UNKNOWN whatever\r\n'), BOTH);
    assert.deepEqual(unknown, { kind: 'header', length: 24, source: undefined });
  });

  it('reads v2 PROXY (IPv4, with TLVs after the addresses) and LOCAL headers', () => {
    const tlv = Buffer.from([0x04, 0x00, 0x02, 0xab, 0xcd]);
    const header = proxyV2('198.51.100.9', 40000, tlv);
    const parsed = parseProxyHeader(Buffer.concat([header, Buffer.from('GET / HTTP/1.1\r\n')]), BOTH);
    assert.deepEqual(parsed, {
      kind: 'header',
      length: header.length,
      source: { address: '198.51.100.9', port: 40000 },
    });
    assert.deepEqual(parseProxyHeader(proxyV2Local(), BOTH), { kind: 'header', length: 16, source: undefined });
  });

  it('waits for the rest of a header, and says when a connection has none', () => {
    assert.equal(parseProxyHeader(Buffer.from('PROX'), BOTH).kind, 'incomplete');
    assert.equal(parseProxyHeader(Buffer.from('PROXY TCP4 1.2.3.4 '), BOTH).kind, 'incomplete');
    assert.equal(parseProxyHeader(proxyV2('10.0.0.1', 1).subarray(0, 20), BOTH).kind, 'incomplete');
    assert.equal(parseProxyHeader(Buffer.from('GET / HTTP/1.1\r\n'), BOTH).kind, 'absent');
    assert.equal(parseProxyHeader(Buffer.from('PUT'), BOTH).kind, 'absent');
  });

  it('refuses malformed headers and versions not accepted', () => {
    for (const line of [
      'PROXY TCP4 1.2.3 127.0.0.1 1 2\r\n',
      'PROXY TCP4 1.2.3.4 127.0.0.1 70000 2\r\n',
      'PROXY TCP4 ::1 127.0.0.1 1 2\r\n',
      'PROXY UDP4 1.2.3.4 127.0.0.1 1 2\r\n',
      `PROXY TCP4 ${'1'.repeat(120)}`,
    ])
      assert.equal(parseProxyHeader(Buffer.from(line), BOTH).kind, 'invalid', line);
    assert.equal(parseProxyHeader(Buffer.from(proxyV1('1.2.3.4', 1)), { v1: false, v2: true }).kind, 'invalid');
    assert.equal(parseProxyHeader(proxyV2('1.2.3.4', 1), { v1: true, v2: false }).kind, 'invalid');
  });
});

describe('Frontend.proxyProtocol', () => {
  let gateway: FrontendGateway;

  before(async () => {
    gateway = await startFrontendGateway('{proxyProtocol: {}}');
  });

  after(async () => {
    await gateway?.stop();
  });

  it('defaults to Strict V2: the header’s client is the request’s source; a connection without it is closed', async () => {
    const answer = await rawExchange(
      gateway.httpPort,
      Buffer.concat([proxyV2('203.0.113.5', 41000), Buffer.from(getRequest('/p'))]),
    );
    assert.equal(statusOf(answer.data), 200, answer.data);
    assert.equal(bodyOf<Echo>(answer.data).url, '/p');
    assert.equal(bodyOf<Echo>(answer.data).headers['x-forwarded-for'], '203.0.113.5', 'the upstream learns the client');
    assert.ok(await until(() => accessEntries(gateway.gw).some((entry) => entry['url.path'] === '/p'), 2000));
    const entry = accessEntries(gateway.gw).find((line) => line['url.path'] === '/p')!;
    assert.deepEqual([entry['client.address'], entry['client.port']], ['203.0.113.5', 41000]);

    const without = await rawExchange(gateway.httpPort, getRequest('/none'));
    assert.deepEqual(without, { data: '', closed: true });
    const v1 = await rawExchange(gateway.httpPort, proxyV1('203.0.113.5', 1) + getRequest());
    assert.deepEqual(v1, { data: '', closed: true });
  });

  it('keeps the connection’s own address for a LOCAL header', async () => {
    const answer = await rawExchange(
      gateway.httpPort,
      Buffer.concat([proxyV2Local(), Buffer.from(getRequest('/local'))]),
    );
    assert.equal(statusOf(answer.data), 200, answer.data);
    assert.ok(await until(() => accessEntries(gateway.gw).some((entry) => entry['url.path'] === '/local'), 2000));
    const entry = accessEntries(gateway.gw).find((line) => line['url.path'] === '/local')!;
    assert.equal(entry['client.address'], '127.0.0.1');
    assert.equal(typeof entry['client.port'], 'number');
  });

  it('reads the header before TLS on an HTTPS port, and serves keep-alive requests after it', async () => {
    const body = await new Promise<string>((resolve, reject) => {
      const raw = netConnect(gateway.httpsPort, '127.0.0.1', () => {
        raw.write(proxyV2('198.51.100.20', 1234));
        const secure = tlsConnect({ socket: raw, servername: 'a.example.test', ca: CA }, () => {
          secure.write(
            `${getRequest('/tls').replace('connection: close', 'connection: keep-alive')}${getRequest('/tls2')}`,
          );
        });
        const chunks: Buffer[] = [];
        secure.on('data', (chunk: Buffer) => chunks.push(chunk));
        secure.on('end', () => resolve(Buffer.concat(chunks).toString()));
        secure.on('error', reject);
      });
    });
    assert.equal(body.match(/HTTP\/1\.1 200/g)?.length, 2, body);
    assert.ok(await until(() => accessEntries(gateway.gw).some((entry) => entry['url.path'] === '/tls2'), 2000));
    for (const path of ['/tls', '/tls2']) {
      const entry = accessEntries(gateway.gw).find((line) => line['url.path'] === path)!;
      assert.deepEqual([entry['client.address'], entry['client.port']], ['198.51.100.20', 1234]);
    }
  });

  it('with All and Optional: accepts v1 and v2, and serves connections without a header', async () => {
    await gateway.reconfigure('{proxyProtocol: {version: All, mode: Optional}}', async () => {
      const answer = await rawExchange(gateway.httpPort, getRequest('/probe'));
      return statusOf(answer.data) === 200;
    });
    const v1 = await rawExchange(gateway.httpPort, proxyV1('2001:db8::7', 999) + getRequest('/v1'));
    assert.equal(statusOf(v1.data), 200, v1.data);
    const v2 = await rawExchange(
      gateway.httpPort,
      Buffer.concat([proxyV2('192.0.2.99', 7), Buffer.from(getRequest('/v2'))]),
    );
    assert.equal(statusOf(v2.data), 200, v2.data);
    assert.ok(await until(() => accessEntries(gateway.gw).some((entry) => entry['url.path'] === '/v2'), 2000));
    const address = (path: string) => {
      const line = accessEntries(gateway.gw).find((entry) => entry['url.path'] === path)!;
      return [line['client.address'], line['client.port']];
    };
    assert.deepEqual(address('/v1'), ['2001:db8::7', 999]);
    assert.deepEqual(address('/v2'), ['192.0.2.99', 7]);
    assert.equal(address('/probe')[0], '127.0.0.1');
    const malformed = await rawExchange(gateway.httpPort, `PROXY TCP4 nonsense\r\n${getRequest()}`);
    assert.deepEqual(malformed, { data: '', closed: true });
  });
});
