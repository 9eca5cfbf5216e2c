// A backend policy's tcp.keepalive and tls.keyExchangeGroups through gw, for each kind of
// backend that connects with them: an HTTP route (undici), an LLM provider (gw's HTTP/1.1 client)
// and an MCP target. The TLS upstream accepts only X25519MLKEM768: a policy offering it is
// served, one offering other groups fails the handshake (503, as any connection gw cannot make).
// Keepalive is read back from the kernel for the connection gw opened; a value the kernel cannot
// take is refused when the configuration is compiled (500 naming the field).
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it, type TestContext } from 'node:test';
import type { TLSSocket } from 'node:tls';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { request } from 'undici';
import {
  aiBackendYaml,
  freePort,
  gatewayYaml,
  llmRouteYaml,
  ownFailureDetail,
  startTestGateway,
  type TestGateway,
} from '../../helpers/gateway.ts';
import { prefixRouteYaml, staticBackendYaml } from '../../helpers/policy-yaml.ts';
import { keepaliveReadbackUnavailable, socketKeepalive } from '../../helpers/socket-keepalive.ts';
import { echoTools, mcpYaml, streamableClient } from '../mcp/helpers.ts';
import { BACKEND_CERT, TEST_CA } from '../upstream/upstream-servers.ts';

const MATCHING = '{caCertificateRefs: [{name: ca}], keyExchangeGroups: [X25519_MLKEM768]}';
const OTHER_GROUPS = '{caCertificateRefs: [{name: ca}], keyExchangeGroups: [X25519, P-256, P-384]}';
const KEEPALIVE = '{keepalive: {time: 7s, interval: 3s, retries: 4}}';

interface TlsUpstream {
  server: Server;
  port: number;
  /** gw's port of each connection whose handshake succeeded, in order. */
  clientPorts: number[];
}

/**
 * An HTTPS upstream accepting only the X25519MLKEM768 group: an OpenAI-style chat completion at
 * /v1/chat/completions, an MCP server (stateless, JSON answers) at /mcp, its path elsewhere.
 */
async function tlsUpstream(): Promise<TlsUpstream> {
  const clientPorts: number[] = [];
  const server = createServer({ ...BACKEND_CERT, ecdhCurve: 'X25519MLKEM768' }, async (req, res) => {
    if (req.url === '/mcp') {
      const transport = new StreamableHTTPServerTransport({
        sessionIdGenerator: undefined,
        enableJsonResponse: true,
      });
      const mcp = new McpServer({ name: 'tls-target', version: '1.0.0' });
      echoTools('tls-target')(mcp);
      await mcp.connect(transport);
      res.once('close', () => void transport.close());
      return void (await transport.handleRequest(req, res));
    }
    req.resume();
    res.setHeader('content-type', 'application/json');
    if (req.url === '/v1/chat/completions')
      return void res.end(
        JSON.stringify({
          id: 'chatcmpl-1',
          object: 'chat.completion',
          created: 1,
          model: 'gpt-test',
          choices: [{ index: 0, message: { role: 'assistant', content: 'hello' }, finish_reason: 'stop' }],
          usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 },
        }),
      );
    res.end(JSON.stringify({ path: req.url }));
  });
  server.on('secureConnection', (socket: TLSSocket) => clientPorts.push(socket.remotePort ?? 0));
  server.on('tlsClientError', () => undefined);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, port: (server.address() as AddressInfo).port, clientPorts };
}

function aiBackend(name: string, port: number, tls: string, tcp?: string): string {
  const routes = '{/v1/chat/completions: Completions}';
  const extra = `    tls: ${tls}\n${tcp ? `    tcp: ${tcp}\n` : ''}`;
  return aiBackendYaml(name, port, 'alpha: {}', 'sk-upstream', routes).replace('---\n', `${extra}---\n`);
}

async function get(port: number, path: string): Promise<{ status: number; body: string }> {
  const response = await request(`http://127.0.0.1:${port}${path}`);
  return { status: response.statusCode, body: await response.body.text() };
}

