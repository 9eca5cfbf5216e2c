// Nothing accepted and ignored (issue 16), with real traffic through gw and the official OpenAI SDK:
// a Gateway-level policy reaches GwModels attached to the Gateway; a GwModel's authorization is
// enforced; fields the data plane does not implement or cannot use (webhook prompt guards, a
// tunnel to a proxy of another namespace, in a provider's own policies too, unserved provider
// families, backend policies a kind cannot apply) answer 500 and nothing reaches the provider,
// while `gw status` names the field on the object that carries it; a rule's backend with passive
// health is skipped while evicted. Each case failed before: the request got 200 and reached the provider.
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import { after, before, describe, it } from 'node:test';
import OpenAI from 'openai';
import { statusOf } from '../../helpers/cli.ts';
import {
  freePort,
  gatewayYaml,
  loggedFailure,
  ownFailureDetail,
  startTestGateway,
  type TestGateway,
  webRouteYaml,
} from '../../helpers/gateway.ts';
import { startOpenAiMock } from '../../support/providers/openai-mock.ts';

type OpenAiMock = Awaited<ReturnType<typeof startOpenAiMock>>;

const CHAT = { model: 'gpt-4o-mini', messages: [{ role: 'user' as const, content: 'hello' }] };

/** A GwModel `name` on `parent` (YAML flow mapping of a parentRef) served by the OpenAI mock. */
function modelYaml(name: string, parent: string, port: number, more = ''): string {
  return `apiVersion: gw.dev/v1alpha1
kind: GwModel
metadata: {name: ${name}}
spec:
  parentRefs: [${parent}]
  provider: Alpha
  baseURL: http://127.0.0.1:${port}/v1
  policies:
    auth: {key: sk-upstream}
${more}---
`;
}

async function expectStatus(promise: Promise<unknown>, status: number, message?: RegExp): Promise<void> {
  await assert.rejects(promise, (error: unknown) => {
    assert.ok(error instanceof OpenAI.APIError, String(error));
    assert.equal(error.status, status);
    if (message) assert.match(String(error.message), message);
    return true;
  });
}

/** A 5xx of gw's own through the OpenAI SDK: the client reads a request id; the log has `detail` under it. */
async function expectOwnFailure(gw: TestGateway, promise: Promise<unknown>, status: number, detail: RegExp) {
  const error = await promise.then(
    () => assert.fail('expected an error'),
    (error: unknown) => error,
  );
  assert.ok(error instanceof OpenAI.APIError, String(error));
  assert.equal(error.status, status);
  const id = error.headers?.get('x-request-id');
  assert.ok(id, 'the answer carries x-request-id');
  assert.match(error.message, new RegExp(`gw could not serve this request.*${id}`));
  const logged = await loggedFailure(gw, id);
  assert.match(logged, detail);
  assert.ok(!error.message.includes(logged));
}

describe('a Gateway-level policy reaches the GwModels attached to the Gateway', () => {
  let provider: OpenAiMock;
  let gw: TestGateway;
  let port: number;

  before(async () => {
    provider = await startOpenAiMock({ apiKey: 'sk-upstream' });
    port = await freePort();
    gw = await startTestGateway({
      'gateway.yaml': `${gatewayYaml(port)}apiVersion: v1
kind: Secret
metadata: {name: client-keys}
stringData: {team: sk-team}
---
apiVersion: gw.dev/v1alpha1
kind: GwPolicy
metadata: {name: keys-and-limits}
spec:
  targetRefs: [{group: gateway.networking.k8s.io, kind: Gateway, name: ai}]
  traffic:
    apiKeyAuthentication: {secretRef: {name: client-keys}}
    rateLimit: {local: [{requests: 1, unit: Minutes}]}
---
${modelYaml('gpt-4o-mini', '{name: ai}', provider.port)}`,
    });
  });

  after(async () => {
    await gw?.stop();
    await provider?.close();
  });

  it('a request without a key is refused 401 and reaches no provider; the rate limit holds', async () => {
    const anonymous = new OpenAI({ apiKey: 'not-a-key', baseURL: `http://127.0.0.1:${port}/v1`, maxRetries: 0 });
    const team = new OpenAI({ apiKey: 'sk-team', baseURL: `http://127.0.0.1:${port}/v1`, maxRetries: 0 });
    const served = await team.chat.completions.create(CHAT);
    assert.equal(served.choices[0]!.message.content, 'echo: hello');
    const before = provider.requests.length;
    await expectStatus(anonymous.chat.completions.create(CHAT), 401);
    await expectStatus(team.chat.completions.create(CHAT), 429);
    assert.equal(provider.requests.length, before, 'nothing reached the provider');
  });
});

