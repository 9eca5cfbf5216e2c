// Prompt guards in gw's metrics and traces, end to end: requests through gw (the OpenAI SDK) to
// a provider with a Mask and a Reject guard; the /metrics exposition counts each guard's checks
// by what it did and the names it matched, and each traced request's span has a child span per
// guard, exported over OTLP/HTTP to a collector the test runs, with no text of the prompt. A
// guard service (alphaModeration, against the moderation stand-in) that rejects, is too slow or
// fails: its span covers the call, a failure has its error_type and an ERROR status.
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import { after, before, describe, it } from 'node:test';
import OpenAI from 'openai';
import {
  aiBackendYaml,
  freePort,
  gatewayYaml,
  llmRouteYaml,
  startTestGateway,
  type TestGateway,
} from '../../helpers/gateway.ts';
import { type ModerationStandIn, startModerationStandIn } from '../../helpers/moderation-stand-in.ts';
import { until } from '../../helpers/until.ts';
import { startOpenAiMock } from '../../support/providers/openai-mock.ts';
import { find, parseExposition, value } from '../telemetry/prometheus-text.ts';

const CARD = '4111-1111-1111-1111';
const SSN = '078-05-1120';
const GUARDS =
  'promptGuard: {request: [{regex: {action: Mask, builtins: [CreditCard]}}, {regex: {action: Reject, builtins: [Ssn]}}]}';

interface OtlpSpan {
  name: string;
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  startTimeUnixNano: string;
  endTimeUnixNano: string;
  status?: { code?: number; message?: string };
  attributes: { key: string; value: Record<string, unknown> }[];
}

/** An OTLP/HTTP (JSON) trace collector: every span posted to /v1/traces, and the raw bodies. */
async function traceCollector(): Promise<{ server: Server; port: number; spans: OtlpSpan[]; bodies: string[] }> {
  const spans: OtlpSpan[] = [];
  const bodies: string[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      bodies.push(body);
      const parsed = JSON.parse(body) as { resourceSpans?: { scopeSpans: { spans: OtlpSpan[] }[] }[] };
      for (const resource of parsed.resourceSpans ?? [])
        for (const scope of resource.scopeSpans) spans.push(...scope.spans);
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, port: (server.address() as { port: number }).port, spans, bodies };
}

/** OTLP/JSON attribute values as plain values (arrays of strings as arrays). */
function attributes(span: OtlpSpan): Record<string, unknown> {
  return Object.fromEntries(
    span.attributes.map(({ key, value }) => {
      const raw = Object.values(value)[0] as unknown;
      const plain =
        raw !== null && typeof raw === 'object' && 'values' in raw
          ? (raw as { values: Record<string, unknown>[] }).values.map((each) => Object.values(each)[0])
          : raw;
      return [key, plain];
    }),
  );
}

/** A GwPolicy tracing every request of Gateway ai to the collector on `port` (OTLP/HTTP). */
const tracingPolicy = (port: number) => `---
apiVersion: gw.dev/v1alpha1
kind: GwPolicy
metadata: {name: tracing}
spec:
  targetRefs: [{group: gateway.networking.k8s.io, kind: Gateway, name: ai}]
  frontend: {tracing: {url: "http://127.0.0.1:${port}", protocol: HTTP, randomSampling: 'true'}}
`;

/** Nanoseconds as milliseconds. */
const spanMs = (span: OtlpSpan) => Number(BigInt(span.endTimeUnixNano) - BigInt(span.startTimeUnixNano)) / 1e6;