async function chat(port: number, backend: string): Promise<{ status: number; body: string }> {
  const response = await request(`http://127.0.0.1:${port}/${backend}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'gpt-test', messages: [{ role: 'user', content: 'hi' }] }),
  });
  return { status: response.statusCode, body: await response.body.text() };
}

describe('backend connection settings through gw', () => {
  let upstream: TlsUpstream;
  let gw: TestGateway;
  let port: number;

  before(async () => {
    upstream = await tlsUpstream();
    port = await freePort();
    const web = (name: string, policies: string) =>
      staticBackendYaml(name, upstream.port, policies) + prefixRouteYaml(name, { backend: name });
    gw = await startTestGateway({
      'gw.yaml': `${gatewayYaml(port)}apiVersion: v1
kind: ConfigMap
metadata: {name: ca}
data: {ca.crt: ${JSON.stringify(TEST_CA)}}
---
${web('web-match', `{tls: ${MATCHING}, tcp: ${KEEPALIVE}}`)}${web('web-other-groups', `{tls: ${OTHER_GROUPS}}`)}${web(
  'web-sub-second-keepalive',
  `{tls: ${MATCHING}, tcp: {keepalive: {time: 500ms}}}`,
)}${aiBackend('llm-match', upstream.port, MATCHING, KEEPALIVE)}${aiBackend(
  'llm-other-groups',
  upstream.port,
  OTHER_GROUPS,
)}${llmRouteYaml(['llm-match', 'llm-other-groups'])}---
${mcpYaml(
  [
    { name: 'match', port: upstream.port, path: '/mcp', policies: `{tls: ${MATCHING}, tcp: ${KEEPALIVE}}` },
    { name: 'other', port: upstream.port, path: '/mcp', policies: `{tls: ${OTHER_GROUPS}}` },
  ],
  { failureMode: 'FailOpen' },
)}`,
    });
  });

  after(async () => {
    await gw?.stop();
    upstream?.server.close();
  });

  const skipReadback = keepaliveReadbackUnavailable();
  /**
   * Asserts that gw opened a connection to the upstream after the first `before` ones, with the
   * configured keepalive (the last connection the upstream accepted).
   */
  const assertNewConnectionKeepalive = async (t: TestContext, before: number) => {
    assert.ok(upstream.clientPorts.length > before, 'gw opened no new connection to the upstream');
    if (skipReadback) return void t.diagnostic(`keepalive not read back: ${skipReadback}`);
    assert.deepEqual(await socketKeepalive(upstream.clientPorts.at(-1)!), {
      enabled: true,
      idleSeconds: 7,
      intervalSeconds: 3,
      probes: 4,
    });
  };

  it('HTTP route: served with the upstream’s group, 503 without it; keepalive on the socket', async (t) => {
    const connections = upstream.clientPorts.length;
    const served = await get(port, '/web-match/x');
    assert.equal(served.status, 200, served.body);
    assert.deepEqual(JSON.parse(served.body), { path: '/web-match/x' });
    await assertNewConnectionKeepalive(t, connections);
    const refused = await get(port, '/web-other-groups/x');
    assert.equal(refused.status, 503, refused.body);
  });

  it('LLM provider: served with the upstream’s group, 503 without it; keepalive on the socket', async (t) => {
    const served = await chat(port, 'llm-match');
    assert.equal(served.status, 200, served.body);
    assert.equal(JSON.parse(served.body).choices[0].message.content, 'hello');
    // The HTTP route's backend has the same connection settings: one pool of gw's HTTP/1.1 client
    // serves both, so the provider request may take the connection the route's test opened (the
    // last the upstream accepted) rather than a new one. Either way, it carries the keepalive.
    await assertNewConnectionKeepalive(t, 0);
    const refused = await chat(port, 'llm-other-groups');
    assert.equal(refused.status, 503, refused.body);
  });

  it('MCP targets: the one offering the upstream’s group is served, the other left out; keepalive on the socket', async (t) => {
    const connections = upstream.clientPorts.length;
    const { client } = await streamableClient(new URL(`http://127.0.0.1:${port}/mcp`));
    try {
      await assertNewConnectionKeepalive(t, connections);
      const tools = (await client.listTools()).tools.map((tool) => tool.name).sort();
      assert.deepEqual(tools, ['match_echo', 'match_only-tls-target']);
    } finally {
      await client.close();
    }
  });

  it('refuses a keepalive time the kernel cannot take: 500 naming the field', async () => {
    const refused = await fetch(`http://127.0.0.1:${port}/web-sub-second-keepalive/x`);
    assert.equal(refused.status, 500);
    assert.match(
      await ownFailureDetail(gw, refused),
      /tcp\.keepalive\.time: 500ms is not a whole number of seconds from 1s to 32767s/,
    );
  });
});
