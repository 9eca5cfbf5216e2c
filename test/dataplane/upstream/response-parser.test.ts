// The HTTP/1.1 response parser of gw's upstream client: every response is fed whole, one byte at a
// time and (for some) split at every position, and must read the same way however it arrives.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  MAX_HEAD_BYTES,
  type ResponseHead,
  ResponseParser,
  ResponseProtocolError,
} from '../../../src/dataplane/upstream/http1/response-parser.ts';

type Event = { head: ResponseHead } | { body: string } | { complete: boolean };

/** What a parser reported, adjacent body pieces joined (their boundaries depend on the chunks). */
interface Recorded {
  events: Event[];
  /** Every piece of body as reported, for checking the parser hands out only body bytes. */
  pieces: number;
}

interface Feed {
  noBody?: boolean;
  /** Signal the end of the connection after the last chunk. */
  finish?: boolean;
}

function parse(chunks: Buffer[], feed: Feed = {}): Recorded {
  const events: Event[] = [];
  let pieces = 0;
  const parser = new ResponseParser({
    onHead: (head) => events.push({ head }),
    onBody: (bytes) => {
      // The bytes are views into the chunk given to execute(): copied out at once.
      pieces++;
      const text = bytes.toString('latin1');
      const last = events.at(-1);
      if (last !== undefined && 'body' in last) last.body += text;
      else events.push({ body: text });
    },
    onComplete: (reusable) => events.push({ complete: reusable }),
  });
  parser.expect(feed.noBody ?? false);
  for (const chunk of chunks) parser.execute(chunk);
  if (feed.finish) parser.finish();
  return { events, pieces };
}

const bytesOf = (input: string | Buffer) => (typeof input === 'string' ? Buffer.from(input, 'latin1') : input);
const whole = (input: Buffer) => [input];
const byteByByte = (input: Buffer) => [...input].map((byte) => Buffer.from([byte]));
/** The input in pieces of `size` bytes. */
const slices = (input: Buffer, size: number) => {
  const out: Buffer[] = [];
  for (let at = 0; at < input.length; at += size) out.push(input.subarray(at, at + size));
  return out;
};

/** Parses `input` whole and one byte at a time; both must report `expected`. */
function assertParses(input: string | Buffer, expected: Event[], feed: Feed = {}): void {
  const bytes = bytesOf(input);
  assert.deepEqual(parse(whole(bytes), feed).events, expected, 'fed whole');
  assert.deepEqual(parse(byteByByte(bytes), feed).events, expected, 'fed one byte at a time');
}

/** Parses `input` split in two at every position; each must report what the whole input does. */
function assertEverySplitParsesAlike(input: string, feed: Feed = {}): void {
  const bytes = bytesOf(input);
  const expected = parse(whole(bytes), feed).events;
  for (let at = 1; at < bytes.length; at++)
    assert.deepEqual(parse([bytes.subarray(0, at), bytes.subarray(at)], feed).events, expected, `split at byte ${at}`);
}

const isProtocolError = (error: unknown) =>
  error instanceof ResponseProtocolError && error.code === 'UPSTREAM_PROTOCOL_ERROR';

/** `input` is a protocol error whether it arrives whole or one byte at a time. */
function assertRejected(input: string | Buffer, feed: Feed = {}): void {
  const bytes = bytesOf(input);
  assert.throws(() => parse(whole(bytes), feed), isProtocolError, 'fed whole');
  assert.throws(() => parse(byteByByte(bytes), feed), isProtocolError, 'fed one byte at a time');
}

const head = (status: number, headers: ResponseHead['headers'] = {}): Event => ({ head: { status, headers } });

