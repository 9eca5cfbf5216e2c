// MCP servers and clients for the gateway's MCP tests: real @modelcontextprotocol/sdk servers over
// Streamable HTTP (stateful, stateless, JSON answers) and the legacy SSE transport on 127.0.0.1:0,
// the SDK's Client over both client transports, and the YAML of an `mcp` GwBackend behind gw.
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { SSEClientTransport } from '@modelcontextprotocol/sdk/client/sse.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { SSEServerTransport } from '@modelcontextprotocol/sdk/server/sse.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import type { ClientCapabilities } from '@modelcontextprotocol/sdk/types.js';
import { request } from 'undici';
import { z } from 'zod';
import { freePort, gatewayYaml, startTestGateway, type TestGateway } from '../../helpers/gateway.ts';

/** What a test server saw: each request's method, MCP method and headers. */
export interface SeenRequest {
  httpMethod: string;
  rpcMethod: string | undefined;
  headers: IncomingHttpHeaders;
}

export interface TestMcpServer {
  port: number;
  /** Live upstream sessions (Streamable HTTP stateful, SSE). */
  sessions: Map<string, { close(): Promise<void> }>;
  seen: SeenRequest[];
  /** Forgets every session, so that their ids get 404 (an expired session). */
  expireSessions(): void;
  close(): Promise<void>;
}

export interface ServerOptions {
  name?: string;
  /** No sessions: a transport per request (sessionIdGenerator undefined). */
  stateless?: boolean;
  /** Answer requests with JSON instead of SSE. */
  json?: boolean;
  path?: string;
  /** Makes each session's server (instead of a test server that `setup` fills). */
  factory?: () => McpServer;
}

async function readJson(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const text = Buffer.concat(chunks).toString('utf8');
  return text === '' ? undefined : JSON.parse(text);
}

async function listen(server: Server): Promise<number> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return (server.address() as AddressInfo).port;
}

async function closeServer(server: Server): Promise<void> {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
}

/** An SDK McpServer per session behind StreamableHTTPServerTransport; `setup` registers its tools and the rest. */
export async function startStreamableServer(
  setup: (server: McpServer) => void,
  options: ServerOptions = {},
): Promise<TestMcpServer> {
  const path = options.path ?? '/mcp';
  const sessions = new Map<string, StreamableHTTPServerTransport>();
  const seen: SeenRequest[] = [];
  const newServer = () => {
    if (options.factory) return options.factory();
    const server = new McpServer({ name: options.name ?? 'test', version: '1.0.0' }, { capabilities: { logging: {} } });
    setup(server);
    return server;
  };
  const http = createServer(async (req, res) => {
    try {
      if (req.url?.split('?')[0] !== path) return void res.writeHead(404).end();
      const body = req.method === 'POST' ? await readJson(req) : undefined;
      seen.push({ httpMethod: req.method!, rpcMethod: (body as { method?: string })?.method, headers: req.headers });
      if (options.stateless) {
        const transport = new StreamableHTTPServerTransport({
          sessionIdGenerator: undefined,
          enableJsonResponse: options.json,
        });
        await newServer().connect(transport);
        res.once('close', () => void transport.close());
        return void (await transport.handleRequest(req, res, body));
      }
      const id = req.headers['mcp-session-id'] as string | undefined;
      if (id !== undefined) {
        const transport = sessions.get(id);
        if (!transport) return void res.writeHead(404, { 'content-type': 'text/plain' }).end('Session not found');
        return void (await transport.handleRequest(req, res, body));
      }
      if (req.method !== 'POST') return void res.writeHead(400).end();
      const transport = new StreamableHTTPServerTransport({
        sessionIdGenerator: () => randomUUID(),
        enableJsonResponse: options.json,
        onsessioninitialized: (sessionId) => void sessions.set(sessionId, transport),
        onsessionclosed: (sessionId) => void sessions.delete(sessionId),
      });
      await newServer().connect(transport);
      await transport.handleRequest(req, res, body);
    } catch {
      if (!res.headersSent) res.writeHead(500).end();
    }
  });
  const port = await listen(http);
  return {
    port,
    sessions,
    seen,
    expireSessions: () => sessions.clear(),
    close: async () => {
      for (const transport of sessions.values()) await transport.close().catch(() => undefined);
      await closeServer(http);
    },
  };
}

