// The request head gw's HTTP/1.1 upstream client writes: request line, Host, the caller's fields
// in order, the client's own framing, and nothing that could split into a second request.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { InvalidUpstreamRequestError, requestHead } from '../../../src/dataplane/upstream/http1/request-head.ts';

const isInvalidRequest = (error: unknown) =>
  error instanceof InvalidUpstreamRequestError && error.code === 'UPSTREAM_INVALID_REQUEST';

/** The head's lines, without the empty line that ends it. */
function lines(head: string): string[] {
  assert.ok(head.endsWith('\r\n\r\n'), 'the head ends with CRLF CRLF');
  return head.slice(0, -4).split('\r\n');
}

describe('requestHead', () => {
  it('writes the request line and the default Host first', () => {
    assert.equal(
      requestHead('GET', '/v1/models?limit=5', 'api.example.com', {}, undefined),
      'GET /v1/models?limit=5 HTTP/1.1\r\nhost: api.example.com\r\n\r\n',
    );
  });

  it("takes the caller's own host header instead of the default, once", () => {
    assert.deepEqual(
      lines(requestHead('GET', '/', 'default.test:8080', { host: 'caller.test', accept: '*/*' }, undefined)),
      ['GET / HTTP/1.1', 'host: caller.test', 'accept: */*'],
    );
  });

  it("writes the caller's fields in order, an array as repeated lines", () => {
    assert.deepEqual(
      lines(
        requestHead(
          'POST',
          '/v1/chat/completions',
          'h',
          {
            authorization: 'Bearer sk-1',
            'x-multi': ['one', 'two', 'three'],
            'content-type': 'application/json',
            'x-empty': '',
          },
          42,
        ),
      ),
      [
        'POST /v1/chat/completions HTTP/1.1',
        'host: h',
        'authorization: Bearer sk-1',
        'x-multi: one',
        'x-multi: two',
        'x-multi: three',
        'content-type: application/json',
        'x-empty: ',
        'content-length: 42',
      ],
    );
  });

  it('sets Content-Length from bodyLength, also for a GET with a body', () => {
    assert.deepEqual(lines(requestHead('GET', '/', 'h', {}, 7)), ['GET / HTTP/1.1', 'host: h', 'content-length: 7']);
    assert.deepEqual(lines(requestHead('POST', '/', 'h', {}, 0)), ['POST / HTTP/1.1', 'host: h', 'content-length: 0']);
  });

  it('sends content-length: 0 for POST, PUT and PATCH without a body, and none for other methods', () => {
    for (const method of ['POST', 'PUT', 'PATCH'])
      assert.deepEqual(lines(requestHead(method, '/', 'h', {}, undefined)), [
        `${method} / HTTP/1.1`,
        'host: h',
        'content-length: 0',
      ]);
    for (const method of ['GET', 'HEAD', 'DELETE', 'OPTIONS'])
      assert.deepEqual(lines(requestHead(method, '/', 'h', {}, undefined)), [`${method} / HTTP/1.1`, 'host: h']);
  });

  it('drops the framing and hop-by-hop fields the caller gives: the client frames the request itself', () => {
    const head = requestHead(
      'POST',
      '/',
      'h',
      {
        'content-length': '999',
        'transfer-encoding': 'chunked',
        connection: 'keep-alive, x-secret',
        'keep-alive': 'timeout=5',
        upgrade: 'websocket',
        te: 'trailers',
        trailer: 'x-checksum',
        expect: '100-continue',
        'proxy-connection': 'keep-alive',
        'http2-settings': 'AAMAAABkAARAAAAAAAIAAAAA',
        'x-kept': 'yes',
      },
      5,
    );
    assert.deepEqual(lines(head), ['POST / HTTP/1.1', 'host: h', 'x-kept: yes', 'content-length: 5']);
  });

  it('drops framing fields whatever the case of their names (field names are case-insensitive)', () => {
    const head = requestHead(
      'POST',
      '/',
      'default.test',
      { Host: 'caller.test', 'Content-Length': '999', 'Transfer-Encoding': 'chunked', Connection: 'close' },
      5,
    );
    assert.deepEqual(lines(head), ['POST / HTTP/1.1', 'host: caller.test', 'content-length: 5']);
  });

  it('writes obs-text (Latin-1) values as one byte per character, and tabs inside values', () => {
    const head = requestHead('GET', '/caf\xe9', 'h', { 'x-name': 'Jos\xe9\tM.' }, undefined);
    assert.equal(Buffer.byteLength(head, 'latin1'), head.length);
    assert.deepEqual(lines(head), ['GET /caf\xe9 HTTP/1.1', 'host: h', 'x-name: Jos\xe9\tM.']);
  });

  it('rejects CR or LF in a value: no header injection, no second request', () => {
    for (const value of [
      'a\r\nX-Injected: 1',
      'a\nX-Injected: 1',
      'a\rb',
      'x\r\n\r\nGET /admin HTTP/1.1\r\nhost: internal',
    ]) {
      assert.throws(() => requestHead('GET', '/', 'h', { 'x-user': value }, undefined), isInvalidRequest);
      assert.throws(() => requestHead('GET', '/', 'h', { 'x-list': ['ok', value] }, undefined), isInvalidRequest);
      assert.throws(() => requestHead('GET', '/', 'h', { host: value }, undefined), isInvalidRequest);
    }
  });

  it('rejects other control characters and characters beyond Latin-1 in a value', () => {
    for (const value of ['a\x00b', 'a\x1bb', 'a\x7fb', 'euro \u20ac', 'emoji \u{1f600}'])
      assert.throws(() => requestHead('GET', '/', 'h', { 'x-value': value }, undefined), isInvalidRequest);
  });

  it('rejects an invalid header name', () => {
    for (const name of ['', 'x name', 'x:name', 'x\r\ny', 'x(y)', 'caf\xe9', 'x\ty'])
      assert.throws(
        () => requestHead('GET', '/', 'h', { [name]: 'v' }, undefined),
        isInvalidRequest,
        JSON.stringify(name),
      );
  });

  it('rejects an invalid method', () => {
    for (const method of ['', 'GET /', 'GET\r\n', 'G(T', 'P\xd3ST', 'GET\x00'])
      assert.throws(() => requestHead(method, '/', 'h', {}, undefined), isInvalidRequest, JSON.stringify(method));
  });

  it('rejects a request target that is empty or has a space or control character (DEL included)', () => {
    for (const target of [
      '',
      '/a b',
      '/a\tb',
      '/a\r\nX-Injected: 1',
      '/a\nb',
      '/\x00',
      '/\x1f',
      '/a\x7fb',
      '/\u0100',
      ' /',
    ])
      assert.throws(() => requestHead('GET', target, 'h', {}, undefined), isInvalidRequest, JSON.stringify(target));
  });
});
