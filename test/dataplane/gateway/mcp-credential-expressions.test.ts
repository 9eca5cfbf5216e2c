// Backend auth expressions on an MCP target read the client's request: a token exchange whose
// additionalParams take a header of the MCP client's request, through gw with the MCP SDK's
// client. Before, MCP targets gave backend auth no CEL variables, and such an expression
// rejected every call.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { freePort, gatewayYaml, startTestGateway, type TestGateway } from '../../helpers/gateway.ts';
import { type AuthorizationServer, startAuthorizationServer } from '../backend-auth/oauth-server.ts';
import { echoTools, mcpYaml, startStreamableServer, type TestMcpServer } from '../mcp/helpers.ts';

describe('a token exchange on an MCP target with an expression over the client request', () => {
  let authServer: AuthorizationServer;
  let tools: TestMcpServer;
  let gw: TestGateway;
  let port: number;

  before(async () => {
    authServer = await startAuthorizationServer([]);
    tools = await startStreamableServer(echoTools('tools'));
    port = await freePort();
    const auth = `{auth: {oauthTokenExchange: {url: "${authServer.url}", path: /token, additionalParams: {tenant: 'request.headers["x-tenant"]'}}}}`;
    gw = await startTestGateway({
      'gateway.yaml': `${gatewayYaml(port)}${mcpYaml([{ name: 'exchanged', port: tools.port, policies: auth }])}`,
    });
  });

  after(async () => {
    await gw?.stop();
    await tools?.close();
    await authServer?.close();
  });

  it("exchanges the client's token with the parameter the expression read from its request", async () => {
    const client = new Client({ name: 'test-client', version: '1.0.0' });
    const transport = new StreamableHTTPClientTransport(new URL(`http://127.0.0.1:${port}/mcp`), {
      requestInit: { headers: { authorization: 'Bearer alice-token', 'x-tenant': 'acme' } },
    });
    await client.connect(transport);
    try {
      const result = await client.callTool({ name: 'echo', arguments: { text: 'hello' } });
      assert.deepEqual(result.content, [{ type: 'text', text: 'tools: hello' }]);
    } finally {
      await client.close();
    }
    assert.ok(authServer.requests.length > 0);
    for (const request of authServer.requests) {
      assert.equal(request.form.get('subject_token'), 'alice-token');
      assert.equal(request.form.get('tenant'), 'acme');
    }
    assert.ok(tools.seen.length > 0);
    for (const seen of tools.seen) assert.match(String(seen.headers.authorization), /^Bearer exchanged-\d+$/);
  });
});
