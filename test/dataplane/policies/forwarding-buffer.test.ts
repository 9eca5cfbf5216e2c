// traffic.buffer end to end: request bodies read whole (413 over the limit with FailClosed, sent
// on unbuffered with FailOpen), the listener's maxBufferSize as the default limit, response bodies
// read whole (502 over the limit with FailClosed, streamed with FailOpen); and bufferOrStream, which
// gives back a body over its limit untouched.
import assert from 'node:assert/strict';
import { Readable } from 'node:stream';
import { after, before, describe, it } from 'node:test';
import { bufferOrStream } from '../../../src/dataplane/policies/forwarding/buffer-or-stream.ts';
import { GATEWAY_AI, gwPolicyYaml } from '../../helpers/policy-yaml.ts';
import { until } from '../../helpers/until.ts';
import type { UpstreamGateway } from '../../helpers/upstream-gateway.ts';
import { chunked, chunkedBytes, startForwardingGateway } from './forwarding-setup.ts';

describe('traffic.buffer.request', () => {
  let g: UpstreamGateway;
  before(async () => {
    g = await startForwardingGateway(
      [
        { name: 'closed', traffic: 'buffer: {request: {maxBytes: 1Ki}}' },
        { name: 'open', traffic: 'buffer: {request: {maxBytes: 1Ki, failureMode: FailOpen}}' },
        { name: 'default', traffic: 'buffer: {request: {}}' },
        { name: 'plain' },
      ],
      // The listener's buffer limit: the default of BufferBody.maxBytes.
      gwPolicyYaml('small-buffers', GATEWAY_AI, 'frontend', '{http: {maxBufferSize: 2Ki}}'),
    );
  });
  after(() => g.stop());

  it('sends a chunked body within the limit upstream in one piece, with its length', async () => {
    const reply = await g.send('POST', '/closed/a', { body: chunked(4, 200) });
    assert.equal(reply.status, 200);
    const seen = g.upstream.seen.at(-1)!;
    assert.deepEqual(seen.body, chunkedBytes(4, 200));
    assert.equal(seen.headers['content-length'], '800');
    assert.equal(seen.headers['transfer-encoding'], undefined);
  });

  it('answers 413 and closes the connection for a body over maxBytes (FailClosed), never reaching the backend', async () => {
    const before = g.upstream.seen.length;
    const declared = await g.send('POST', '/closed/b', { body: Buffer.alloc(1025, 'a') });
    assert.equal(declared.status, 413);
    assert.equal(declared.headers.connection, 'close');
    assert.match(
      declared.body,
      /larger than the 1024-byte buffer limit \(traffic\.buffer\.request\.maxBytes raises it\)/,
    );
    const streamed = await g.send('POST', '/closed/c', { body: chunked(3, 500) });
    assert.equal(streamed.status, 413);
    assert.equal(g.upstream.seen.length, before);
  });

  it('passes a body over maxBytes on unbuffered and whole with FailOpen, declared or chunked', async () => {
    const declared = Buffer.alloc(5000, 'd');
    assert.equal((await g.send('POST', '/open/a', { body: declared })).status, 200);
    assert.deepEqual(g.upstream.seen.at(-1)!.body, declared);
    assert.equal(g.upstream.seen.at(-1)!.headers['content-length'], '5000');
    // Read past the limit before gw knew it was too large: the bytes read are sent on too.
    assert.equal((await g.send('POST', '/open/b', { body: chunked(40, 100) })).status, 200);
    const seen = g.upstream.seen.at(-1)!;
    assert.deepEqual(seen.body, chunkedBytes(40, 100));
    assert.equal(seen.headers['transfer-encoding'], 'chunked');
    // Within the limit it is buffered like FailClosed.
    assert.equal((await g.send('POST', '/open/c', { body: chunked(2, 100) })).status, 200);
    assert.equal(g.upstream.seen.at(-1)!.headers['content-length'], '200');
  });

  it("takes the listener's maxBufferSize when maxBytes is unset", async () => {
    assert.equal((await g.send('POST', '/default/a', { body: Buffer.alloc(2048, 'a') })).status, 200);
    const over = await g.send('POST', '/default/b', { body: Buffer.alloc(2049, 'a') });
    assert.equal(over.status, 413);
    // Without maxBytes the limit is the listener's, and the answer says so.
    assert.match(over.body, /2048-byte buffer limit \(the listener's Frontend http\.maxBufferSize raises it\)/);
  });

  it('leaves bodiless requests and routes without the policy alone', async () => {
    assert.equal((await g.send('GET', '/closed/get')).status, 200);
    assert.equal(g.upstream.seen.at(-1)!.body.length, 0);
    assert.equal((await g.send('POST', '/plain/a', { body: chunked(30, 100) })).status, 200);
    assert.equal(g.upstream.seen.at(-1)!.headers['transfer-encoding'], 'chunked');
    assert.deepEqual(g.upstream.seen.at(-1)!.body, chunkedBytes(30, 100));
  });
});

describe('traffic.buffer.response', () => {
  let g: UpstreamGateway;
  before(async () => {
    g = await startForwardingGateway([
      { name: 'closed', traffic: 'buffer: {response: {maxBytes: 1Ki}}' },
      { name: 'open', traffic: 'buffer: {response: {maxBytes: 1Ki, failureMode: FailOpen}}' },
    ]);
    // ?size=N answers N bytes in 100-byte chunks (no Content-Length); ?length=1 declares it.
    g.upstream.answer((req, res) => {
      const url = new URL(req.url ?? '/', 'http://x');
      const size = Number(url.searchParams.get('size') ?? 0);
      const headers: Record<string, string> = { 'content-type': 'text/plain', 'x-backend': 'yes' };
      if (url.searchParams.has('length')) headers['content-length'] = String(size);
      res.writeHead(200, headers);
      let sent = 0;
      const more = () => {
        if (sent >= size) return void res.end();
        const n = Math.min(100, size - sent);
        sent += n;
        res.write('r'.repeat(n));
        setImmediate(more);
      };
      more();
    });
  });
  after(() => g.stop());

  it('reads a response within maxBytes whole and sends it with its length', async () => {
    const reply = await g.send('GET', '/closed/a?size=1024');
    assert.equal(reply.status, 200);
    assert.equal(reply.body, 'r'.repeat(1024));
    assert.equal(reply.headers['content-length'], '1024');
    assert.equal(reply.headers['x-backend'], 'yes');
  });

  it('answers 502 for a response over maxBytes (FailClosed), none of it sent', async () => {
    const streamed = await g.send('GET', '/closed/b?size=1025');
    assert.equal(streamed.status, 502);
    assert.match(streamed.body, /larger than the 1024-byte buffer limit/);
    assert.equal(streamed.headers['x-backend'], undefined);
    assert.equal((await g.send('GET', '/closed/c?size=5000&length=1')).status, 502);
    assert.ok(
      await until(() => g.gw.accessLog.some((line) => /larger than the 1024-byte buffer limit/.test(line)), 2000),
      'the access log says why',
    );
  });

  it('streams a response over maxBytes as it is with FailOpen', async () => {
    const streamed = await g.send('GET', '/open/a?size=5000');
    assert.equal(streamed.status, 200);
    assert.equal(streamed.body, 'r'.repeat(5000));
    assert.equal(streamed.headers['content-length'], undefined);
    const declared = await g.send('GET', '/open/b?size=3000&length=1');
    assert.equal(declared.body, 'r'.repeat(3000));
    assert.equal((await g.send('GET', '/open/c?size=10')).headers['content-length'], '10');
  });
});

describe('bufferOrStream', () => {
  it('gives the whole stream when it fits', async () => {
    const stream = Readable.from([Buffer.from('abc'), Buffer.from('def')], { objectMode: false });
    assert.deepEqual(await bufferOrStream(stream, 6), Buffer.from('abcdef'));
  });

  it('gives back a stream over the limit with every byte still to read', async () => {
    const parts = Array.from({ length: 10 }, (_, i) => Buffer.alloc(100, 97 + i));
    const stream = Readable.from(parts, { objectMode: false });
    assert.equal(await bufferOrStream(stream, 250), undefined);
    const rest: Buffer[] = [];
    for await (const chunk of stream) rest.push(chunk as Buffer);
    assert.deepEqual(Buffer.concat(rest), Buffer.concat(parts));
  });

  it('does not read a stream whose declared length is over the limit', async () => {
    const stream = Readable.from([Buffer.from('abcdef')], { objectMode: false });
    assert.equal(await bufferOrStream(stream, 3, '6'), undefined);
    const rest: Buffer[] = [];
    for await (const chunk of stream) rest.push(chunk as Buffer);
    assert.equal(Buffer.concat(rest).toString(), 'abcdef');
  });

  it('rejects when the stream fails', async () => {
    const stream = new Readable({
      read() {
        this.destroy(new Error('broken'));
      },
    });
    await assert.rejects(bufferOrStream(stream, 10), /broken/);
  });
});

describe('response bodies a transformation changes', () => {
  let g: UpstreamGateway;
  before(async () => {
    g = await startForwardingGateway([
      { name: 'shout', traffic: `transformation: {response: {body: 'string(response.body) + "!"'}}` },
      {
        name: 'small',
        traffic: `transformation: {response: {body: 'string(response.body) + "!"'}}\nbuffer: {response: {maxBytes: 8}}`,
      },
    ]);
  });
  after(() => g.stop());

  it('gives the Transform the whole backend response through the forwarder', async () => {
    const reply = await g.send('GET', '/shout/a');
    assert.equal(reply.status, 200);
    assert.equal(reply.body, 'ok /shout/a!');
    assert.equal(reply.headers['content-length'], String('ok /shout/a!'.length));
  });

  it('answers 502 when the body is over the smaller of the two limits', async () => {
    assert.equal((await g.send('GET', '/small/a')).status, 502);
  });
});
