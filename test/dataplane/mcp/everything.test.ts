// gw in front of @modelcontextprotocol/server-everything (the reference server of every MCP
// feature) beside a second server: its tools, prompts, resource templates and completions work
// through the multiplexer, resource links it returns come back readable through gw, and its
// sampling, elicitation and roots requests reach the client. Lists of a paginating server merge
// page by page under one cursor.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import {
  CreateMessageRequestSchema,
  ElicitRequestSchema,
  ListRootsRequestSchema,
  ListToolsRequestSchema,
} from '@modelcontextprotocol/sdk/types.js';
import {
  echoTools,
  firstText,
  type McpGateway,
  startEverythingServer,
  startMcpGateway,
  startStreamableServer,
  streamableClient,
  type TestMcpServer,
} from './helpers.ts';

describe('MCP with server-everything', () => {
  let everything: TestMcpServer;
  let alpha: TestMcpServer;
  let paged: TestMcpServer;
  let gateway: McpGateway;

  before(async () => {
    everything = await startEverythingServer();
    alpha = await startStreamableServer(echoTools('alpha'));
    // Five tools, two per page, with its own opaque cursors.
    paged = await startStreamableServer(() => undefined, {
      factory: () => {
        const server = new Server({ name: 'paged', version: '1' }, { capabilities: { tools: {} } });
        server.setRequestHandler(ListToolsRequestSchema, async (request) => {
          const start = request.params?.cursor ? Number(request.params.cursor.slice(5)) : 0;
          const tools = [0, 1, 2, 3, 4]
            .slice(start, start + 2)
            .map((n) => ({ name: `t${n}`, inputSchema: { type: 'object' as const } }));
          return start + 2 < 5 ? { tools, nextCursor: `page-${start + 2}` } : { tools };
        });
        return server as never;
      },
    });
    gateway = await startMcpGateway([
      { name: 'everything', port: everything.port },
      { name: 'alpha', port: alpha.port },
      { name: 'paged', port: paged.port },
    ]);
  });
  after(async () => {
    await gateway.stop();
    await everything.close();
    await alpha.close();
    await paged.close();
  });

  it('serves tools, prompts, templates, completions and resource links of the reference server', async () => {
    const { client } = await streamableClient(gateway.url, { sampling: {}, elicitation: {}, roots: {} });
    client.setRequestHandler(CreateMessageRequestSchema, async (request) => ({
      role: 'assistant',
      content: { type: 'text', text: `sampled: ${(request.params.messages[0]!.content as { text: string }).text}` },
      model: 'test-model',
    }));
    client.setRequestHandler(ElicitRequestSchema, async () => ({ action: 'decline' }));
    client.setRequestHandler(ListRootsRequestSchema, async () => ({ roots: [{ uri: 'file:///srv', name: 'srv' }] }));
    try {
      const tools = new Set<string>();
      for (let cursor: string | undefined, page = 0; page < 10; page++) {
        const result = await client.listTools(cursor === undefined ? {} : { cursor });
        for (const tool of result.tools) tools.add(tool.name);
        cursor = result.nextCursor;
        if (cursor === undefined) break;
      }
      for (const name of ['everything_echo', 'everything_get-sum', 'everything_trigger-sampling-request', 'alpha_echo'])
        assert.ok(tools.has(name), `${name} is listed`);
      const sum = await client.callTool({ name: 'everything_get-sum', arguments: { a: 2, b: 3 } });
      assert.equal(firstText(sum), 'The sum of 2 and 3 is 5.');
      const sampled = await client.callTool({
        name: 'everything_trigger-sampling-request',
        arguments: { prompt: 'hello', maxTokens: 5 },
      });
      assert.match(JSON.stringify(sampled), /sampled: Resource trigger-sampling-request context: hello/);
      const roots = await client.callTool({ name: 'everything_get-roots-list' });
      assert.match(JSON.stringify(roots), /file:\/\/\/srv/);

      const templates = (await client.listResourceTemplates()).resourceTemplates.map((t) => t.uriTemplate);
      assert.ok(templates.includes('everything+demo://resource/dynamic/text/{resourceId}'), templates.join());
      const read = await client.readResource({ uri: 'everything+demo://resource/dynamic/text/2' });
      assert.equal(read.contents[0]!.uri, 'everything+demo://resource/dynamic/text/2');

      const links = await client.callTool({ name: 'everything_get-resource-links', arguments: { count: 2 } });
      const linked = (links.content as { type: string; uri?: string }[]).filter(
        (item) => item.type === 'resource_link',
      );
      assert.equal(linked.length, 2);
      for (const link of linked) {
        assert.match(link.uri!, /^everything\+demo:\/\//);
        const contents = (await client.readResource({ uri: link.uri! })).contents;
        assert.equal(contents[0]!.uri, link.uri);
      }

      const prompts = (await client.listPrompts()).prompts.map((prompt) => prompt.name);
      assert.ok(prompts.includes('everything_simple-prompt') && prompts.includes('alpha_greet'));
      const prompt = await client.getPrompt({
        name: 'everything_resource-prompt',
        arguments: { resourceType: 'Text', resourceId: '1' },
      });
      const embedded = prompt.messages.find((message) => message.content.type === 'resource');
      assert.match((embedded!.content as { resource: { uri: string } }).resource.uri, /^everything\+demo:\/\//);
      const completion = await client.complete({
        ref: { type: 'ref/prompt', name: 'everything_completable-prompt' },
        argument: { name: 'department', value: 'Eng' },
      });
      assert.deepEqual(completion.completion.values, ['Engineering']);
    } finally {
      await client.close();
    }
  });

  it('pages through a paginating target under gw cursors, with the other targets on the first page', async () => {
    const { client } = await streamableClient(gateway.url);
    try {
      const pages: string[][] = [];
      let cursor: string | undefined;
      do {
        const result = await client.listTools(cursor === undefined ? {} : { cursor });
        pages.push(result.tools.map((tool) => tool.name).filter((name) => !name.startsWith('everything_')));
        cursor = result.nextCursor;
        if (cursor !== undefined) assert.match(cursor, /^gw1\./);
      } while (cursor !== undefined && pages.length < 10);
      assert.deepEqual(pages, [
        ['alpha_echo', 'alpha_only-alpha', 'paged_t0', 'paged_t1'],
        ['paged_t2', 'paged_t3'],
        ['paged_t4'],
      ]);
    } finally {
      await client.close();
    }
  });
});