describe('ResponseParser: bodies', () => {
  it('reads a Content-Length body and keeps an HTTP/1.1 connection', () => {
    assertParses('HTTP/1.1 200 OK\r\nContent-Length: 11\r\nContent-Type: text/plain\r\n\r\nhello world', [
      head(200, { 'content-length': '11', 'content-type': 'text/plain' }),
      { body: 'hello world' },
      { complete: true },
    ]);
  });

  it('completes a Content-Length: 0 response without body bytes', () => {
    assertParses('HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n', [
      head(200, { 'content-length': '0' }),
      { complete: true },
    ]);
  });

  it('accepts repeated Content-Length values that agree', () => {
    assertParses('HTTP/1.1 200 OK\r\nContent-Length: 3\r\nContent-Length: 3, 3\r\n\r\nabc', [
      head(200, { 'content-length': ['3', '3, 3'] }),
      { body: 'abc' },
      { complete: true },
    ]);
  });

  it('keeps binary body bytes as they are', () => {
    const body = Buffer.from(Array.from({ length: 256 }, (_, index) => index));
    const input = Buffer.concat([Buffer.from('HTTP/1.1 200 OK\r\nContent-Length: 256\r\n\r\n'), body]);
    assertParses(input, [
      head(200, { 'content-length': '256' }),
      { body: body.toString('latin1') },
      { complete: true },
    ]);
  });

  it('reads a chunked body with chunk extensions, upper-case hex, leading zeros and trailers', () => {
    const input =
      'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n' +
      '5;name=value;flag\r\nhello\r\n' +
      '1 ; ext="quoted"\r\n \r\n' +
      '00A\r\n0123456789\r\n' +
      '0;last\r\nTrailer-One: 1\r\nTrailer-Two: two\r\n\r\n';
    assertParses(input, [
      head(200, { 'transfer-encoding': 'chunked' }),
      { body: 'hello 0123456789' },
      { complete: true },
    ]);
  });

  it('reads a chunked body without trailers, and chunked after other codings', () => {
    assertParses('HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip, chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n', [
      head(200, { 'transfer-encoding': 'gzip, chunked' }),
      { body: 'abc' },
      { complete: true },
    ]);
  });

  it('reads any split of a chunked response with trailers the same way', () => {
    assertEverySplitParsesAlike(
      'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nX-A: 1\r\n\r\n4;e=1\r\nwiki\r\n5\r\npedia\r\n0\r\nExpires: never\r\n\r\n',
    );
  });

  it('reads any split of interim responses followed by a Content-Length body the same way', () => {
    assertEverySplitParsesAlike(
      'HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 103 Early Hints\r\nLink: </s.css>\r\n\r\nHTTP/1.1 201 Created\r\nContent-Length: 4\r\n\r\ndone',
    );
  });

  it('reads a body without length until the connection closes, and never reuses that connection', () => {
    assertParses(
      'HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n\r\nall of this, until the end',
      [head(200, { 'content-type': 'text/plain' }), { body: 'all of this, until the end' }, { complete: false }],
      { finish: true },
    );
    // Nothing is complete before the end of input.
    const open = parse([Buffer.from('HTTP/1.1 200 OK\r\n\r\nsome')]);
    assert.deepEqual(open.events, [head(200), { body: 'some' }]);
  });

  it('reads a body whose only coding is not chunked until close', () => {
    assertParses(
      'HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip\r\n\r\nzipped',
      [head(200, { 'transfer-encoding': 'gzip' }), { body: 'zipped' }, { complete: false }],
      { finish: true },
    );
  });

  it('reads no body for a HEAD request, whatever the framing headers say', () => {
    assertParses(
      'HTTP/1.1 200 OK\r\nContent-Length: 1234\r\n\r\n',
      [head(200, { 'content-length': '1234' }), { complete: true }],
      { noBody: true },
    );
    assertParses(
      'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n',
      [head(200, { 'transfer-encoding': 'chunked' }), { complete: true }],
      { noBody: true },
    );
  });

  it('reads no body for 204 and 304', () => {
    assertParses('HTTP/1.1 204 No Content\r\n\r\n', [head(204), { complete: true }]);
    assertParses('HTTP/1.1 304 Not Modified\r\nContent-Length: 50\r\nETag: "x"\r\n\r\n', [
      head(304, { 'content-length': '50', etag: '"x"' }),
      { complete: true },
    ]);
  });

  it('skips 100 Continue and 103 Early Hints: only the final response is reported', () => {
    assertParses(
      'HTTP/1.1 100 Continue\r\n\r\n' +
        'HTTP/1.1 103 Early Hints\r\nLink: </style.css>; rel=preload\r\n\r\n' +
        'HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok',
      [head(200, { 'content-length': '2' }), { body: 'ok' }, { complete: true }],
    );
  });

  it('reads a second response after expect() is called again', () => {
    const events: Event[] = [];
    const parser = new ResponseParser({
      onHead: (h) => events.push({ head: h }),
      onBody: (bytes) => events.push({ body: bytes.toString('latin1') }),
      onComplete: (reusable) => events.push({ complete: reusable }),
    });
    parser.expect(false);
    assert.equal(parser.busy, true);
    parser.execute(Buffer.from('HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nab\r\n0\r\n\r\n'));
    assert.equal(parser.busy, false);
    parser.expect(true);
    parser.execute(Buffer.from('HTTP/1.1 200 OK\r\nContent-Length: 9\r\n\r\n'));
    parser.expect(false);
    parser.execute(Buffer.from('HTTP/1.1 404 Not Found\r\nContent-Length: 1\r\n\r\nx'));
    assert.deepEqual(events, [
      head(200, { 'transfer-encoding': 'chunked' }),
      { body: 'ab' },
      { complete: true },
      head(200, { 'content-length': '9' }),
      { complete: true },
      head(404, { 'content-length': '1' }),
      { body: 'x' },
      { complete: true },
    ]);
  });

  it('stays busy through a body that runs until close, and completes it at the end of input', () => {
    const parser = new ResponseParser({ onHead() {}, onBody() {}, onComplete() {} });
    parser.expect(false);
    parser.execute(Buffer.from('HTTP/1.0 200 OK\r\n\r\nabc'));
    assert.equal(parser.busy, true);
    parser.finish();
    assert.equal(parser.busy, false);
  });

  it('hands on only body bytes, never a copy of the whole chunk with the head in it', () => {
    const recorded = parse([Buffer.from('HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\nabc')]);
    assert.equal(recorded.pieces, 1);
    assert.deepEqual(recorded.events[1], { body: 'abc' });
  });
});

