// BackendMCP.guardrails end to end: gw in front of two SDK MCP servers, the SDK client, and real
// ExtMcp processors (gRPC servers) that record what they are asked and answer as each test says.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { refusedPort } from '../../helpers/gateway.ts';
import { echoTools, firstText, startStreamableServer, type TestMcpServer } from './helpers.ts';
import {
  clientWith,
  mutated,
  PASS,
  type PolicyGateway,
  refused,
  rpcError,
  type SeenCheck,
  startPolicyGateway,
  startProcessor,
  type TestProcessor,
} from './policies-helpers.ts';

type Processor = Record<string, unknown>;

function guardrails(...processors: Processor[]): Record<string, unknown> {
  return { mcp: { guardrails: { processors } } };
}

/** What a processor saw, as "phase method" lines. */
const seenLines = (processor: TestProcessor) => processor.seen.map((seen) => `${seen.phase} ${seen.method}`);

describe('MCP guardrails', () => {
  let alpha: TestMcpServer;
  let beta: TestMcpServer;
  const gateways: PolicyGateway[] = [];
  const processors: TestProcessor[] = [];

  before(async () => {
    alpha = await startStreamableServer(echoTools('alpha'));
    beta = await startStreamableServer(echoTools('beta'));
  });
  after(async () => {
    for (const gateway of gateways) await gateway.stop();
    for (const processor of processors) await processor.close();
    await alpha.close();
    await beta.close();
  });

  const processor = async (handlers: Parameters<typeof startProcessor>[0] = {}) => {
    const started = await startProcessor(handlers);
    processors.push(started);
    return started;
  };
  const gateway = async (policies: Record<string, unknown>, more = '') => {
    const started = await startPolicyGateway(
      [
        { name: 'alpha', port: alpha.port },
        { name: 'beta', port: beta.port },
      ],
      policies,
      more,
    );
    gateways.push(started);
    return started;
  };

  it('asks processors in order; the first rejection answers the client and stops the chain', async () => {
    const first = await processor({
      request: (seen) =>
        (seen.params as { name?: string }).name === 'echo'
          ? refused('PERMISSION_DENIED', 'echo is not for you', { rule: 'no-echo' })
          : PASS,
    });
    const second = await processor();
    const g = await gateway(
      guardrails(
        { remote: { url: first.url }, methods: { 'tools/call': 'Request' } },
        { remote: { url: second.url }, methods: { '*': 'Full' } },
      ),
    );
    const client = await clientWith(g.url);
    try {
      const targetCalls = () => alpha.seen.filter((seen) => seen.rpcMethod === 'tools/call').length;
      const before = targetCalls();
      second.seen.length = 0;
      let error: unknown;
      try {
        await client.callTool({ name: 'alpha_echo', arguments: { text: 'hi' } });
      } catch (caught) {
        error = caught;
      }
      assert.deepEqual(
        { code: (error as { code: number }).code, data: (error as { data: unknown }).data },
        { code: -32001, data: { rule: 'no-echo' } },
      );
      assert.match((error as Error).message, /echo is not for you/);
      // The processor saw the call as the target would: its own name, the target, the arguments.
      const asked = first.seen.at(-1)!;
      assert.deepEqual(
        { method: asked.method, serviceNames: asked.serviceNames, params: asked.params },
        { method: 'tools/call', serviceNames: ['alpha'], params: { name: 'echo', arguments: { text: 'hi' } } },
      );
      assert.deepEqual(seenLines(second), [], 'the second processor was not asked');
      assert.equal(targetCalls(), before, 'nothing reached the target');

      const allowed = await client.callTool({ name: 'beta_only-beta' });
      assert.equal(firstText(allowed), 'only beta');
      assert.deepEqual(seenLines(second), ['request tools/call', 'response tools/call']);
      assert.deepEqual(second.seen[0]!.serviceNames, ['beta']);
    } finally {
      await client.close();
    }
  });

  it('rewrites or rejects responses, and leaves errors alone', async () => {
    const checker = await processor({
      response: (seen) => {
        if (seen.method === 'tools/list') {
          const { tools } = seen.result as { tools: { name: string }[] };
          return mutated({ tools: tools.filter((tool) => tool.name.endsWith('_echo')) });
        }
        const text = (seen.result as { content: { text: string }[] }).content[0]!.text;
        if (text.includes('secret')) return refused('INVALID', 'the answer carries a secret');
        return mutated({ content: [{ type: 'text', text: text.toUpperCase() }] });
      },
    });
    const g = await gateway(
      guardrails({ remote: { url: checker.url }, methods: { 'tools/call': 'Response', 'tools/list': 'Response' } }),
    );
    const client = await clientWith(g.url);
    try {
      const tools = (await client.listTools()).tools.map((tool) => tool.name);
      assert.deepEqual(tools, ['alpha_echo', 'beta_echo']);
      // The list it saw is the merged one, named as the client sees it, from both targets.
      const listed = checker.seen.find((seen) => seen.method === 'tools/list')!;
      assert.deepEqual(listed.serviceNames, ['alpha', 'beta']);
      assert.deepEqual(
        (listed.result as { tools: { name: string }[] }).tools.map((tool) => tool.name),
        ['alpha_echo', 'alpha_only-alpha', 'beta_echo', 'beta_only-beta'],
      );
      assert.equal(
        firstText(await client.callTool({ name: 'alpha_echo', arguments: { text: 'quiet' } })),
        'ALPHA: QUIET',
      );
      const rejected = await rpcError(client.callTool({ name: 'alpha_echo', arguments: { text: 'secret' } }));
      assert.deepEqual(rejected, { code: -32600, message: 'MCP error -32600: the answer carries a secret' });
      const asked = checker.seen.length;
      await rpcError(client.callTool({ name: 'gamma_echo' }));
      assert.equal(checker.seen.length, asked, 'an error answer is not sent to the processor');
    } finally {
      await client.close();
    }
  });

  it('changes the request, the targets headers and CEL mcpGuardrails for authorization', async () => {
    const changer = await processor({
      request: (seen) => {
        if (seen.method === 'tools/list') return { pass: {}, metadata: { fields: { tier: { stringValue: 'free' } } } };
        const params = seen.params as { name: string; arguments?: { text?: string } };
        return {
          mutated: Buffer.from(JSON.stringify({ ...params, arguments: { text: `${params.arguments?.text}!` } })),
          header_mutation: { set: [{ key: 'X-Tenant', value: Buffer.from('acme') }], remove: ['x-drop'] },
          metadata: { fields: { tier: { stringValue: 'free' } } },
        };
      },
    });
    const g = await gateway({
      mcp: {
        authorization: {
          action: 'Deny',
          policy: { matchExpressions: ['mcpGuardrails.tier == "free"', 'mcp.tool.name.startsWith("only-")'] },
        },
        guardrails: { processors: [{ remote: { url: changer.url }, methods: { 'tools/*': 'Request' } }] },
      },
    });
    const client = await clientWith(g.url, { 'x-drop': 'gone' });
    try {
      assert.deepEqual(
        (await client.listTools()).tools.map((tool) => tool.name),
        ['alpha_echo', 'beta_echo'],
        'the free tier does not see only-* tools',
      );
      assert.equal(firstText(await client.callTool({ name: 'alpha_echo', arguments: { text: 'hi' } })), 'alpha: hi!');
      const call = alpha.seen.filter((seen) => seen.rpcMethod === 'tools/call').at(-1)!;
      assert.equal(call.headers['x-tenant'], 'acme');
      assert.equal(call.headers['x-drop'], undefined);
      const hidden = await rpcError(client.callTool({ name: 'alpha_only-alpha' }));
      assert.equal(hidden.code, -32602, 'refused by authorization, after the processor');
    } finally {
      await client.close();
    }
  });

  it('runs each processor only for the methods and phases its most specific key gives', async () => {
    const watcher = await processor();
    const g = await gateway(
      guardrails({
        remote: { url: watcher.url },
        methods: { '*': 'Request', 'tools/*': 'Off', '*/list': 'Full', 'tools/call': 'Response' },
      }),
    );
    const client = await clientWith(g.url);
    try {
      await client.listTools(); // tools/* (Off) beats */list
      await client.callTool({ name: 'alpha_echo', arguments: { text: 'x' } }); // exact: Response
      await client.listPrompts(); // */list: Full
      await client.getPrompt({ name: 'alpha_greet', arguments: { who: 'y' } }); // *: Request
      assert.deepEqual(seenLines(watcher), [
        'request initialize',
        'response tools/call',
        'request prompts/list',
        'response prompts/list',
        'request prompts/get',
      ]);
      const [initialize, , list, , get] = watcher.seen as SeenCheck[];
      assert.deepEqual(initialize!.serviceNames, ['alpha', 'beta']);
      assert.equal(list!.params, undefined, 'a fan-out sends no params');
      assert.deepEqual(get!.params, { name: 'greet', arguments: { who: 'y' } });
    } finally {
      await client.close();
    }
  });

  it('FailClosed refuses and FailOpen carries on when the processor cannot be asked or answers nonsense', async () => {
    const closedPort = await refusedPort();
    const silent = await processor({ request: () => new Promise(() => undefined) });
    const nonsense = await processor({ request: () => ({}) });
    const timeoutBackend = `apiVersion: gw.dev/v1alpha1
kind: GwBackend
metadata: {name: slow-guard}
spec:
  static: {host: 127.0.0.1, port: ${silent.port}}
  policies: {http: {requestTimeout: 300ms}}
`;
    const call = async (remote: Processor, more = '') => {
      const g = await gateway(guardrails({ remote, methods: { 'tools/call': 'Request' } }), more);
      const client = await clientWith(g.url);
      try {
        return await client
          .callTool({ name: 'alpha_echo', arguments: { text: 'x' } })
          .then((result) => ({ text: firstText(result) }))
          .catch((error: { code: number; message: string }) => ({ code: error.code, message: error.message }));
      } finally {
        await client.close();
      }
    };
    const unreachable = `http://127.0.0.1:${closedPort}`;
    assert.deepEqual(await call({ url: unreachable }), {
      code: -32603,
      message: 'MCP error -32603: the guardrail processor could not be asked (UNAVAILABLE)',
    });
    assert.deepEqual(await call({ url: unreachable, failureMode: 'FailOpen' }), { text: 'alpha: x' });
    const started = Date.now();
    assert.deepEqual(
      await call({ backendRef: { kind: 'GwBackend', group: 'gw.dev', name: 'slow-guard' } }, timeoutBackend),
      {
        code: -32603,
        message: 'MCP error -32603: the guardrail processor could not be asked (DEADLINE_EXCEEDED)',
      },
    );
    assert.ok(Date.now() - started < 5000, 'bounded by the endpoint backend requestTimeout');
    assert.deepEqual(await call({ url: nonsense.url }), {
      code: -32603,
      message: 'MCP error -32603: the guardrail processor answered without a result',
    });
    assert.deepEqual(await call({ url: nonsense.url, failureMode: 'FailOpen' }), { text: 'alpha: x' });
  });

  it('sends the headers the allow and deny lists let through, and metadata evaluated per call', async () => {
    const watcher = await processor();
    const g = await gateway(
      guardrails(
        {
          remote: {
            url: watcher.url,
            allowedRequestHeaders: ['X-Tenant', ':Authority', 'X-Secret'],
            disallowedRequestHeaders: ['x-secret'],
            metadata: {
              tenant: 'request.headers["x-tenant"]',
              tool: 'mcp.tool.name + "@" + mcp.tool.target',
              sum: '1 + 2',
              missing: 'request.headers["x-absent"]',
            },
          },
          methods: { 'tools/call': 'Request' },
        },
        { remote: { url: watcher.url, disallowedRequestHeaders: ['X-Secret'] }, methods: { 'tools/call': 'Response' } },
      ),
    );
    const client = await clientWith(g.url, { 'x-tenant': 'acme', 'x-secret': 's3cret', 'x-other': 'o' });
    try {
      await client.callTool({ name: 'beta_echo', arguments: { text: 'x' } });
      const [request, response] = watcher.seen.slice(-2) as [SeenCheck, SeenCheck];
      const authority = `127.0.0.1:${g.url.port}`;
      assert.deepEqual(request.headers, [
        [':authority', authority],
        ['x-tenant', 'acme'],
      ]);
      assert.deepEqual(request.metadata, { tenant: 'acme', tool: 'echo@beta', sum: 3 });
      assert.equal(response.phase, 'response');
      assert.equal(response.metadata, undefined, 'no metadata configured, none sent');
      // The response phase carries no headers (ExtMcp's McpResponse has none).
      assert.deepEqual(response.headers, []);
    } finally {
      await client.close();
    }
  });

  it('with an empty allow list sends every header and the pseudo-headers, except the denied ones', async () => {
    const watcher = await processor();
    const g = await gateway(
      guardrails({
        remote: { url: watcher.url, disallowedRequestHeaders: ['X-SECRET'] },
        methods: { 'tools/call': 'Request' },
      }),
    );
    const client = await clientWith(g.url, { 'x-tenant': 'acme', 'x-secret': 's3cret' });
    try {
      await client.callTool({ name: 'alpha_echo', arguments: { text: 'x' } });
      const headers = new Map(watcher.seen.at(-1)!.headers);
      assert.equal(headers.get(':method'), 'POST');
      assert.equal(headers.get(':path'), '/mcp');
      assert.equal(headers.get(':scheme'), 'http');
      assert.equal(headers.get(':authority'), `127.0.0.1:${g.url.port}`);
      assert.equal(headers.get('x-tenant'), 'acme');
      assert.ok(headers.has('mcp-session-id'));
      assert.equal(headers.has('x-secret'), false);
    } finally {
      await client.close();
    }
  });
});
