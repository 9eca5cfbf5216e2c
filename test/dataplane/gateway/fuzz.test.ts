// Seeded fuzzing of a running gw: a few hundred random, truncated and mutated request bodies
// (wrong types, huge numbers, deep nesting, random bytes) on its Chat Completions and Messages
// routes, passed through and translated, and random request paths and Host headers. Every answer
// must be a well-formed HTTP response; a client error is a 4xx in the client's own format; the
// only 5xx allowed are the 502/503 of a provider failure; no request may end in gw's own
// "request failed" (an exception escaping the handler); and gw must keep serving.
import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { after, before, describe, it } from 'node:test';
import OpenAI from 'openai';
import { Agent, request } from 'undici';
import {
  aiBackendYaml,
  freePort,
  GW_MODELS_RULE,
  gatewayYaml,
  llmRouteYaml,
  startTestGateway,
  type TestGateway,
} from '../../helpers/gateway.ts';
import { seededRandom } from '../../helpers/random.ts';
import { startAnthropicMock } from '../../support/providers/anthropic-mock.ts';
import type { MockServer } from '../../support/providers/mock-server.ts';
import { startOpenAiMock } from '../../support/providers/openai-mock.ts';

const SEED = 0x6757_2024;
const BODY_CASES = 320;
const PATH_CASES = 160;
const CONCURRENCY = 16;

/** Seeded, so a failure replays with the same inputs. */
function random(seed: number) {
  const next = seededRandom(seed);
  const int = (below: number) => Math.floor(next() * below);
  const pick = <T>(items: readonly T[]): T => items[int(items.length)]!;
  return { next, int, pick };
}
type Random = ReturnType<typeof random>;

const VALID_CHAT = {
  model: 'gpt-4o-mini',
  messages: [
    { role: 'system', content: 'be brief' },
    { role: 'user', content: 'call get_weather for one two' },
  ],
  tools: [{ type: 'function', function: { name: 'get_weather', parameters: { type: 'object', properties: {} } } }],
  temperature: 0.2,
  max_tokens: 30,
  stream: false,
};
const VALID_MESSAGES = {
  model: 'claude-sonnet',
  max_tokens: 30,
  system: 'be brief',
  messages: [{ role: 'user', content: [{ type: 'text', text: 'one two three' }] }],
  tools: [{ name: 'get_weather', input_schema: { type: 'object', properties: {} } }],
  stream: false,
};

function deep(depth: number, open: string, close: string, inner = '1'): string {
  return open.repeat(depth) + inner + close.repeat(depth);
}

/** Values of the wrong type or out of range, for any field. */
function oddValue(r: Random): unknown {
  const choices: (() => unknown)[] = [
    () => null,
    () => true,
    () => 0,
    () => -1,
    () => 1e308,
    () => -1e308,
    () => 2 ** 64,
    () => 0.5,
    () => '',
    () => 'x'.repeat(r.int(5000)),
    () => '\u0000\uffff\ud800',
    () => [],
    () => {},
    () => [null],
    () => [1, 'two', { three: 3 }],
    () => ({ role: 'user' }),
    () => [{ role: r.pick(['user', 'assistant', 'system', 'tool', 'developer', 'bogus']), content: oddValue(r) }],
    () => [{ type: r.pick(['text', 'image', 'tool_use', 'tool_result', 'image_url', 'nope']), text: oddValue(r) }],
    () => JSON.parse(deep(200 + r.int(300), '[', ']')),
    () => JSON.parse(deep(200 + r.int(300), '{"a":', '}')),
  ];
  return r.pick(choices)();
}

const FIELDS = [
  'model',
  'messages',
  'stream',
  'max_tokens',
  'temperature',
  'tools',
  'tool_choice',
  'system',
  'stream_options',
  'n',
  'stop',
  'response_format',
  'metadata',
];

