// Usage, gen_ai telemetry and token rate limits for every provider family and every client format
// (issue 20): one gw in front of one scripted stand-in per family (test/helpers/family-matrix.ts),
// each answering in its own wire format with the same usage (11 input tokens of which 4 cached, 7
// output of which 3 reasoning where the format carries them). For each family × client format,
// whole and streamed: the client gets the usage in its own format, the access log line has the
// vendor's gen_ai.provider.name, the request and response models and the token counts, and the
// gen_ai_client_token_usage histogram grows by them. Then a local tokens limit (18 a minute, a
// policy per route rule) charges a streamed answer's usage, and the next request is refused 429 in
// the client's own format, never reaching the provider.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import {
  answeringModel,
  CLIENT_FORMATS,
  type ClientFormat,
  loggedPath,
  logLineAfter,
  type MatrixRule,
  matrixRoutesYaml,
  send,
  sseEvents,
  TARGET_RULES,
  TARGETS,
  type Target,
} from '../../helpers/family-matrix.ts';
import { freePort, gatewayYaml, startTestGateway, type TestGateway } from '../../helpers/gateway.ts';
import { SCRIPTED_USAGE, type ScriptedProvider, startScriptedProvider } from '../../helpers/scripted-provider.ts';

const U = SCRIPTED_USAGE;

// biome-ignore lint/suspicious/noExplicitAny: answers are read field by field, each checked
type Json = Record<string, any>;

/** The sum of gen_ai_client_token_usage for a vendor and token type. */
function tokenSum(gw: TestGateway, vendor: string, type: 'input' | 'output'): number {
  let sum = 0;
  for (const line of gw.telemetry.metrics.render().split('\n')) {
    if (!line.startsWith('gen_ai_client_token_usage_sum{')) continue;
    if (!line.includes(`gen_ai_provider_name="${vendor}"`) || !line.includes(`gen_ai_token_type="${type}"`)) continue;
    sum += Number(line.slice(line.lastIndexOf(' ') + 1));
  }
  return sum;
}

/** The usage the client was told, in gw's terms (input counts cached tokens). */
function clientUsage(format: ClientFormat, stream: boolean, text: string): { input: number; output: number } {
  if (!stream) return usageOfBody(format, JSON.parse(text));
  const events = sseEvents(text).filter((event) => event.data !== '[DONE]');
  const payloads = events.map((event) => JSON.parse(event.data) as Json);
  switch (format) {
    case 'completions':
      return usageOfBody(
        format,
        payloads.findLast((chunk) => chunk.usage),
      );
    case 'responses':
      return usageOfBody(format, payloads.find((event) => event.type === 'response.completed')?.response);
    case 'gemini':
      return usageOfBody(
        format,
        payloads.findLast((chunk) => chunk.usageMetadata),
      );
    case 'messages': {
      const start = payloads.find((event) => event.type === 'message_start')?.message.usage;
      const delta = payloads.findLast((event) => event.type === 'message_delta')?.usage;
      return {
        input:
          (delta?.input_tokens ?? start.input_tokens) +
          (delta?.cache_read_input_tokens ?? start.cache_read_input_tokens ?? 0),
        output: delta.output_tokens,
      };
    }
  }
}

function usageOfBody(format: ClientFormat, body: Json | undefined): { input: number; output: number } {
  assert.ok(body, 'the answer carries usage');
  switch (format) {
    case 'completions':
      return { input: body.usage.prompt_tokens, output: body.usage.completion_tokens };
    case 'responses':
      return { input: body.usage.input_tokens, output: body.usage.output_tokens };
    case 'messages':
      return {
        input: body.usage.input_tokens + (body.usage.cache_read_input_tokens ?? 0),
        output: body.usage.output_tokens,
      };
    case 'gemini':
      return {
        input: body.usageMetadata.promptTokenCount,
        output: body.usageMetadata.candidatesTokenCount + (body.usageMetadata.thoughtsTokenCount ?? 0),
      };
  }
}

interface Matrix {
  gw: TestGateway;
  provider: ScriptedProvider;
  base: string;
}

/** gw in front of the stand-in, with every target, `rules` more rules, and `more` resources. */
async function startMatrix(rules: readonly MatrixRule[] = [], more = ''): Promise<Matrix> {
  const provider = await startScriptedProvider();
  const port = await freePort();
  // A GwModel is attached to the extra rules that serve it.
  const sections = (target: Target) => rules.filter((rule) => rule.target === target).map((rule) => rule.name);
  const gw = await startTestGateway({
    'gateway.yaml': [
      gatewayYaml(port),
      ...TARGETS.map((target) => target.yaml(provider.port, sections(target))),
      matrixRoutesYaml([...TARGET_RULES, ...rules]),
      more,
    ].join(''),
  });
  return { gw, provider, base: `http://127.0.0.1:${port}` };
}

