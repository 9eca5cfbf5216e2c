// traffic.rateLimit.global end to end: gw in-process calls a real gRPC rate limit service built
// in the test on the same protos (Envoy's RateLimitService), which counts hits per descriptor
// the way envoyproxy/ratelimit does (every call adds its hits; over the limit when the count
// passes it).
import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, it } from 'node:test';
import type * as grpc from '@grpc/grpc-js';
import OpenAI from 'openai';
import { loadProto } from '../../../src/dataplane/policies/grpc/client.ts';
import type {
  RateLimitRequestMessage,
  RateLimitResponseMessage,
} from '../../../src/dataplane/policies/rate-limit/global.ts';
import { gatewayYaml, refusedPort, type TestGateway } from '../../helpers/gateway.ts';
import { type GrpcTestServer, startGrpcServer } from '../../helpers/grpc-server.ts';
import { type LlmGateway, startLlmGateway } from '../../helpers/llm-gateway.ts';
import { indentYaml, prefixRouteYaml, staticBackendYaml, trafficPolicyYaml } from '../../helpers/policy-yaml.ts';
import type { RecordingUpstream } from '../../helpers/recording-upstream.ts';
import { until } from '../../helpers/until.ts';
import { startUpstreamGateway, type UpstreamGateway } from '../../helpers/upstream-gateway.ts';

/** A request as the service decodes it (an unset hits_addend wrapper is null). */
interface ReceivedRequest extends Omit<RateLimitRequestMessage, 'descriptors'> {
  descriptors: {
    entries: { key: string; value: string }[];
    limit: { requests_per_unit: number; unit: string } | null;
    hits_addend: { value: number } | null;
  }[];
}

interface RateLimitService extends GrpcTestServer {
  requests: ReceivedRequest[];
  counts: Map<string, number>;
}

/** Descriptor keys as the service counts them: "key=value,key=value". */
function descriptorKey(descriptor: ReceivedRequest['descriptors'][number]): string {
  return descriptor.entries.map((entry) => `${entry.key}=${entry.value}`).join(',');
}

async function startRateLimitService(limitOf: (key: string) => number): Promise<RateLimitService> {
  const proto = loadProto('envoy/service/ratelimit/v3/rls.proto') as unknown as {
    envoy: { service: { ratelimit: { v3: { RateLimitService: grpc.ServiceClientConstructor } } } };
  };
  const requests: ReceivedRequest[] = [];
  const counts = new Map<string, number>();
  const server = await startGrpcServer(proto.envoy.service.ratelimit.v3.RateLimitService.service, {
    ShouldRateLimit: (
      call: grpc.ServerUnaryCall<ReceivedRequest, RateLimitResponseMessage>,
      callback: grpc.sendUnaryData<RateLimitResponseMessage>,
    ) => {
      const request = call.request;
      requests.push(request);
      let over = false;
      const statuses = request.descriptors.map((descriptor) => {
        const key = descriptorKey(descriptor);
        const hits = descriptor.hits_addend ? descriptor.hits_addend.value : request.hits_addend || 1;
        const limit = descriptor.limit ? descriptor.limit.requests_per_unit : limitOf(key);
        const used = (counts.get(key) ?? 0) + hits;
        counts.set(key, used);
        const code = used > limit ? 'OVER_LIMIT' : 'OK';
        if (code === 'OVER_LIMIT') over = true;
        return {
          code,
          current_limit: { requests_per_unit: limit, unit: 'MINUTE', name: key },
          limit_remaining: Math.max(0, limit - used),
          duration_until_reset: { seconds: 30, nanos: 0 },
        };
      });
      callback(null, {
        overall_code: over ? 'OVER_LIMIT' : 'OK',
        statuses,
        response_headers_to_add: [{ key: 'x-rls', value: over ? 'over' : 'ok' }],
        request_headers_to_add: [{ key: 'x-rls-checked', value: 'yes' }],
        raw_body: over ? Buffer.from('slow down') : Buffer.alloc(0),
      });
    },
  });
  return { ...server, requests, counts };
}

