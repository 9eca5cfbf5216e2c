// traffic.extProc pieces on their own: configuration problems, header mutations, immediate
// responses, Struct conversion, and the stream's message timeout against a real processor.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import * as grpc from '@grpc/grpc-js';
import type { ExtProcOrConditional } from '../../../src/api/types/inbound-auth.ts';
import { failureAnswer, immediateAnswer } from '../../../src/dataplane/policies/ext-proc/answers.ts';
import { compileExtProc } from '../../../src/dataplane/policies/ext-proc/ext-proc.ts';
import { applyHeaderMutation, headerMap } from '../../../src/dataplane/policies/ext-proc/headers.ts';
import { EXT_PROC_PROTO, EXT_PROC_SERVICE } from '../../../src/dataplane/policies/ext-proc/messages.ts';
import {
  type ExternalProcessorClient,
  ProcessorError,
  ProcessorStream,
} from '../../../src/dataplane/policies/ext-proc/processor-stream.ts';
import { serviceConstructor } from '../../../src/dataplane/policies/grpc/client.ts';
import { jsonToStruct, structToJson } from '../../../src/dataplane/policies/grpc/struct.ts';
import { PolicyRuntime } from '../../../src/dataplane/policies/runtime.ts';
import { isProblem } from '../../../src/dataplane/policies/types.ts';
import type { HeaderBag } from '../../../src/dataplane/routing/filters.ts';
import { compileContext } from '../../helpers/policy-context.ts';
import { type Conversation, type Processor, startProcessor } from './ext-proc-processor.ts';

function compile(value: ExtProcOrConditional) {
  const runtime = new PolicyRuntime();
  try {
    return compileExtProc(value, compileContext({ runtime }));
  } finally {
    runtime.close();
  }
}

function problemOf(value: ExtProcOrConditional): { field: string; message: string } {
  const compiled = compile(value);
  assert.ok(isProblem(compiled), 'expected a problem');
  return compiled;
}

describe('compileExtProc', () => {
  it('compiles an inline processor and a conditional list into a request step', () => {
    const inline = compile({ url: 'http://127.0.0.1:9000' });
    assert.ok(!isProblem(inline) && inline.request);
    const conditional = compile({
      conditional: [{ condition: 'request.path == "/a"', policy: { url: 'http://127.0.0.1:9000' } }],
    });
    assert.ok(!isProblem(conditional) && conditional.request);
  });

  it('names the field of invalid CEL, an unknown backend and a url with a path', () => {
    assert.deepEqual(
      problemOf({ url: 'http://127.0.0.1:9000', requestAttributes: { a: 'request.path ==' } }).field,
      'traffic.extProc.requestAttributes.a',
    );
    assert.equal(
      problemOf({ url: 'http://127.0.0.1:9000', metadataContext: { ns: { k: '1 +' } } }).field,
      'traffic.extProc.metadataContext.ns.k',
    );
    assert.equal(
      problemOf({ url: 'http://127.0.0.1:9000', responseAttributes: { code: ')' } }).field,
      'traffic.extProc.responseAttributes.code',
    );
    const missing = problemOf({ backendRef: { name: 'nowhere', port: 9000 } });
    assert.equal(missing.field, 'traffic.extProc.backendRef');
    assert.match(missing.message, /Service default\/nowhere/);
    assert.equal(problemOf({ url: 'http://127.0.0.1:9000/prefix' }).field, 'traffic.extProc.url');
    assert.equal(
      problemOf({ conditional: [{ condition: 'nope(', policy: { url: 'http://127.0.0.1:9000' } }] }).field,
      'traffic.extProc.conditional[0].condition',
    );
    assert.equal(
      problemOf({ conditional: [{ policy: { url: 'ftp://x' } }] }).field,
      'traffic.extProc.conditional[0].policy.url',
    );
  });
});