describe('fields the data plane does not implement are refused, never ignored', () => {
  let provider: OpenAiMock;
  let gw: TestGateway;
  let client: OpenAI;
  let modelsClient: OpenAI;
  let port: number;

  before(async () => {
    provider = await startOpenAiMock({ apiKey: 'sk-upstream' });
    port = await freePort();
    const upstream = `host: 127.0.0.1, port: ${provider.port}`;
    const route = (name: string, backend: string) => `    - matches: [{path: {type: PathPrefix, value: /${name}}}]
      filters: [{type: URLRewrite, urlRewrite: {path: {type: ReplacePrefixMatch, replacePrefixMatch: /}}}]
      backendRefs: [{group: gw.dev, kind: GwBackend, name: ${backend}}]
`;
    const aiBackend = (name: string, spec: string, policies = '') => `apiVersion: gw.dev/v1alpha1
kind: GwBackend
metadata: {name: ${name}}
spec:
${spec}
  policies:
    auth: {key: sk-upstream}
    ai: {routes: {/v1/chat/completions: Completions}${policies}}
---
`;
    // An ai spec of one priority group with provider primary (and its own `policies`, when given).
    const primaryGroup = (policies?: string) => `  ai:
    groups:
      - providers:
          - name: primary
            ${upstream.replace(', ', '\n            ')}
            alpha: {}${policies ? `\n            policies: ${policies}` : ''}`;
    gw = await startTestGateway({
      'gateway.yaml': `${gatewayYaml(port)}${aiBackend('plain', primaryGroup())}${aiBackend(
        'guarded',
        `  ai: {provider: {${upstream}, alpha: {}}}`,
        ', promptGuard: {request: [{webhook: {backendRef: {name: guard, port: 80}}}]}',
      )}${aiBackend('cached', `  ai: {provider: {${upstream}, alpha: {}}}`, ', promptCaching: {}')}${aiBackend(
        'moderated',
        `  ai: {provider: {${upstream}, alpha: {moderation: {policy: {input: {mode: Block}}}}}}`,
      )}${aiBackend(
        'grouped',
        primaryGroup('{tunnel: {backendRef: {name: proxy, namespace: elsewhere, port: 3128}}}'),
      )}${aiBackend(
        'sectioned',
        primaryGroup(),
      )}${aiBackend('echo', `  ai: {provider: {${upstream}, alpha: {}}}`)}apiVersion: gw.dev/v1alpha1
kind: GwBackend
metadata: {name: agents}
spec: {dynamicForwardProxy: {}, policies: {health: {eviction: {duration: 10s}}}}
---
apiVersion: gw.dev/v1alpha1
kind: GwPolicy
metadata: {name: provider-transformation}
spec:
  targetRefs: [{group: gw.dev, kind: GwBackend, name: plain, sectionName: primary}]
  backend: {transformation: {request: {set: [{name: x-team, value: '"a"'}]}}}
---
apiVersion: gw.dev/v1alpha1
kind: GwPolicy
metadata: {name: provider-tunnel}
spec:
  targetRefs: [{group: gw.dev, kind: GwBackend, name: sectioned, sectionName: primary}]
  backend: {tunnel: {backendRef: {name: proxy, namespace: elsewhere, port: 3128}}}
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: llm}
spec:
  parentRefs: [{name: ai}]
  rules:
${route('plain', 'plain')}${route('guarded', 'guarded')}${route('cached', 'cached')}${route('moderated', 'moderated')}${route('grouped', 'grouped')}${route('sectioned', 'sectioned')}${route('agents', 'agents')}    - matches: [{path: {type: PathPrefix, value: /echo}}]
      filters:
        - {type: URLRewrite, urlRewrite: {path: {type: ReplacePrefixMatch, replacePrefixMatch: /}}}
        - {type: ResponseHeaderModifier, responseHeaderModifier: {set: [{name: x-served-by, value: gw}]}}
      backendRefs: [{group: gw.dev, kind: GwBackend, name: echo}]
    - name: models
      matches: [{path: {type: PathPrefix, value: /models}}]
      filters: [{type: ResponseHeaderModifier, responseHeaderModifier: {set: [{name: x-served-by, value: gw-models}]}}]
      backendRefs: [{group: gw.dev, kind: GwModel, name: '*'}]
---
${modelYaml(
  'allowed-only',
  '{kind: HTTPRoute, name: llm, sectionName: models}',
  provider.port,
  '    authorization: {policy: {matchExpressions: [\'request.headers["x-team"] == "blue"\']}}\n',
)}${modelYaml(
  'tunnelled',
  '{kind: HTTPRoute, name: llm, sectionName: models}',
  provider.port,
  '    tunnel: {backendRef: {name: proxy, namespace: elsewhere, port: 3128}}\n',
)}${modelYaml(
  'prompt-guarded',
  '{kind: HTTPRoute, name: llm, sectionName: models}',
  provider.port,
  '    promptGuard: {request: [{alphaModeration: {policies: {tunnel: {backendRef: {name: proxy, namespace: elsewhere, port: 3128}}}}}]}\n',
)}`,
    });
    client = new OpenAI({ apiKey: 'client', baseURL: `http://127.0.0.1:${port}`, maxRetries: 0 });
    modelsClient = new OpenAI({ apiKey: 'client', baseURL: `http://127.0.0.1:${port}/models/v1`, maxRetries: 0 });
  });

  after(async () => {
    await gw?.stop();
    await provider?.close();
  });

  /** Asks `path` for a completion: answered `status` (with `message`) and nothing reached the provider. */
  async function refused(path: string, status: number, message: RegExp, body = CHAT): Promise<void> {
    const before = provider.requests.length;
    await expectOwnFailure(gw, client.post(`${path}/v1/chat/completions`, { body }), status, message);
    assert.equal(provider.requests.length, before, `nothing of ${path} reached the provider`);
  }

  it('a webhook prompt guard whose Service does not exist: 500 naming it, and the prompt never reaches the provider', async () => {
    const ssn = { ...CHAT, messages: [{ role: 'user' as const, content: 'my SSN is 078-05-1120' }] };
    await refused(
      '/guarded',
      500,
      /ai\.promptGuard\.request\[0\]\.webhook\.backendRef: Service default\/guard is not available/,
      ssn,
    );
    assert.ok(!provider.requests.some((request) => JSON.stringify(request.body).includes('078-05-1120')));
  });

  it('inline OpenAI moderation (input: Block): the provider is asked to moderate, and an answer without results fails closed (503)', async () => {
    const error = await client.post('/moderated/v1/chat/completions', { body: CHAT }).then(
      () => assert.fail('not refused'),
      (failure: unknown) => failure,
    );
    assert.ok(error instanceof OpenAI.APIError, String(error));
    assert.equal(error.status, 503);
    assert.deepEqual(provider.requests.at(-1)?.body, {
      ...CHAT,
      moderation: { model: 'omni-moderation-latest', policy: { input: { mode: 'block' } } },
    });
  });

  it('prompt caching on an OpenAI provider: served, with the body as the client sent it (OpenAI caches by itself)', async () => {
    const before = provider.requests.length;
    const answer = await client.post('/cached/v1/chat/completions', { body: CHAT });
    assert.ok(answer);
    assert.equal(provider.requests.length, before + 1);
    assert.deepEqual(provider.requests.at(-1)?.body, CHAT);
  });

  it("a provider's own tunnel (inline, or a GwPolicy naming the provider): 500", async () => {
    await refused(
      '/grouped',
      500,
      /providers\[0\]\.policies\.tunnel\.backendRef\.namespace: An endpoint reference resolves only/,
    );
    await refused(
      '/sectioned',
      500,
      /backend policy of primary backend\.tunnel\.backendRef\.namespace: An endpoint reference/,
    );
  });

  it("a provider's own transformation (a GwPolicy naming the provider) is applied to its requests", async () => {
    const plain = new OpenAI({ apiKey: 'client', baseURL: `http://127.0.0.1:${port}/plain/v1`, maxRetries: 0 });
    await plain.chat.completions.create(CHAT);
    assert.equal(provider.requests.at(-1)?.headers['x-team'], 'a');
  });

  it('a backend policy its kind cannot apply (health on a dynamic forward proxy): 500 naming it', async () => {
    await refused('/agents', 500, /spec\.policies\.health: A dynamic forward proxy's destination changes/);
  });

  it('an HTTPRoute ResponseHeaderModifier filter applies to AI and GwModel responses', async () => {
    const echo = new OpenAI({ apiKey: 'client', baseURL: `http://127.0.0.1:${port}/echo/v1`, maxRetries: 0 });
    const ai = await echo.chat.completions.create(CHAT).withResponse();
    assert.equal(ai.response.headers.get('x-served-by'), 'gw');
    const model = await modelsClient.chat.completions
      .create({ ...CHAT, model: 'allowed-only' }, { headers: { 'x-team': 'blue' } })
      .withResponse();
    assert.equal(model.response.headers.get('x-served-by'), 'gw-models');
  });

  it("a GwModel's authorization: 403 unless its rule holds", async () => {
    const model = { ...CHAT, model: 'allowed-only' };
    const before = provider.requests.length;
    await expectStatus(modelsClient.chat.completions.create(model), 403);
    assert.equal(provider.requests.length, before);
    const allowed = await modelsClient.chat.completions.create(model, { headers: { 'x-team': 'blue' } });
    assert.equal(allowed.choices[0]!.message.content, 'echo: hello');
  });

  it("a GwModel's tunnel and prompt guard: 500 naming the field", async () => {
    for (const [model, field] of [
      ['tunnelled', 'spec.policies.tunnel.backendRef.namespace'],
      [
        'prompt-guarded',
        'spec.policies.promptGuard.request\\[0\\].alphaModeration.policies.tunnel.backendRef.namespace',
      ],
    ] as const) {
      const before = provider.requests.length;
      await expectOwnFailure(gw, modelsClient.chat.completions.create({ ...CHAT, model }), 500, new RegExp(field));
      assert.equal(provider.requests.length, before);
    }
  });

  it('gw status names each refused field on the object that carries it', async () => {
    assert.match(
      await statusOf(gw.dir, 'GwBackend default/guarded'),
      /ResolvedRefs=False \(RefNotFound\): spec\.policies\.ai\.promptGuard\.request\[0\]\.webhook\.backendRef: Service default\/guard does not exist/,
    );
    assert.match(
      await statusOf(gw.dir, 'GwBackend default/agents'),
      /Accepted=False \(Unsupported\): spec\.policies\.health/,
    );
    assert.match(
      await statusOf(gw.dir, 'GwBackend default/grouped'),
      /Accepted=False \(Unsupported\): spec\.ai\.groups\[0\]\.providers\[0\]\.policies\.tunnel/,
    );
    assert.match(
      await statusOf(gw.dir, 'GwPolicy default/provider-tunnel'),
      /Accepted=False \(Unsupported\): The data plane refuses spec\.backend\.tunnel\.backendRef\.namespace \(at HTTPRoute default\/llm rule 5 backend GwBackend default\/sectioned section primary\)/,
    );
    assert.match(
      await statusOf(gw.dir, 'GwModel default/tunnelled'),
      /Accepted=False \(Unsupported\):.*spec\.policies\.tunnel/,
    );
    assert.match(await statusOf(gw.dir, 'HTTPRoute default/llm'), /ResolvedRefs=False \(BackendNotAccepted\)/);
  });
});

describe('a listener whose PreRouting policy has a refused field', () => {
  let gw: TestGateway;
  let port: number;
  let hits = 0;
  let upstream: Server;

  before(async () => {
    upstream = createServer((_request, response) => {
      hits++;
      response.end('upstream');
    });
    await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
    port = await freePort();
    gw = await startTestGateway({
      'gateway.yaml': `${gatewayYaml(port)}${webRouteYaml((upstream.address() as { port: number }).port)}---
apiVersion: gw.dev/v1alpha1
kind: GwPolicy
metadata: {name: edge-auth}
spec:
  targetRefs: [{group: gateway.networking.k8s.io, kind: Gateway, name: ai}]
  traffic:
    phase: PreRouting
    extAuth: {backendRef: {name: authz, namespace: security, port: 9000}, grpc: {}}
`,
    });
  });

  after(async () => {
    await gw?.stop();
    upstream?.close();
  });

  it('answers 500 naming the field, reaches nothing, and the listener and Gateway are Programmed False', async () => {
    const response = await fetch(`http://127.0.0.1:${port}/`);
    assert.equal(response.status, 500);
    assert.match(await ownFailureDetail(gw, response), /traffic\.extAuth\.backendRef\.namespace/);
    assert.equal(hits, 0);
    const status = await statusOf(gw.dir, 'Gateway default/ai');
    assert.match(
      status,
      /^ {2}Programmed=False \(Invalid\): listener http cannot be served: traffic\.extAuth\.backendRef\.namespace/m,
    );
    assert.match(status, /^ {4}Programmed=False \(Invalid\): traffic\.extAuth\.backendRef\.namespace/m);
  });
});

describe('a rule skips its evicted backend (health on static backends)', () => {
  let healthy: Server;
  let failing: Server;
  const hits = { healthy: 0, failing: 0 };
  let gw: TestGateway;
  let port: number;

  before(async () => {
    const listen = async (name: keyof typeof hits, status: number) => {
      const server = createServer((_request, response) => {
        hits[name]++;
        response.writeHead(status).end(name);
      });
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      return server;
    };
    healthy = await listen('healthy', 200);
    failing = await listen('failing', 503);
    port = await freePort();
    const backend = (name: string, server: Server) => `apiVersion: gw.dev/v1alpha1
kind: GwBackend
metadata: {name: ${name}}
spec:
  static: {host: 127.0.0.1, port: ${(server.address() as { port: number }).port}}
  policies: {health: {eviction: {consecutiveFailures: 1, duration: 60s}}}
---
`;
    gw = await startTestGateway({
      'gateway.yaml': `${gatewayYaml(port)}${backend('healthy', healthy)}${backend('failing', failing)}apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: web}
spec:
  parentRefs: [{name: ai}]
  rules:
    - backendRefs:
        - {group: gw.dev, kind: GwBackend, name: healthy, weight: 1}
        - {group: gw.dev, kind: GwBackend, name: failing, weight: 1}
`,
    });
  });

  after(async () => {
    await gw?.stop();
    healthy?.close();
    failing?.close();
  });

  it('once the failing backend answered 503 it is evicted: the next requests all go to the healthy one', async () => {
    // Until the failing backend has been picked once (weights are equal: it comes quickly).
    for (let i = 0; i < 100 && hits.failing === 0; i++) await fetch(`http://127.0.0.1:${port}/`);
    assert.equal(hits.failing, 1, 'the failing backend answered once');
    const statuses = [];
    for (let i = 0; i < 40; i++) statuses.push((await fetch(`http://127.0.0.1:${port}/`)).status);
    assert.deepEqual(new Set(statuses), new Set([200]));
    assert.equal(hits.failing, 1, 'the evicted backend got no further request');
  });
});