describe('prompt guards in metrics and traces', () => {
  let openai: Awaited<ReturnType<typeof startOpenAiMock>>;
  let collector: Awaited<ReturnType<typeof traceCollector>>;
  let gw: TestGateway;
  let port: number;
  const client = () => new OpenAI({ apiKey: 'client', baseURL: `http://127.0.0.1:${port}/guarded/v1`, maxRetries: 0 });

  before(async () => {
    openai = await startOpenAiMock({ apiKey: 'sk-openai' });
    collector = await traceCollector();
    port = await freePort();
    gw = await startTestGateway({
      'gateway.yaml': [
        gatewayYaml(port),
        aiBackendYaml('guarded', openai.port, 'alpha: {}', 'sk-openai', '{/v1/chat/completions: Completions}', GUARDS),
        llmRouteYaml(['guarded']),
        tracingPolicy(collector.port),
      ].join(''),
    });
  });

  after(async () => {
    await gw?.stop();
    await openai?.close();
    collector?.server.close();
  });

  it('masks, then rejects; the metrics count each guard by what it did and the names it matched', async () => {
    await client().chat.completions.create({
      model: 'gpt-4o-mini',
      messages: [{ role: 'user', content: `charge ${CARD}` }],
    });
    const refused = await client()
      .chat.completions.create({
        model: 'gpt-4o-mini',
        messages: [{ role: 'user', content: `card ${CARD}, ssn ${SSN}` }],
      })
      .then(
        () => assert.fail('not refused'),
        (error: unknown) => error,
      );
    assert.ok(refused instanceof OpenAI.APIError && refused.status === 403, String(refused));
    // Metrics are recorded when a request's telemetry finishes, just after its client has the answer.
    assert.ok(await until(() => gw.accessLog.length === 2, 1000), 'both requests finished');
    const refusedLine = JSON.parse(gw.accessLog[1]!) as Record<string, unknown>;
    assert.equal(refusedLine['http.response.status_code'], 403);
    assert.equal(
      refusedLine['gen_ai.provider.name'],
      'openai',
      'a refused request names the provider whose guard refused',
    );

    const text = parseExposition(gw.telemetry.metrics.render());
    const guard = (index: string, action: string) => ({
      gateway: 'default/ai',
      route: 'default/llm',
      backend: 'GwBackend default/guarded',
      gen_ai_provider_name: 'openai',
      gw_ai_guard_side: 'request',
      gw_ai_guard_index: index,
      gw_ai_guard_kind: 'regex',
      gw_ai_guard_action: action,
    });
    assert.equal(value(text, 'gw_ai_guard_duration_seconds_count', guard('0', 'mask')), 2);
    assert.equal(value(text, 'gw_ai_guard_duration_seconds_count', guard('1', 'pass')), 1);
    assert.equal(value(text, 'gw_ai_guard_duration_seconds_count', guard('1', 'reject')), 1);
    assert.equal(
      value(text, 'gw_ai_guard_matches_total', { ...guard('0', 'mask'), gw_ai_guard_match: 'CREDIT_CARD' }),
      2,
    );
    assert.equal(value(text, 'gw_ai_guard_matches_total', { ...guard('1', 'reject'), gw_ai_guard_match: 'SSN' }), 1);
    assert.equal(find(text, 'gw_ai_guard_duration_seconds_count', { error_type: 'timeout' }).length, 0);
    assert.ok(
      find(text, 'gw_ai_guard_duration_seconds_count').every((sample) => sample.labels.error_type === undefined),
      'no guard failed',
    );
  });

  it('each guard is a child span of the request span, with no text of the prompt', async () => {
    await gw.telemetry.otlp.flush();
    const requests = collector.spans.filter((span) => span.name === 'POST default/llm');
    assert.equal(requests.length, 2, collector.spans.map((span) => span.name).join(', '));
    const childrenOf = (parent: OtlpSpan) =>
      collector.spans
        .filter((span) => span.parentSpanId === parent.spanId && span.traceId === parent.traceId)
        .sort((a, b) => a.name.localeCompare(b.name));
    const [passed, rejected] = requests.map(childrenOf) as [OtlpSpan[], OtlpSpan[]];

    assert.deepEqual(
      passed.map((span) => [span.name, attributes(span)]),
      [
        [
          'guard request[0].regex',
          {
            'gw.ai.guard.side': 'request',
            'gw.ai.guard.index': 0,
            'gw.ai.guard.kind': 'regex',
            'gw.ai.guard.action': 'mask',
            'gw.ai.guard.matched': ['CREDIT_CARD'],
          },
        ],
        [
          'guard request[1].regex',
          {
            'gw.ai.guard.side': 'request',
            'gw.ai.guard.index': 1,
            'gw.ai.guard.kind': 'regex',
            'gw.ai.guard.action': 'pass',
          },
        ],
      ],
    );
    assert.deepEqual(
      rejected.map((span) => [
        span.name,
        attributes(span)['gw.ai.guard.action'],
        attributes(span)['gw.ai.guard.matched'],
      ]),
      [
        ['guard request[0].regex', 'mask', ['CREDIT_CARD']],
        ['guard request[1].regex', 'reject', ['SSN']],
      ],
    );
    for (const [parent, children] of [
      [requests[0]!, passed],
      [requests[1]!, rejected],
    ] as const) {
      for (const child of children) {
        assert.ok(
          BigInt(child.startTimeUnixNano) >= BigInt(parent.startTimeUnixNano) &&
            BigInt(child.endTimeUnixNano) <= BigInt(parent.endTimeUnixNano),
          `${child.name} lies within its request`,
        );
        assert.ok(child.status?.code === undefined || child.status.code === 0, 'a guard that checked is no error');
      }
    }
    const everything = collector.bodies.join('');
    assert.ok(!everything.includes(CARD) && !everything.includes(SSN), 'no prompt text in the spans');
  });
});