/** GwPolicy `route` on HTTPRoute `route` whose traffic.rateLimit.global is `global` (YAML). */
function globalLimitYaml(route: string, global: string): string {
  return trafficPolicyYaml(route, route, `rateLimit:\n  global:\n${indentYaml(global, 4)}`);
}

describe('global rate limits', () => {
  let rls: RateLimitService;
  let g: UpstreamGateway;
  let upstream: RecordingUpstream;
  let gw: TestGateway;
  const get = (path: string, headers: Record<string, string> = {}) => fetch(`${g.base}${path}`, { headers });

  before(async () => {
    rls = await startRateLimitService(() => 3);
    const downPort = await refusedPort();
    const service = (url: string, more = '') => `url: ${url}
domain: gw-test
${more}descriptors:
  - entries: [{name: client, expression: 'request.headers["x-client"]'}]
  - entries: [{name: route, expression: '"limited"'}, {name: method, expression: request.method}]
    cost: '2'
    limitOverride: '{"unit": "minute", "requestsPerUnit": 100}'
`;
    g = await startUpstreamGateway(({ port, upstreamPort }) => ({
      'gateway.yaml': `${gatewayYaml(port)}${staticBackendYaml('web', upstreamPort)}${['limited', 'closed', 'open', 'skipped'].map((name) => prefixRouteYaml(name)).join('')}`,
      'policies.yaml':
        globalLimitYaml('limited', service(`http://127.0.0.1:${rls.port}`)) +
        globalLimitYaml('closed', service(`http://127.0.0.1:${downPort}`)) +
        globalLimitYaml('open', service(`http://127.0.0.1:${downPort}`, 'failureMode: FailOpen\n')) +
        globalLimitYaml(
          'skipped',
          `url: http://127.0.0.1:${rls.port}
domain: gw-test
descriptors:
  - entries: [{name: user, expression: 'jwt.sub'}]`,
        ),
    }));
    ({ gw, upstream } = g);
  });

  beforeEach(() => {
    rls.requests.length = 0;
  });

  after(async () => {
    await g?.stop();
    await rls?.close();
  });

  it('sends the domain, each descriptor with its hits and limit override, and passes the answer on', async () => {
    const response = await get('/limited', { 'x-client': 'a' });
    assert.equal(response.status, 200, gw.logs.join('\n'));
    await response.text();
    assert.equal(rls.requests.length, 1);
    const request = rls.requests[0]!;
    assert.equal(request.domain, 'gw-test');
    assert.deepEqual(
      request.descriptors.map((d) => ({ entries: d.entries, limit: d.limit, hits: d.hits_addend })),
      [
        { entries: [{ key: 'client', value: 'a' }], limit: null, hits: { value: 1 } },
        {
          entries: [
            { key: 'route', value: 'limited' },
            { key: 'method', value: 'GET' },
          ],
          limit: { requests_per_unit: 100, unit: 'MINUTE' },
          hits: { value: 2 },
        },
      ],
    );
    assert.equal(request.hits_addend, 0, 'different costs: each descriptor carries its own');
    // The service's request header reached the upstream; its response header and the most
    // constrained status (client a: 1 of 3 used) reached the client.
    assert.equal(upstream.last().headers['x-rls-checked'], 'yes');
    assert.equal(response.headers.get('x-rls'), 'ok');
    assert.equal(response.headers.get('x-ratelimit-limit'), '3');
    assert.equal(response.headers.get('x-ratelimit-remaining'), '2');
    assert.equal(response.headers.get('x-ratelimit-reset'), '30');
  });

  it('answers 429 with the service headers and body when it says OVER_LIMIT', async () => {
    for (let i = 0; i < 2; i++) {
      const response = await get('/limited', { 'x-client': 'b' });
      assert.equal(response.status, 200);
      await response.text();
    }
    const third = await get('/limited', { 'x-client': 'b' });
    assert.equal(third.status, 200, 'the third of three is still allowed');
    await third.text();
    const forwarded = upstream.seen.length;
    const over = await get('/limited', { 'x-client': 'b' });
    assert.equal(over.status, 429);
    assert.equal(await over.text(), 'slow down');
    assert.equal(over.headers.get('x-rls'), 'over');
    assert.equal(over.headers.get('retry-after'), '30');
    assert.equal(over.headers.get('x-ratelimit-limit'), '3');
    assert.equal(over.headers.get('x-ratelimit-remaining'), '0');
    assert.equal(upstream.seen.length, forwarded, 'the refused request never reached the upstream');
  });

  it('skips a descriptor whose expression fails, and calls nobody when none is left', async () => {
    const response = await get('/limited');
    assert.equal(response.status, 200);
    await response.text();
    assert.equal(rls.requests.length, 1);
    const request = rls.requests[0]!;
    assert.deepEqual(
      request.descriptors.map(descriptorKey),
      ['route=limited,method=GET'],
      'no x-client header: the client descriptor is left out',
    );
    assert.equal(request.hits_addend, 2, 'one cost: also sent as the request-level hits_addend');

    const unauthenticated = await get('/skipped');
    assert.equal(unauthenticated.status, 200);
    await unauthenticated.text();
    assert.equal(rls.requests.length, 1, 'jwt.sub does not exist: no call at all');
  });

  it('answers 500 when the service cannot be reached with FailClosed, and forwards with FailOpen', async () => {
    const closed = await get('/closed', { 'x-client': 'c' });
    assert.equal(closed.status, 500);
    assert.equal(await closed.text(), 'rate limit service unavailable\n');
    assert.ok(
      await until(() => gw.accessLog.some((line) => line.includes('rate limit service failed')), 2000),
      'the access log says why',
    );
    const open = await get('/open', { 'x-client': 'c' });
    assert.equal(open.status, 200);
    await open.text();
  });
});