describe('usage and gen_ai telemetry of every family, in every client format', () => {
  let matrix: Matrix;
  before(async () => {
    matrix = await startMatrix();
  });
  after(async () => {
    await matrix?.gw.stop();
    await matrix?.provider.close();
  });

  for (const target of TARGETS) {
    for (const format of CLIENT_FORMATS) {
      for (const stream of [false, true]) {
        it(`${target.name} (${target.vendor}) ← ${format}${stream ? ', streamed' : ''}`, async () => {
          const { gw, provider } = matrix;
          const from = gw.accessLog.length;
          const sent = provider.requests.length;
          const before = { input: tokenSum(gw, target.vendor, 'input'), output: tokenSum(gw, target.vendor, 'output') };
          const response = await send(matrix.base, target, format, stream);
          const text = await response.text();
          assert.equal(response.status, 200, `${text}\n${gw.logs.join('\n')}`);
          const upstream = provider.requests[sent];
          assert.ok(upstream, 'the provider was asked');
          assert.equal(
            upstream.format,
            target.wire(format),
            `${target.name} speaks ${upstream.format} at ${upstream.path}`,
          );
          assert.equal(upstream.stream, stream);
          assert.deepEqual(clientUsage(format, stream, text), { input: U.input, output: U.output });

          const log = await logLineAfter(gw, from, loggedPath(target, format, stream));
          assert.equal(log['http.response.status_code'], 200);
          assert.equal(log['gen_ai.provider.name'], target.vendor);
          assert.equal(log['gen_ai.request.model'], target.model);
          // Converse names no model: gw reports the one it asked for.
          const responseModel =
            upstream.format === 'converse' ? target.upstreamModel : answeringModel(target.upstreamModel);
          assert.equal(log['gen_ai.response.model'], responseModel);
          assert.equal(log['gen_ai.usage.input_tokens'], U.input);
          assert.equal(log['gen_ai.usage.output_tokens'], U.output);
          assert.equal(log['gen_ai.usage.cache_read.input_tokens'], U.cached);
          // Anthropic and Bedrock report no reasoning count.
          const reasons = upstream.format !== 'messages' && upstream.format !== 'converse';
          assert.equal(log['gen_ai.usage.reasoning_tokens'], reasons ? U.reasoning : undefined);
          assert.equal(log['gw.ai.streaming'], stream);

          assert.equal(tokenSum(gw, target.vendor, 'input') - before.input, U.input);
          assert.equal(tokenSum(gw, target.vendor, 'output') - before.output, U.output);
        });
      }
    }
  }
});

const TOKENS_PER_MINUTE = U.total;

/**
 * A rule per target and client format, each with its own tokens limit (its own bucket); a
 * GwModel's serves only it (it alone is attached to the rule).
 */
const LIMITED_RULES: MatrixRule[] = TARGETS.flatMap((target) =>
  CLIENT_FORMATS.map((format) => {
    const name = `rl-${target.name}-${format}`;
    return { name, prefix: `/${name}`, target };
  }),
);

function limitPolicyYaml(rule: MatrixRule): string {
  return `apiVersion: gw.dev/v1alpha1
kind: GwPolicy
metadata: {name: ${rule.name}}
spec:
  targetRefs: [{group: gateway.networking.k8s.io, kind: HTTPRoute, name: ${rule.name}}]
  traffic:
    rateLimit: {local: [{tokens: ${TOKENS_PER_MINUTE}, unit: Minutes}]}
---
`;
}

/** A 429 in the client's own error format. */
function assertRateLimited(format: ClientFormat, body: Json): void {
  switch (format) {
    case 'completions':
    case 'responses':
      assert.equal(typeof body.error?.message, 'string', JSON.stringify(body));
      assert.equal(body.error.type, 'requests');
      assert.equal(body.error.code, 'rate_limit_exceeded');
      return;
    case 'messages':
      assert.equal(body.type, 'error', JSON.stringify(body));
      assert.equal(body.error.type, 'rate_limit_error');
      assert.equal(typeof body.error.message, 'string');
      return;
    case 'gemini':
      assert.equal(body.error?.code, 429, JSON.stringify(body));
      assert.equal(body.error.status, 'RESOURCE_EXHAUSTED');
      assert.equal(typeof body.error.message, 'string');
      return;
  }
}

describe('a local tokens limit charges the usage of every family, and refuses in every client format', () => {
  let matrix: Matrix;
  before(async () => {
    matrix = await startMatrix(LIMITED_RULES, LIMITED_RULES.map(limitPolicyYaml).join(''));
  });
  after(async () => {
    await matrix?.gw.stop();
    await matrix?.provider.close();
  });

  for (const rule of LIMITED_RULES) {
    const format = CLIENT_FORMATS.find((name) => rule.name.endsWith(`-${name}`))!;
    it(`${rule.target.name} ← ${format}: a streamed answer's ${U.total} tokens are charged, the next request is refused`, async () => {
      const { gw, provider } = matrix;
      const first = await send(matrix.base, rule.target, format, true, rule.prefix);
      await first.text();
      assert.equal(first.status, 200, gw.logs.join('\n'));
      assert.equal(first.headers.get('x-ratelimit-limit'), String(TOKENS_PER_MINUTE));
      const sent = provider.requests.length;
      const refused = await send(matrix.base, rule.target, format, false, rule.prefix);
      const text = await refused.text();
      assert.equal(refused.status, 429, text);
      assert.equal(refused.headers.get('x-ratelimit-remaining'), '0');
      assert.ok(Number(refused.headers.get('retry-after')) >= 1);
      assertRateLimited(format, JSON.parse(text));
      assert.equal(provider.requests.length, sent, 'the refused request never reached the provider');
    });
  }
});
