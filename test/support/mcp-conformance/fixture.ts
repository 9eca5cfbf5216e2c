// The conformance fixture over Streamable HTTP on 127.0.0.1:0: stateful sessions with resumable
// SSE streams (a bounded event store), and the DNS rebinding protection the spec asks of a local
// server (a Host or Origin that is not local is refused with 403).
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { createConformanceServer } from './conformance-server.ts';
import { BoundedEventStore } from './event-store.ts';

const PATH = '/mcp';
/** Sessions kept; the oldest is closed past it (the suite opens one or two per scenario). */
const MAX_SESSIONS = 256;
const MAX_BODY = 4 * 1024 * 1024;
const LOCAL_HOSTS = new Set(['localhost', '127.0.0.1', '[::1]']);

export interface ConformanceFixture {
  port: number;
  /** The Streamable HTTP endpoint. */
  url: URL;
  close(): Promise<void>;
}

function hostname(hostAndPort: string): string {
  try {
    return new URL(`http://${hostAndPort}`).hostname;
  } catch {
    return '';
  }
}

/** A request from a browser page on another site (DNS rebinding) names that site in Host or Origin. */
function fromLocalOrigin(req: IncomingMessage): boolean {
  if (!LOCAL_HOSTS.has(hostname(req.headers.host ?? ''))) return false;
  const origin = req.headers.origin;
  if (origin === undefined) return true;
  try {
    return LOCAL_HOSTS.has(new URL(origin).hostname);
  } catch {
    return false;
  }
}

async function readBody(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > MAX_BODY) throw new RangeError('body too large');
    chunks.push(chunk as Buffer);
  }
  const text = Buffer.concat(chunks).toString('utf8');
  return text === '' ? undefined : JSON.parse(text);
}

function refuse(res: ServerResponse, status: number, message: string): void {
  res
    .writeHead(status, { 'content-type': 'application/json' })
    .end(JSON.stringify({ jsonrpc: '2.0', id: null, error: { code: -32000, message } }));
}

export async function startConformanceFixture(): Promise<ConformanceFixture> {
  const sessions = new Map<string, StreamableHTTPServerTransport>();
  const http: Server = createServer(async (req, res) => {
    try {
      if (req.url?.split('?')[0] !== PATH) return refuse(res, 404, 'Not found');
      if (!fromLocalOrigin(req)) return refuse(res, 403, 'Forbidden: Host or Origin is not local');
      let body: unknown;
      if (req.method === 'POST') {
        try {
          body = await readBody(req);
        } catch {
          return refuse(res, 400, 'Parse error');
        }
      }
      const id = req.headers['mcp-session-id'];
      if (typeof id === 'string') {
        const transport = sessions.get(id);
        if (!transport) return refuse(res, 404, 'Session not found');
        return void (await transport.handleRequest(req, res, body));
      }
      if (req.method !== 'POST') return refuse(res, 400, 'Mcp-Session-Id required');
      const transport = new StreamableHTTPServerTransport({
        sessionIdGenerator: () => randomUUID(),
        eventStore: new BoundedEventStore(),
        retryInterval: 100,
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
      await createConformanceServer().connect(transport);
      await transport.handleRequest(req, res, body);
    } catch {
      if (!res.headersSent) refuse(res, 500, 'Internal error');
      else res.destroy();
    }
  });
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  const port = (http.address() as AddressInfo).port;
  return {
    port,
    url: new URL(`http://127.0.0.1:${port}${PATH}`),
    close: async () => {
      for (const transport of sessions.values()) await transport.close().catch(() => undefined);
      sessions.clear();
      http.closeAllConnections();
      await new Promise<void>((resolve) => http.close(() => resolve()));
    },
  };
}