describe('global tokens limits on an LLM route', () => {
  let rls: RateLimitService;
  let llm: LlmGateway;

  before(async () => {
    rls = await startRateLimitService(() => 6);
    llm = await startLlmGateway(
      globalLimitYaml(
        'llm',
        `url: http://127.0.0.1:${rls.port}
domain: llm
descriptors:
  - entries: [{name: budget, expression: '"total"'}]
    unit: Tokens
  - entries: [{name: budget, expression: '"output"'}]
    unit: Tokens
    cost: llm.outputTokens`,
      ),
    );
  });

  after(async () => {
    await llm?.stop();
    await rls?.close();
  });

  const ask = () =>
    llm.client.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hello there' }] });

  it('checks with 0 hits before forwarding, charges the tokens used after completion, then is refused', async () => {
    const first = await ask();
    assert.equal(first.usage?.total_tokens, 5, llm.gw.logs.join('\n'));
    assert.ok(await until(() => rls.requests.length === 2, 2000), 'the charge follows the completion');
    const [check, charge] = rls.requests;
    assert.deepEqual(
      check!.descriptors.map((d) => [descriptorKey(d), d.hits_addend]),
      [
        ['budget=total', { value: 0 }],
        ['budget=output', { value: 0 }],
      ],
    );
    assert.deepEqual(
      charge!.descriptors.map((d) => [descriptorKey(d), d.hits_addend]),
      [
        ['budget=total', { value: 5 }],
        ['budget=output', { value: 3 }],
      ],
      'total tokens by default, the cost expression (output tokens) when set',
    );
    assert.equal(charge!.hits_addend, 0);

    await ask(); // 5 of 6 used: still allowed, and charged 5 more
    assert.ok(await until(() => rls.requests.length === 4, 2000));
    await assert.rejects(ask(), (error: unknown) => {
      assert.ok(error instanceof OpenAI.RateLimitError, String(error));
      return true;
    });
    assert.equal(llm.provider.requests.length, 2);
    assert.equal(rls.counts.get('budget=total'), 10);
  });
});