describe('header mutations', () => {
  const pseudo = new Set([':path']);
  const header = (key: string, value: string) => ({ key, raw_value: Buffer.from(value) });

  it('applies Envoy append actions, the deprecated append flag wins over append_action', () => {
    const headers: HeaderBag = { a: '1', b: '1', c: '1', d: '1', e: '1' };
    applyHeaderMutation(
      headers,
      {
        set_headers: [
          { header: header('a', '2') },
          { header: header('b', '2'), append_action: 'ADD_IF_ABSENT' },
          { header: header('c', '2'), append_action: 'OVERWRITE_IF_EXISTS' },
          { header: header('new-if-exists', '2'), append_action: 'OVERWRITE_IF_EXISTS' },
          { header: header('d', '2'), append: { value: false }, append_action: 'APPEND_IF_EXISTS_OR_ADD' },
          { header: header('e', '2'), append: { value: true }, append_action: 'OVERWRITE_IF_EXISTS_OR_ADD' },
          { header: header('f', '2'), append_action: 'ADD_IF_ABSENT' },
        ],
      },
      pseudo,
    );
    assert.deepEqual(headers, { a: ['1', '2'], b: '1', c: '2', d: '2', e: ['1', '2'], f: '2' });
  });

  it('never touches framing, hop-by-hop or host headers, nor values that would split the header block', () => {
    const headers: HeaderBag = { host: 'gw', 'content-length': '5', x: 'keep' };
    const result = applyHeaderMutation(
      headers,
      {
        set_headers: [
          { header: header('content-length', '99') },
          { header: header('transfer-encoding', 'chunked') },
          { header: header('host', 'evil') },
          { header: header('x-injected', 'a\r\nx-evil: 1') },
          { header: header('bad name', 'v') },
          { header: header('x-empty', '') },
          { header: header('x-kept-empty', ''), keep_empty_value: true },
          { header: { key: 'x-plain', value: 'from value' } },
          { header: header(':path', '/new') },
          { header: header(':method', 'DELETE') },
        ],
        remove_headers: ['host', 'content-length', ':path', 'X'],
      },
      pseudo,
    );
    assert.deepEqual(headers, { host: 'gw', 'content-length': '5', 'x-kept-empty': '', 'x-plain': 'from value' });
    assert.deepEqual([...(result ?? [])], [[':path', '/new']], 'only the allowed pseudo-headers come back');
  });

  it('sends values in raw_value, pseudo-headers first, one entry per repeated value, without host', () => {
    const map = headerMap([[':path', '/p']], { host: 'h', accept: 'a', 'set-cookie': ['1', '2'] });
    assert.deepEqual(
      map.headers.map((entry) => [entry.key, entry.raw_value?.toString()]),
      [
        [':path', '/p'],
        ['accept', 'a'],
        ['set-cookie', '1'],
        ['set-cookie', '2'],
      ],
    );
  });
});

describe('answers', () => {
  it('turns an immediate_response into the client answer', () => {
    const named = immediateAnswer({ status: { code: 'Forbidden' }, body: Buffer.from('no') });
    assert.equal(named.status, 403);
    assert.equal((named.headers as Record<string, string>)['content-type'], 'text/plain');
    assert.equal(
      immediateAnswer({ status: { code: 418 } }).status,
      418,
      'a code missing from the enum arrives as its number',
    );
    assert.equal(immediateAnswer({}).status, 200);
    assert.equal(immediateAnswer({ status: { code: 'Continue' } }).status, 500, 'not a final status');
    const grpcAnswer = immediateAnswer({
      status: { code: 200 },
      headers: { set_headers: [{ header: { key: 'content-type', value: 'application/grpc' } }] },
      grpc_status: { status: 7 },
      body: Buffer.from('x'),
    });
    assert.deepEqual(grpcAnswer.headers, { 'content-type': 'application/grpc', 'grpc-status': '7' });
  });

  it('answers 504 for a processor timeout and 500 for any other failure', () => {
    assert.equal(failureAnswer(new ProcessorError('timeout', 'slow')).status, 504);
    assert.equal(failureAnswer(new ProcessorError('failed', 'broken')).status, 500);
    assert.equal(failureAnswer(new Error('other')).status, 500);
  });
});