describe('ResponseParser: keep-alive', () => {
  const reusable = (input: string, feed: Feed = {}) => {
    const last = parse([Buffer.from(input, 'latin1')], feed).events.at(-1);
    assert.ok(last !== undefined && 'complete' in last, 'the response completes');
    return last.complete;
  };

  it('keeps an HTTP/1.1 connection by default', () => {
    assert.equal(reusable('HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n'), true);
    assert.equal(reusable('HTTP/1.1 200 OK\r\nConnection: keep-alive\r\nContent-Length: 0\r\n\r\n'), true);
  });

  it('closes an HTTP/1.1 connection the upstream marks close, in any case and list position', () => {
    assert.equal(reusable('HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 0\r\n\r\n'), false);
    assert.equal(reusable('HTTP/1.1 200 OK\r\nConnection: Close\r\nContent-Length: 0\r\n\r\n'), false);
    assert.equal(reusable('HTTP/1.1 200 OK\r\nConnection: x-custom, close\r\nContent-Length: 0\r\n\r\n'), false);
    assert.equal(
      reusable('HTTP/1.1 200 OK\r\nConnection: keep-alive\r\nConnection: close\r\nContent-Length: 0\r\n\r\n'),
      false,
    );
    assert.equal(reusable('HTTP/1.1 204 No Content\r\nConnection: close\r\n\r\n'), false);
  });

  it('closes an HTTP/1.0 connection unless the upstream says keep-alive', () => {
    assert.equal(reusable('HTTP/1.0 200 OK\r\nContent-Length: 2\r\n\r\nok'), false);
    assert.equal(reusable('HTTP/1.0 200 OK\r\nConnection: keep-alive\r\nContent-Length: 2\r\n\r\nok'), true);
    assert.equal(reusable('HTTP/1.0 200 OK\r\nConnection: Keep-Alive, x-other\r\nContent-Length: 0\r\n\r\n'), true);
  });

  it('does not trust a connection after a response with both Transfer-Encoding and Content-Length', () => {
    // The chunked coding frames the body; the stray Content-Length is ignored.
    assertParses('HTTP/1.1 200 OK\r\nContent-Length: 100\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nhi\r\n0\r\n\r\n', [
      head(200, { 'content-length': '100', 'transfer-encoding': 'chunked' }),
      { body: 'hi' },
      { complete: false },
    ]);
  });
});