/** An SDK McpServer per connection behind the legacy SSE transport: GET /sse, POST /messages?sessionId=. */
export async function startSseServer(
  setup: (server: McpServer) => void,
  options: ServerOptions = {},
): Promise<TestMcpServer> {
  const sessions = new Map<string, SSEServerTransport>();
  const seen: SeenRequest[] = [];
  const http = createServer(async (req, res) => {
    try {
      const url = new URL(req.url ?? '/', 'http://localhost');
      if (req.method === 'GET' && url.pathname === (options.path ?? '/sse')) {
        seen.push({ httpMethod: 'GET', rpcMethod: undefined, headers: req.headers });
        const transport = new SSEServerTransport('/messages', res);
        sessions.set(transport.sessionId, transport);
        res.once('close', () => sessions.delete(transport.sessionId));
        const server = new McpServer(
          { name: options.name ?? 'test', version: '1.0.0' },
          { capabilities: { logging: {} } },
        );
        setup(server);
        await server.connect(transport);
        return;
      }
      if (req.method === 'POST' && url.pathname === '/messages') {
        const body = await readJson(req);
        seen.push({ httpMethod: 'POST', rpcMethod: (body as { method?: string })?.method, headers: req.headers });
        const transport = sessions.get(url.searchParams.get('sessionId') ?? '');
        if (!transport) return void res.writeHead(404).end('unknown session');
        return void (await transport.handlePostMessage(req, res, body));
      }
      res.writeHead(404).end();
    } catch {
      if (!res.headersSent) res.writeHead(500).end();
    }
  });
  const port = await listen(http);
  return {
    port,
    sessions,
    seen,
    expireSessions: () => {
      for (const transport of sessions.values()) void transport.close();
      sessions.clear();
    },
    close: async () => {
      for (const transport of sessions.values()) await transport.close().catch(() => undefined);
      await closeServer(http);
    },
  };
}

/** @modelcontextprotocol/server-everything (the reference server of every MCP feature) over Streamable HTTP. */
export async function startEverythingServer(): Promise<TestMcpServer> {
  const { createServer: createEverything } = (await import(
    // @ts-expect-error: the package ships JavaScript without type declarations for this module
    '@modelcontextprotocol/server-everything/dist/server/index.js'
  )) as { createServer: () => { server: McpServer } };
  return startStreamableServer(() => undefined, { name: 'everything', factory: () => createEverything().server });
}

/** Registers tool `echo` (returns its text with the server's name) and prompt `greet`. */
export function echoTools(name: string): (server: McpServer) => void {
  return (server) => {
    server.registerTool('echo', { description: `echo of ${name}`, inputSchema: { text: z.string() } }, ({ text }) => ({
      content: [{ type: 'text', text: `${name}: ${text}` }],
    }));
    server.registerTool(`only-${name}`, { description: `a tool only ${name} has` }, () => ({
      content: [{ type: 'text', text: `only ${name}` }],
    }));
    server.registerPrompt(
      'greet',
      { description: `greeting of ${name}`, argsSchema: { who: z.string() } },
      ({ who }) => ({
        messages: [{ role: 'user', content: { type: 'text', text: `${name} greets ${who}` } }],
      }),
    );
    server.registerResource('readme', `memo://${name}/readme`, { mimeType: 'text/plain' }, (uri) => ({
      contents: [{ uri: uri.href, text: `readme of ${name}` }],
    }));
  };
}

export interface TargetYaml {
  name: string;
  port: number;
  protocol?: 'StreamableHTTP' | 'SSE';
  path?: string;
  /** Inline McpTarget.policies (YAML flow mapping). */
  policies?: string;
}

