// How gw reaches its targets: Services chosen by a selector (one target per MCP port, followed as
// Services come and go) and static backendRefs to a Service; per-target backend policies (auth);
// the client's headers passed on while the MCP transport's own are gw's; and protocol version
// negotiation (the lowest common version, gw's newest for a version it does not know).
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { request } from 'undici';
import { freePort, gatewayYaml, startTestGateway, type TestGateway } from '../../helpers/gateway.ts';
import { eventually } from '../../helpers/until.ts';
import {
  echoTools,
  firstText,
  type McpGateway,
  startMcpGateway,
  startStreamableServer,
  streamableClient,
  type TestMcpServer,
} from './helpers.ts';

function serviceYaml(name: string, port: number, labels: string, annotations = ''): string {
  return `apiVersion: v1
kind: Service
metadata: {name: ${name}, labels: {${labels}}${annotations ? `, annotations: {${annotations}}` : ''}}
spec: {clusterIP: 127.0.0.1, ports: [{name: mcp, port: ${port}, appProtocol: gw.dev/mcp}]}
---
`;
}

const ROUTE = `apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: mcp}
spec:
  parentRefs: [{name: ai}]
  rules: [{backendRefs: [{group: gw.dev, kind: GwBackend, name: tools}]}]
`;

describe('MCP targets', () => {
  let alpha: TestMcpServer;
  let beta: TestMcpServer;
  let gamma: TestMcpServer;
  const stops: (() => Promise<void>)[] = [];

  before(async () => {
    alpha = await startStreamableServer(echoTools('alpha'));
    beta = await startStreamableServer(echoTools('beta'));
    gamma = await startStreamableServer(echoTools('gamma'), { path: '/v2/mcp' });
  });
  after(async () => {
    for (const stop of stops) await stop();
    await alpha.close();
    await beta.close();
    await gamma.close();
  });

  it('follows the Services a selector chooses, and reaches a static backendRef Service', async () => {
    const port = await freePort();
    const backend = `apiVersion: gw.dev/v1alpha1
kind: GwBackend
metadata: {name: tools}
spec:
  mcp:
    targets:
      - name: pinned
        static: {backendRef: {name: pinned-svc}, port: ${alpha.port}}
      - name: found
        selector: {services: {matchLabels: {role: mcp}}}
---
`;
    const files = (services: string) => ({
      'gw.yaml': gatewayYaml(port) + backend + ROUTE,
      'services.yaml': services,
    });
    const initial = serviceYaml('pinned-svc', alpha.port, 'role: none') + serviceYaml('beta', beta.port, 'role: mcp');
    const gw: TestGateway = await startTestGateway(files(initial));
    stops.push(() => gw.stop());
    const url = new URL(`http://127.0.0.1:${port}/mcp`);
    const toolsNow = async () => {
      const { client } = await streamableClient(url);
      try {
        return (await client.listTools()).tools
          .map((tool) => tool.name)
          .filter((name) => name.includes('echo'))
          .sort();
      } finally {
        await client.close();
      }
    };
    assert.deepEqual(await toolsNow(), ['beta-mcp_echo', 'pinned_echo']);
    // A second Service starts matching (named by its annotation, at the path its annotation gives).
    gw.write(
      'services.yaml',
      initial + serviceYaml('gamma', gamma.port, 'role: mcp', 'gw.dev/mcp-path: /v2/mcp, gw.dev/mcp-target-name: gm'),
    );
    await eventually('gamma joins', async () => (await toolsNow()).includes('gm_echo'));
    assert.deepEqual(await toolsNow(), ['beta-mcp_echo', 'gm_echo', 'pinned_echo']);
    const { client } = await streamableClient(url);
    try {
      assert.equal(firstText(await client.callTool({ name: 'gm_echo', arguments: { text: 'g' } })), 'gamma: g');
    } finally {
      await client.close();
    }
    // beta stops matching.
    gw.write(
      'services.yaml',
      serviceYaml('pinned-svc', alpha.port, 'role: none') +
        serviceYaml('beta', beta.port, 'role: gone') +
        serviceYaml('gamma', gamma.port, 'role: mcp', 'gw.dev/mcp-path: /v2/mcp, gw.dev/mcp-target-name: gm'),
    );
    await eventually('beta leaves', async () => !(await toolsNow()).includes('beta-mcp_echo'));
  });

  it("applies a target's own backend auth and passes the client's headers, never its session id", async () => {
    const gateway: McpGateway = await startMcpGateway([
      { name: 'alpha', port: alpha.port, policies: '{auth: {key: target-secret}}' },
      { name: 'beta', port: beta.port },
    ]);
    stops.push(() => gateway.stop());
    const { client, transport } = await streamableClient(gateway.url);
    try {
      await client.callTool({ name: 'alpha_echo', arguments: { text: 'x' } });
      await client.callTool({ name: 'beta_echo', arguments: { text: 'x' } });
      const atAlpha = alpha.seen.at(-1)!.headers;
      const atBeta = beta.seen.at(-1)!.headers;
      assert.equal(atAlpha.authorization, 'Bearer target-secret');
      assert.equal(atBeta.authorization, undefined);
      assert.notEqual(atAlpha['mcp-session-id'], transport.sessionId);
      assert.ok(atAlpha['mcp-session-id'] && alpha.sessions.has(atAlpha['mcp-session-id'] as string));
      assert.equal(atAlpha['mcp-protocol-version'], '2025-11-25');
      assert.equal(atAlpha['x-forwarded-for'], '127.0.0.1');
    } finally {
      await client.close();
    }
    const custom = await request(gateway.url, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        'x-tenant': 'blue',
      },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 0,
        method: 'initialize',
        params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
      }),
    });
    assert.equal(custom.statusCode, 200);
    await custom.body.dump();
    assert.equal(beta.seen.at(-1)!.headers['x-tenant'], 'blue');
  });

  it('negotiates the lowest common protocol version, and its newest for versions it does not know', async () => {
    const gateway = await startMcpGateway([
      { name: 'alpha', port: alpha.port },
      { name: 'beta', port: beta.port },
    ]);
    stops.push(() => gateway.stop());
    const initialize = async (version: string) => {
      const response = await request(gateway.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
        body: JSON.stringify({
          jsonrpc: '2.0',
          id: 1,
          method: 'initialize',
          params: { protocolVersion: version, capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
        }),
      });
      return ((await response.body.json()) as { result: { protocolVersion: string } }).result.protocolVersion;
    };
    assert.equal(await initialize('2025-03-26'), '2025-03-26');
    assert.equal(alpha.seen.at(-1)!.headers['mcp-protocol-version'], '2025-03-26'); // initialized, at that version
    assert.equal(await initialize('2025-06-18'), '2025-06-18');
    assert.equal(await initialize('2099-01-01'), '2025-11-25');
  });
});