describe('ResponseParser: header fields', () => {
  it('lowercases names, keeps the case of values and trims spaces and tabs around them', () => {
    assertParses(
      'HTTP/1.1 200 OK\r\nX-Mixed-Case: Value With Spaces\r\nX-Padded: \t  inner \t value\t \r\nX-Empty:\r\nX-Blank:   \r\nContent-Length: 0\r\n\r\n',
      [
        head(200, {
          'x-mixed-case': 'Value With Spaces',
          'x-padded': 'inner \t value',
          'x-empty': '',
          'x-blank': '',
          'content-length': '0',
        }),
        { complete: true },
      ],
    );
  });

  it('makes a repeated field an array, in order, whatever the case of its name', () => {
    assertParses(
      'HTTP/1.1 200 OK\r\nSet-Cookie: a=1\r\nX-One: only\r\nset-cookie: b=2\r\nSET-COOKIE: c=3\r\nContent-Length: 0\r\n\r\n',
      [head(200, { 'set-cookie': ['a=1', 'b=2', 'c=3'], 'x-one': 'only', 'content-length': '0' }), { complete: true }],
    );
  });

  it('keeps obs-text in values and colons after the first', () => {
    assertParses(
      Buffer.from('HTTP/1.1 200 OK\r\nX-Latin: caf\xe9\r\nX-Url: http://a:1/b\r\nContent-Length: 0\r\n\r\n', 'latin1'),
      [head(200, { 'x-latin': 'caf\xe9', 'x-url': 'http://a:1/b', 'content-length': '0' }), { complete: true }],
    );
  });

  it('accepts a status line without a reason phrase, with an empty one, and any reason text', () => {
    assertParses('HTTP/1.1 200\r\nContent-Length: 0\r\n\r\n', [
      head(200, { 'content-length': '0' }),
      { complete: true },
    ]);
    assertParses('HTTP/1.1 404 \r\nContent-Length: 0\r\n\r\n', [
      head(404, { 'content-length': '0' }),
      { complete: true },
    ]);
    assertParses('HTTP/1.1 503 Slow Down: try again\r\nContent-Length: 0\r\n\r\n', [
      head(503, { 'content-length': '0' }),
      { complete: true },
    ]);
  });
});