describe('Struct conversion', () => {
  it('round-trips JSON values, ints as numbers', () => {
    const struct = jsonToStruct({ s: 'x', n: 2, big: 3n, b: true, none: null, list: [1, 'a'], nested: { k: 'v' } });
    assert.deepEqual(structToJson(decodeLike(struct)), {
      s: 'x',
      n: 2,
      big: 3,
      b: true,
      none: null,
      list: [1, 'a'],
      nested: { k: 'v' },
    });
  });
});

/** What the loader hands back: each Value names its set member in `kind`. */
// biome-ignore lint/suspicious/noExplicitAny: a Struct in either direction
function decodeLike(struct: any): any {
  const fields: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(struct.fields ?? {})) fields[name] = decodeValue(value);
  return { fields };
}

// biome-ignore lint/suspicious/noExplicitAny: a Value in either direction
function decodeValue(value: any): any {
  const kind = Object.keys(value)[0]!;
  if (kind === 'structValue') return { kind, structValue: decodeLike(value.structValue) };
  if (kind === 'listValue') return { kind, listValue: { values: value.listValue.values.map(decodeValue) } };
  return { kind, [kind]: value[kind] };
}

describe('ProcessorStream', () => {
  let processor: Processor;
  let client: ExternalProcessorClient;
  const scripts = new Map<string, (conversation: Conversation) => Promise<void>>();

  before(async () => {
    processor = await startProcessor(async (conversation) => {
      const first = await conversation.next();
      const name = first?.request_headers?.headers.headers[0]?.key as string;
      await scripts.get(name)?.(conversation);
    });
    const ctor = serviceConstructor(EXT_PROC_PROTO, EXT_PROC_SERVICE);
    client = new ctor(
      `127.0.0.1:${processor.port}`,
      grpc.credentials.createInsecure(),
    ) as unknown as ExternalProcessorClient;
  });

  after(async () => {
    client.close();
    await processor.close();
  });

  const open = (script: string, timeoutMs: number) => {
    const stream = new ProcessorStream(client, timeoutMs);
    stream.send({ request_headers: { headers: { headers: [{ key: script }] }, end_of_stream: true } });
    return stream;
  };

  it('fails a wait past the message timeout', async () => {
    scripts.set('silent', async () => undefined);
    const started = Date.now();
    const stream = open('silent', 150);
    await assert.rejects(stream.next(), (error: ProcessorError) => error.failure === 'timeout');
    assert.ok(Date.now() - started >= 140);
  });

  it('waits longer when the processor sends override_message_timeout', async () => {
    scripts.set('override', async (conversation) => {
      conversation.send({ override_message_timeout: { seconds: 0, nanos: 500_000_000 } });
      await new Promise((resolve) => setTimeout(resolve, 300));
      conversation.send({ request_headers: {} });
    });
    const stream = open('override', 150);
    const message = await stream.next();
    assert.equal(message?.response, 'request_headers', 'answered at 300 ms, within the extended 500 ms');
  });

  it('does not time a wait while gw still streams a body', async () => {
    scripts.set('late', async (conversation) => {
      await new Promise((resolve) => setTimeout(resolve, 300));
      conversation.send({ request_headers: {} });
    });
    const stream = open('late', 100);
    stream.setInputOpen(true);
    const waiting = stream.next();
    setTimeout(() => stream.setInputOpen(false), 250);
    assert.equal((await waiting)?.response, 'request_headers', 'timed only from 250 ms on');
  });

  it('gives undefined once the processor ends the stream cleanly, and an error when it fails it', async () => {
    scripts.set('end', async (conversation) => conversation.end());
    assert.equal(await open('end', 1000).next(), undefined);
    scripts.set('fail', async (conversation) => conversation.fail(grpc.status.PERMISSION_DENIED, 'nope'));
    await assert.rejects(
      open('fail', 1000).next(),
      (error: ProcessorError) => error.failure === 'failed' && /nope/.test(error.message),
    );
  });
});