/** One request body: random bytes, a truncated valid body, a mutated one, or a deeply nested one. */
function fuzzBody(r: Random, valid: Record<string, unknown>): string | Buffer {
  const kind = r.int(7);
  if (kind === 0) {
    const bytes = Buffer.alloc(r.int(600));
    for (let i = 0; i < bytes.length; i++) bytes[i] = r.int(256);
    return bytes;
  }
  if (kind === 1) {
    const text = JSON.stringify({ ...valid, stream: r.next() < 0.5 });
    return text.slice(0, r.int(text.length));
  }
  if (kind === 2)
    return r.pick(['1e400', '-0', '{"model": 1e400}', 'null', 'true', '{}', '[]', '{"__proto__": {"x": 1}}']);
  if (kind === 3) {
    const depth = r.pick([1000, 10_000, 100_000]);
    return r.next() < 0.5 ? deep(depth, '[', ']') : `{"model":"m","messages":${deep(depth, '[', ']')}}`;
  }
  // Mutations of a valid body: 1-3 fields replaced, removed, or nested values broken.
  const body: Record<string, unknown> = structuredClone(valid);
  body.stream = r.next() < 0.4;
  for (let i = 0, n = 1 + r.int(3); i < n; i++) {
    const field = r.pick(FIELDS);
    const roll = r.next();
    if (roll < 0.15) delete body[field];
    else if (roll < 0.35 && Array.isArray(body.messages) && body.messages.length > 0) {
      const message = { ...(body.messages[r.int(body.messages.length)] as Record<string, unknown>) };
      message[r.pick(['role', 'content', 'tool_calls', 'tool_call_id', 'name'])] = oddValue(r);
      body.messages = [...(body.messages as unknown[]), message];
    } else body[field] = oddValue(r);
  }
  return JSON.stringify(body);
}

/** Request headers a client might get wrong (all valid on the wire, so the client library sends them). */
const ODD_HEADERS: [string, string][] = [
  ['anthropic-version', '1999-01-01'],
  ['anthropic-version', ''],
  ['anthropic-beta', 'x'.repeat(4000)],
  ['accept-encoding', 'gzip, br'],
  ['content-encoding', 'gzip'],
  ['authorization', `Bearer ${'k'.repeat(600)}`],
  ['authorization', 'Basic'],
  ['x-api-key', ''],
  ['accept', 'text/event-stream'],
  ['x-forwarded-for', 'not-an-address, ::zz'],
  ['host', 'example.com:0'],
  ['te', 'trailers'],
  ['connection', 'keep-alive, x-drop-me'],
  ['x-drop-me', '1'],
  ['x-latin1', '\u00ff\u00fe caf\u00e9'],
  ['traceparent', '00-zz-zz-01'],
];

const CONTENT_TYPES = [
  'application/json',
  'text/plain',
  'application/x-www-form-urlencoded',
  '',
  'application/json; charset=latin1',
];

/** Runs `work` over `items` with at most `limit` in flight. */
async function pooled<T>(items: T[], limit: number, work: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: limit }, async () => {
      while (next < items.length) await work(items[next++]!);
    }),
  );
}

/** Sends raw bytes and reads until the server closes; returns the status line's code (0 if none). */
function rawStatus(port: number, bytes: string): Promise<{ status: number; head: string }> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    const chunks: Buffer[] = [];
    const done = () => {
      clearTimeout(timer);
      const text = Buffer.concat(chunks).toString('latin1');
      const match = /^HTTP\/1\.1 (\d{3}) /.exec(text);
      resolve({ status: match ? Number(match[1]) : 0, head: text.slice(0, 200) });
    };
    const timer = setTimeout(() => {
      socket.destroy();
    }, 3000);
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    socket.on('error', () => {});
    socket.on('close', done);
    socket.on('connect', () => socket.write(Buffer.from(bytes, 'latin1')));
  });
}