describe('a guard service in metrics and traces', () => {
  const MODERATION_KEY = 'sk-moderation';
  let moderation: ModerationStandIn;
  let openai: Awaited<ReturnType<typeof startOpenAiMock>>;
  let collector: Awaited<ReturnType<typeof traceCollector>>;
  let gw: TestGateway;
  let port: number;
  const savedBaseUrl = process.env.OPENAI_BASE_URL;
  const ask = (content: string) =>
    new OpenAI({ apiKey: 'client', baseURL: `http://127.0.0.1:${port}/moderated/v1`, maxRetries: 0 }).chat.completions
      .create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content }] })
      .then(
        () => 200,
        (error: unknown) => (error instanceof OpenAI.APIError ? error.status : -1),
      );

  before(async () => {
    moderation = await startModerationStandIn({ apiKey: MODERATION_KEY });
    openai = await startOpenAiMock({ apiKey: 'sk-openai' });
    collector = await traceCollector();
    port = await freePort();
    process.env.OPENAI_BASE_URL = moderation.baseUrl; // read when the configuration compiles
    const guard = `promptGuard: {request: [{alphaModeration: {policies: {http: {requestTimeout: 300ms}, auth: {key: ${MODERATION_KEY}}}}}]}`;
    gw = await startTestGateway({
      'gateway.yaml': [
        gatewayYaml(port),
        aiBackendYaml('moderated', openai.port, 'alpha: {}', 'sk-openai', '{/v1/chat/completions: Completions}', guard),
        llmRouteYaml(['moderated']),
        tracingPolicy(collector.port),
      ].join(''),
    });
  });

  after(async () => {
    if (savedBaseUrl === undefined) delete process.env.OPENAI_BASE_URL;
    else process.env.OPENAI_BASE_URL = savedBaseUrl;
    await gw?.stop();
    await Promise.all([moderation?.close(), openai?.close()]);
    collector?.server.close();
  });

  it('a rejection, a slow service and a failing one: each span lasts the call, a failure is an error with its type', async () => {
    assert.equal(await ask('hateful words'), 403);
    moderation.delayMs = 100;
    assert.equal(await ask('hello'), 200, 'a slow answer within the deadline');
    moderation.delayMs = 1000;
    assert.equal(await ask('hello'), 503, 'past the deadline: FailClosed');
    moderation.delayMs = 0;
    moderation.failWith = 500;
    assert.equal(await ask('hello'), 503);
    moderation.failWith = undefined;
    assert.ok(await until(() => gw.accessLog.length === 4, 2000), 'every request finished');

    const text = parseExposition(gw.telemetry.metrics.render());
    const guard = { gw_ai_guard_kind: 'alphaModeration', gw_ai_guard_side: 'request', gw_ai_guard_index: '0' };
    const checked = find(text, 'gw_ai_guard_duration_seconds_count', guard).filter(
      (sample) => sample.labels.error_type === undefined,
    );
    assert.deepEqual(checked.map((sample) => [sample.labels.gw_ai_guard_action, sample.value]).sort(), [
      ['pass', 1],
      ['reject', 1],
    ]);
    assert.equal(value(text, 'gw_ai_guard_matches_total', { ...guard, gw_ai_guard_match: 'hate' }), 1);
    const failed = { ...guard, gw_ai_guard_action: 'reject' };
    assert.equal(value(text, 'gw_ai_guard_duration_seconds_count', { ...failed, error_type: 'timeout' }), 1);
    assert.equal(value(text, 'gw_ai_guard_duration_seconds_count', { ...failed, error_type: '500' }), 1);
    assert.equal(
      value(text, 'gw_ai_guard_duration_seconds_bucket', { ...failed, error_type: 'timeout', le: '0.25' }),
      0,
      'the timed-out call took its 300 ms',
    );

    await gw.telemetry.otlp.flush();
    const spans = collector.spans.filter((span) => span.name === 'guard request[0].alphaModeration');
    assert.equal(spans.length, 4);
    const [rejected, slow, timedOut, error500] = spans.sort((a, b) =>
      BigInt(a.startTimeUnixNano) < BigInt(b.startTimeUnixNano) ? -1 : 1,
    ) as [OtlpSpan, OtlpSpan, OtlpSpan, OtlpSpan];
    assert.deepEqual(attributes(rejected)['gw.ai.guard.matched'], ['hate']);
    assert.equal(attributes(rejected)['gw.ai.guard.action'], 'reject');
    assert.ok(rejected.status?.code === undefined || rejected.status.code === 0, 'a rejection is no error');
    assert.ok(spanMs(slow) >= 100, `the span covers the service's 100 ms: ${spanMs(slow)}`);
    assert.equal(attributes(timedOut)['error.type'], 'timeout');
    assert.ok(spanMs(timedOut) >= 290, `the span covers the 300 ms deadline: ${spanMs(timedOut)}`);
    assert.equal(timedOut.status?.code, 2, 'ERROR');
    assert.match(String(timedOut.status?.message), /OpenAI moderation did not answer within 300 ms/);
    assert.equal(attributes(error500)['error.type'], '500');
    assert.match(String(error500.status?.message), /answered HTTP 500/);
    const everything = collector.bodies.join('');
    assert.ok(!everything.includes('hateful') && !everything.includes(MODERATION_KEY), 'no prompt, no key');
  });
});