describe('ResponseParser: protocol errors', () => {
  it('rejects malformed status lines', () => {
    for (const statusLine of [
      'HTTP/2 200 OK',
      'HTTP/1.2 200 OK',
      'http/1.1 200 OK',
      'HTTP/1.1 20 OK',
      'HTTP/1.1 2000 OK',
      'HTTP/1.1 200OK',
      'HTTP/1.1  200 OK',
      'HTTP/1.1\t200 OK',
      'HTTP/1.1 2x0 OK',
      'HTTP/1.1 -20 OK',
      'ICY 200 OK',
      '',
      'garbage',
    ])
      assertRejected(`${statusLine}\r\nContent-Length: 0\r\n\r\n`);
  });

  it('rejects a status below 100 and 101 Switching Protocols', () => {
    assertRejected('HTTP/1.1 099 Odd\r\n\r\n');
    assertRejected('HTTP/1.1 000 Zero\r\n\r\n');
    assertRejected('HTTP/1.1 101 Switching Protocols\r\nConnection: upgrade\r\nUpgrade: websocket\r\n\r\n');
  });

  it('rejects a control character in the reason phrase (a bare LF would hide the next header from this parser)', () => {
    // Read by a lenient parser as a status line and a Content-Length: 0 header; read here as a
    // status line whose reason holds a newline, then a body until close.
    assertRejected('HTTP/1.1 200 OK\nContent-Length: 0\r\nX: y\r\n\r\n');
    assertRejected('HTTP/1.1 200 O\x00K\r\nContent-Length: 0\r\n\r\n');
  });

  it('rejects a header line without a colon, or with nothing before it', () => {
    assertRejected('HTTP/1.1 200 OK\r\nNoColonHere\r\nContent-Length: 0\r\n\r\n');
    assertRejected('HTTP/1.1 200 OK\r\n: value\r\nContent-Length: 0\r\n\r\n');
  });

  it('rejects obs-fold: a line that starts with a space or tab', () => {
    assertRejected('HTTP/1.1 200 OK\r\nX-Folded: one\r\n two\r\nContent-Length: 0\r\n\r\n');
    assertRejected('HTTP/1.1 200 OK\r\nX-Folded: one\r\n\ttwo\r\nContent-Length: 0\r\n\r\n');
    assertRejected('HTTP/1.1 200 OK\r\n Content-Length: 0\r\n\r\n');
  });

  it('rejects whitespace before the colon and a name that is not a token', () => {
    assertRejected('HTTP/1.1 200 OK\r\nContent-Length : 5\r\n\r\nhello');
    assertRejected('HTTP/1.1 200 OK\r\nContent-Length\t: 5\r\n\r\nhello');
    assertRejected('HTTP/1.1 200 OK\r\nX(bad): 1\r\nContent-Length: 0\r\n\r\n');
    assertRejected('HTTP/1.1 200 OK\r\nX\xe9: 1\r\nContent-Length: 0\r\n\r\n');
  });

  it('rejects a control character in a value (NUL, bare CR or LF, DEL, others)', () => {
    for (const control of ['\x00', '\x01', '\x1b', '\x7f', '\r', '\n'])
      assertRejected(`HTTP/1.1 200 OK\r\nX-Bad: a${control}b\r\nContent-Length: 0\r\n\r\n`);
  });

  it('rejects a head larger than MAX_HEAD_BYTES, whole or in many chunks, before it ends', () => {
    const filler = `X-Filler: ${'a'.repeat(1000)}\r\n`;
    const big = `HTTP/1.1 200 OK\r\n${filler.repeat(Math.ceil(MAX_HEAD_BYTES / filler.length) + 1)}`;
    assert.ok(big.length > MAX_HEAD_BYTES);
    const bytes = Buffer.from(big);
    // Without its end: the parser gives up once it holds too much rather than waiting for more.
    assert.throws(() => parse(whole(bytes)), isProtocolError);
    assert.throws(() => parse(slices(bytes, 1024)), isProtocolError);
    assert.throws(() => parse(slices(bytes, 7)), isProtocolError);
    // With its end in the same chunk.
    assert.throws(() => parse(whole(Buffer.from(`${big}Content-Length: 0\r\n\r\n`))), isProtocolError);
  });

  it('accepts a large head just under MAX_HEAD_BYTES, however it is split', () => {
    const filler = `X-Filler: ${'b'.repeat(1000)}\r\n`;
    const fields = filler.repeat(Math.floor((MAX_HEAD_BYTES - 200) / filler.length));
    const bytes = Buffer.from(`HTTP/1.1 200 OK\r\n${fields}Content-Length: 2\r\n\r\nok`);
    assert.ok(bytes.length < MAX_HEAD_BYTES && bytes.length > MAX_HEAD_BYTES - 1200);
    for (const chunks of [whole(bytes), slices(bytes, 1024), slices(bytes, 997)]) {
      const { events } = parse(chunks);
      assert.equal(events.length, 3);
      const first = events[0]!;
      assert.ok(
        'head' in first &&
          first.head.headers['x-filler']!.length === Math.floor((MAX_HEAD_BYTES - 200) / filler.length),
      );
      assert.deepEqual(events.slice(1), [{ body: 'ok' }, { complete: true }]);
    }
  });

  it('rejects a chunk size that is not hex, is empty, negative or has too many digits', () => {
    for (const size of ['zz', 'g', '', ' ', '-1', '+5', '0x5', '1 2', '1111111111111111', '10000000000000000'])
      assertRejected(`HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n${size}\r\nabcde\r\n0\r\n\r\n`);
  });

  it('rejects a chunk-size line that does not end in CRLF, or is too long', () => {
    assertRejected('HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\nhello\r\n0\r\n\r\n');
    assertRejected(`HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5;${'e'.repeat(5000)}\r\nhello\r\n0\r\n\r\n`);
  });

  it('rejects chunk data longer than its size, or not followed by CRLF', () => {
    assertRejected('HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabcd\r\n0\r\n\r\n');
    assertRejected('HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabcdefghij\r\n0\r\n\r\n');
    assertRejected('HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\n0\r\n\r\n');
  });

  it('rejects a trailer section that is too large', () => {
    const trailer = `X-Trailer: ${'t'.repeat(1000)}\r\n`;
    assertRejected(`HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n${trailer.repeat(20)}\r\n`);
  });

  it('rejects Content-Length values that differ, in one field or two', () => {
    assertRejected('HTTP/1.1 200 OK\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\nhello!');
    assertRejected('HTTP/1.1 200 OK\r\nContent-Length: 5, 6\r\n\r\nhello!');
  });

  it('rejects an invalid Content-Length', () => {
    for (const value of ['', 'abc', '-1', '+5', '1e3', '0x10', '5.0', '5 5', '1,', '9999999999999999'])
      assertRejected(`HTTP/1.1 200 OK\r\nContent-Length: ${value}\r\n\r\nhello`);
  });

  it('reports no head for a response whose framing is invalid', () => {
    for (const input of [
      'HTTP/1.1 200 OK\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\nhello!',
      'HTTP/1.1 200 OK\r\nContent-Length: abc\r\n\r\nhello',
    ]) {
      const events: Event[] = [];
      const parser = new ResponseParser({
        onHead: (h) => events.push({ head: h }),
        onBody: (bytes) => events.push({ body: bytes.toString('latin1') }),
        onComplete: (reusable) => events.push({ complete: reusable }),
      });
      parser.expect(false);
      assert.throws(() => parser.execute(Buffer.from(input)), isProtocolError);
      assert.deepEqual(events, [], 'nothing reported before the error');
    }
  });

  it('rejects bytes after a complete response (after reporting that response)', () => {
    for (const chunks of [
      whole(Buffer.from('HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nokEXTRA')),
      [Buffer.from('HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok'), Buffer.from('HTTP/1.1 200 OK\r\n')],
      whole(Buffer.from('HTTP/1.1 204 No Content\r\n\r\nbody')),
      whole(Buffer.from('HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\nX')),
    ]) {
      const events: Event[] = [];
      const parser = new ResponseParser({
        onHead: (h) => events.push({ head: h }),
        onBody: (bytes) => events.push({ body: bytes.toString('latin1') }),
        onComplete: (reusable) => events.push({ complete: reusable }),
      });
      parser.expect(false);
      assert.throws(() => {
        for (const chunk of chunks) parser.execute(chunk);
      }, isProtocolError);
      assert.deepEqual(events.at(-1), { complete: true });
    }
  });

  it('rejects bytes before any request', () => {
    const parser = new ResponseParser({ onHead() {}, onBody() {}, onComplete() {} });
    assert.throws(() => parser.execute(Buffer.from('HTTP/1.1 200 OK\r\n\r\n')), isProtocolError);
  });

  it('rejects the end of input in the middle of a head, a Content-Length body or a chunked body', () => {
    assertRejected('HTTP/1.1 200 OK\r\nContent-Le', { finish: true });
    assertRejected('HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nhalf', { finish: true });
    assertRejected('HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhel', { finish: true });
    assertRejected('HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n', { finish: true });
    assertRejected('HTTP/1.1 100 Continue\r\n\r\n', { finish: true });
    // No response at all, after a request.
    const parser = new ResponseParser({ onHead() {}, onBody() {}, onComplete() {} });
    parser.expect(false);
    assert.throws(() => parser.finish(), isProtocolError);
  });

  it('lets the input end quietly when no response is due', () => {
    const parser = new ResponseParser({ onHead() {}, onBody() {}, onComplete() {} });
    parser.finish();
    parser.expect(false);
    parser.execute(Buffer.from('HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n'));
    parser.finish();
  });
});