describe('fuzzing gw', () => {
  let openaiUpstream: MockServer;
  let anthropicUpstream: MockServer;
  let gw: TestGateway;
  let port: number;
  let base: string;
  const agent = new Agent({ connections: CONCURRENCY });

  before(async () => {
    openaiUpstream = await startOpenAiMock({ apiKey: 'sk-openai', maxRecordedRequests: 10 });
    anthropicUpstream = await startAnthropicMock({ apiKey: 'sk-anthropic', maxRecordedRequests: 10 });
    port = await freePort();
    base = `http://127.0.0.1:${port}`;
    const routes = '{/v1/chat/completions: Completions, /v1/messages: Messages}';
    gw = await startTestGateway({
      'gateway.yaml': [
        gatewayYaml(port),
        aiBackendYaml('gpt', openaiUpstream.port, 'alpha: {}', 'sk-openai', routes),
        aiBackendYaml('claude', anthropicUpstream.port, 'gamma: {}', 'sk-anthropic', routes),
        `apiVersion: gw.dev/v1alpha1
kind: GwModel
metadata: {name: any}
spec:
  parentRefs: [{group: gateway.networking.k8s.io, kind: HTTPRoute, name: llm, sectionName: models}]
  match: {model: '*'}
  provider: Alpha
  baseURL: http://127.0.0.1:${openaiUpstream.port}/v1
  policies: {auth: {key: sk-openai}}
---
`,
        llmRouteYaml(['gpt', 'claude'], GW_MODELS_RULE),
      ].join(''),
    });
  });

  after(async () => {
    await agent.close();
    await gw?.stop();
    await Promise.all([openaiUpstream?.close(), anthropicUpstream?.close()]);
  });

  const assertNoHandlerFailure = () => {
    const failures = gw.logs.filter((line) => line.includes('request failed'));
    assert.deepEqual(failures, [], 'an exception escaped the request handler');
  };

  it('answers every fuzzed body with a well-formed response in the client format', async () => {
    const r = random(SEED);
    const paths = [
      { path: '/gpt/v1/chat/completions', family: 'openai', valid: VALID_CHAT },
      { path: '/claude/v1/chat/completions', family: 'openai', valid: VALID_CHAT },
      { path: '/models/v1/chat/completions', family: 'openai', valid: VALID_CHAT },
      { path: '/gpt/v1/messages', family: 'anthropic', valid: VALID_MESSAGES },
      { path: '/claude/v1/messages', family: 'anthropic', valid: VALID_MESSAGES },
      { path: '/models/v1/messages', family: 'anthropic', valid: VALID_MESSAGES },
    ] as const;
    const cases = Array.from({ length: BODY_CASES }, (_, index) => {
      const target = r.pick(paths);
      const body = fuzzBody(r, target.valid);
      const contentType = r.next() < 0.85 ? 'application/json' : r.pick(CONTENT_TYPES);
      const headers: Record<string, string> = contentType ? { 'content-type': contentType } : {};
      for (let i = r.int(4) - 1; i > 0; i--) {
        const [name, value] = r.pick(ODD_HEADERS);
        headers[name] = value;
      }
      return { index, ...target, body, headers };
    });
    const problems: string[] = [];
    const statuses = new Map<number, number>();
    await pooled(cases, CONCURRENCY, async (c) => {
      const response = await request(`${base}${c.path}`, {
        dispatcher: agent,
        method: 'POST',
        headers: c.headers,
        body: c.body,
        headersTimeout: 5000,
        bodyTimeout: 5000,
      });
      const text = await response.body.text();
      const status = response.statusCode;
      statuses.set(status, (statuses.get(status) ?? 0) + 1);
      const where = `case ${c.index} ${c.path} ${String(c.body).slice(0, 120)} → ${status} ${text.slice(0, 200)}`;
      if (status < 200 || status > 599) problems.push(`not an HTTP status: ${where}`);
      else if (status >= 500 && status !== 502 && status !== 503) problems.push(`gw failed: ${where}`);
      else if (status >= 400) {
        let body: unknown;
        try {
          body = JSON.parse(text);
        } catch {
          problems.push(`an error that is not JSON: ${where}`);
          return;
        }
        const shaped =
          c.family === 'openai'
            ? typeof (body as { error?: { message?: unknown } }).error?.message === 'string'
            : (body as { type?: unknown }).type === 'error' &&
              typeof (body as { error?: { message?: unknown } }).error?.message === 'string';
        if (!shaped) problems.push(`an error not in the ${c.family} format: ${where}`);
      }
    });
    assert.deepEqual(problems, []);
    // The fuzz reached both sides: refusals by gw or the provider, and answers.
    assert.ok((statuses.get(400) ?? 0) > 0 && (statuses.get(200) ?? 0) > 0, JSON.stringify([...statuses]));
    assertNoHandlerFailure();
  });

  it('answers fuzzed paths, methods and Host headers with a well-formed response, malformed ones with 4xx', async () => {
    const r = random(SEED + 1);
    const segments = [
      '..',
      '.',
      '',
      '%2e%2e',
      '%2E',
      '%2F',
      '%zz',
      '%',
      '%0',
      '%00',
      '%E0%A4%A',
      '~',
      'gpt',
      'claude',
      'models',
      'v1',
      'chat',
      'completions',
      'messages',
      'a'.repeat(300),
    ];
    const methods = ['GET', 'POST', 'PUT', 'DELETE', 'OPTIONS', 'HEAD', 'PATCH', 'FOO'];
    const hosts = [
      '127.0.0.1',
      'example.com',
      'EXAMPLE.com.',
      '',
      '[::1',
      '[::1]:80',
      'h:99999',
      '.',
      'a'.repeat(1000),
      'ex ample',
      'caf\u00e9.example',
    ];
    const malformedPaths = [
      '/v1/%',
      '/v1/%zz/chat/completions',
      '/%E0%A4%A',
      'v1/chat/completions',
      '*',
      'http://evil.example/gpt/v1/chat/completions',
      `/${'a'.repeat(20_000)}`,
      '/a b',
      '/\u0001',
    ];
    const cases: { method: string; path: string; host: string | undefined; malformed: boolean }[] = [];
    for (const path of malformedPaths) cases.push({ method: 'GET', path, host: '127.0.0.1', malformed: true });
    for (let i = 0; i < PATH_CASES; i++) {
      const parts = Array.from({ length: 1 + r.int(6) }, () => r.pick(segments));
      const query = r.next() < 0.2 ? `?${r.pick(['a=%zz', 'a=1&&b', '=', '%', 'x'.repeat(100)])}` : '';
      cases.push({
        method: r.pick(methods),
        path: `/${parts.join('/')}${query}`,
        host: r.next() < 0.1 ? undefined : r.pick(hosts),
        malformed: false,
      });
    }
    const problems: string[] = [];
    await pooled(cases, CONCURRENCY, async (c) => {
      const hostLine = c.host === undefined ? '' : `host: ${c.host}\r\n`;
      const body = c.method === 'POST' || c.method === 'PUT' ? '{"model":"gpt-4o-mini","messages":[]}' : '';
      const bytes = `${c.method} ${c.path} HTTP/1.1\r\n${hostLine}connection: close\r\ncontent-length: ${body.length}\r\n\r\n${body}`;
      const { status, head } = await rawStatus(port, bytes);
      const where = `${c.method} ${c.path.slice(0, 80)} host=${String(c.host).slice(0, 40)} → ${JSON.stringify(head.slice(0, 80))}`;
      if (status === 0) problems.push(`no HTTP response: ${where}`);
      else if (c.malformed && (status < 400 || status > 499)) problems.push(`not a 4xx: ${where}`);
      else if (status >= 500 && status !== 502 && status !== 503) problems.push(`gw failed: ${where}`);
    });
    assert.deepEqual(problems, []);
    assertNoHandlerFailure();
  });

  it('keeps serving: a valid request succeeds after the fuzzing', async () => {
    const client = new OpenAI({ apiKey: 'client', baseURL: `${base}/claude/v1`, maxRetries: 0 });
    const completion = await client.chat.completions.create({
      model: 'claude-sonnet',
      messages: [{ role: 'user', content: 'after the storm' }],
    });
    assert.equal(completion.choices[0]!.message.content, 'echo: after the storm');
  });
});
