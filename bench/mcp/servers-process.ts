// Child process: MCP servers built with @modelcontextprotocol/sdk over Streamable HTTP, each on
// its own port on 127.0.0.1, in their own process so that they share no event loop with gw or
// the load generator. argv[2] is a ServersSpec (JSON); the ports go to the parent over IPC, and
// the process runs until the parent disconnects.
//
//   list: `count` stateful servers with `tools` tools each; tools/list waits `delayMs` first.
//   call: one server with tool `echo`; `stateless` makes a server per request (no session), else
//         one server per session; `json` answers with JSON bodies instead of SSE streams.
import { randomUUID } from 'node:crypto';
import { createServer, type Server as HttpServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { CallToolRequestSchema, ListToolsRequestSchema, type Tool } from '@modelcontextprotocol/sdk/types.js';
import type { ServersSpec } from './servers.ts';

/** Sessions a stateful server keeps; the oldest is closed past it (the benchmark opens a few). */
const MAX_SESSIONS = 64;

function toolsOf(server: number, count: number): Tool[] {
  return Array.from({ length: count }, (_, n) => ({
    name: `tool_${n}`,
    description: `Tool ${n} of server ${server}: looks a record up by id and returns it with its history.`,
    inputSchema: {
      type: 'object',
      properties: {
        id: { type: 'string', description: 'The record id' },
        limit: { type: 'integer', minimum: 1, maximum: 100, description: 'Most history entries returned' },
        verbose: { type: 'boolean', description: 'Include every field' },
      },
      required: ['id'],
    },
  }));
}

const ECHO: Tool = {
  name: 'echo',
  description: 'Returns its arguments',
  inputSchema: { type: 'object', properties: { text: { type: 'string' } } },
};

function mcpServer(name: string, tools: Tool[], listDelayMs: number): Server {
  const server = new Server({ name, version: '1.0.0' }, { capabilities: { tools: {} } });
  server.setRequestHandler(ListToolsRequestSchema, async () => {
    if (listDelayMs > 0) await sleep(listDelayMs);
    return { tools };
  });
  server.setRequestHandler(CallToolRequestSchema, async (request) => ({
    content: [{ type: 'text', text: `${request.params.name}: ${JSON.stringify(request.params.arguments ?? {})}` }],
  }));
  return server;
}

async function readJson(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return chunks.length === 0 ? undefined : JSON.parse(Buffer.concat(chunks).toString('utf8'));
}

/** One MCP server on its own HTTP port at /mcp. */
async function serve(
  makeServer: () => Server,
  options: { stateless: boolean; json: boolean },
): Promise<{ http: HttpServer; port: number }> {
  const sessions = new Map<string, StreamableHTTPServerTransport>();
  const http = createServer(async (req, res) => {
    try {
      if (req.url !== '/mcp') return void res.writeHead(404).end();
      const body = req.method === 'POST' ? await readJson(req) : undefined;
      if (options.stateless) {
        const transport = new StreamableHTTPServerTransport({
          sessionIdGenerator: undefined,
          enableJsonResponse: options.json,
        });
        res.once('close', () => void transport.close());
        await makeServer().connect(transport);
        return void (await transport.handleRequest(req, res, body));
      }
      const id = req.headers['mcp-session-id'];
      if (typeof id === 'string') {
        const transport = sessions.get(id);
        if (!transport) return void res.writeHead(404).end();
        return void (await transport.handleRequest(req, res, body));
      }
      if (req.method !== 'POST') return void res.writeHead(400).end();
      const transport = new StreamableHTTPServerTransport({
        sessionIdGenerator: () => randomUUID(),
        enableJsonResponse: options.json,
        onsessioninitialized: (sessionId) => {
          sessions.set(sessionId, transport);
          if (sessions.size > MAX_SESSIONS) {
            const [oldest, old] = sessions.entries().next().value as [string, StreamableHTTPServerTransport];
            sessions.delete(oldest);
            void old.close();
          }
        },
        onsessionclosed: (sessionId) => void sessions.delete(sessionId),
      });
      await makeServer().connect(transport);
      await transport.handleRequest(req, res, body);
    } catch {
      if (!res.headersSent) res.writeHead(500).end();
    }
  });
  // Keep-alive connections stay open between the benchmark's phases.
  http.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  return { http, port: (http.address() as AddressInfo).port };
}

const spec = JSON.parse(process.argv[2] ?? '{}') as ServersSpec;
const started =
  spec.role === 'list'
    ? await Promise.all(
        Array.from({ length: spec.count }, (_, n) => {
          const tools = toolsOf(n, spec.tools);
          return serve(() => mcpServer(`list-${n}`, tools, spec.delayMs), { stateless: false, json: false });
        }),
      )
    : [await serve(() => mcpServer('call', [ECHO], 0), { stateless: spec.stateless, json: spec.json })];

const shutDown = () => {
  for (const { http } of started) http.closeAllConnections();
  Promise.all(started.map(({ http }) => new Promise((resolve) => http.close(resolve)))).finally(() => process.exit(0));
};
process.on('disconnect', shutDown);
process.on('SIGTERM', shutDown);
process.send!({ ports: started.map(({ port }) => port) });