export interface BackendYamlOptions {
  prefixMode?: 'Conditional' | 'Always' | 'Never';
  failureMode?: 'FailClosed' | 'FailOpen';
  sessionRouting?: 'Stateful' | 'Stateless';
}

/** GwBackend tools with `targets` on 127.0.0.1 and HTTPRoute mcp sending everything to it. */
export function mcpYaml(targets: readonly TargetYaml[], options: BackendYamlOptions = {}): string {
  const list = targets
    .map((target) => {
      const fields = [
        'host: 127.0.0.1',
        `port: ${target.port}`,
        target.protocol ? `protocol: ${target.protocol}` : '',
        target.path ? `path: ${target.path}` : '',
        target.policies ? `policies: ${target.policies}` : '',
      ].filter((field) => field !== '');
      return `      - name: ${target.name}\n        static: {${fields.join(', ')}}\n`;
    })
    .join('');
  const settings = Object.entries(options)
    .map(([field, value]) => `    ${field}: ${value}\n`)
    .join('');
  return `apiVersion: gw.dev/v1alpha1
kind: GwBackend
metadata: {name: tools}
spec:
  mcp:
${settings}    targets:
${list}---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: mcp}
spec:
  parentRefs: [{name: ai}]
  rules: [{backendRefs: [{group: gw.dev, kind: GwBackend, name: tools}]}]
`;
}

export interface McpGateway {
  gw: TestGateway;
  port: number;
  /** The Streamable HTTP endpoint of gw. */
  url: URL;
  /** The legacy SSE endpoint of gw. */
  sseUrl: URL;
  stop(): Promise<void>;
}

/** gw in front of `targets`; resolves once it serves MCP (a route answers something other than 404). */
export async function startMcpGateway(
  targets: readonly TargetYaml[],
  options: BackendYamlOptions = {},
): Promise<McpGateway> {
  const port = await freePort();
  const gw = await startTestGateway({ 'gw.yaml': gatewayYaml(port) + mcpYaml(targets, options) });
  return {
    gw,
    port,
    url: new URL(`http://127.0.0.1:${port}/mcp`),
    sseUrl: new URL(`http://127.0.0.1:${port}/sse`),
    stop: () => gw.stop(),
  };
}

/** Starts gateways for a suite and stops them all at its end. */
export function suiteGateways(): {
  start: (...args: Parameters<typeof startMcpGateway>) => Promise<McpGateway>;
  stopAll: () => Promise<void>;
} {
  const gateways: McpGateway[] = [];
  return {
    start: async (...args) => {
      const gateway = await startMcpGateway(...args);
      gateways.push(gateway);
      return gateway;
    },
    stopAll: async () => {
      for (const gateway of gateways.splice(0)) await gateway.stop();
    },
  };
}

export interface RawAnswer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
}

/** A raw POST to an MCP endpoint, with the transport's headers (overridable). */
export async function rawPost(url: URL, body: string, headers: Record<string, string> = {}): Promise<RawAnswer> {
  const response = await request(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
    body,
  });
  return { status: response.statusCode, headers: response.headers, text: await response.body.text() };
}

/** An SDK client connected over Streamable HTTP. */
export async function streamableClient(
  url: URL,
  capabilities: ClientCapabilities = {},
  options: { sessionId?: string } = {},
): Promise<{ client: Client; transport: StreamableHTTPClientTransport }> {
  const client = new Client({ name: 'test-client', version: '1.0.0' }, { capabilities });
  const transport = new StreamableHTTPClientTransport(url, { sessionId: options.sessionId });
  await client.connect(transport);
  return { client, transport };
}

/** An SDK client connected over the legacy SSE transport. */
export async function sseClient(url: URL, capabilities: ClientCapabilities = {}): Promise<Client> {
  const client = new Client({ name: 'test-client', version: '1.0.0' }, { capabilities });
  await client.connect(new SSEClientTransport(url));
  return client;
}

/** The text of a tool result's first content item. */
export function firstText(result: unknown): string {
  const content = (result as { content?: { type: string; text?: string }[] }).content ?? [];
  return content[0]?.text ?? '';
}
