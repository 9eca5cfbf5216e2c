// A fast local A2A agent for the a2a route of the tunnel benchmark: a plain node http server that
// answers every JSON-RPC POST with one fixed A2A v1.0 SendMessage result (a completed task with a
// short artifact), and the request that asks for it. It reads the whole request before answering,
// as an agent would, and does nothing else: the figure is gw's cost on an a2a route.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** The path the agent serves JSON-RPC at (its card would name it). */
export const A2A_RPC_PATH = '/a2a/jsonrpc';

/** A SendMessage call as @a2a-js/sdk 1.x sends it (about 230 bytes). */
export const A2A_SEND_BODY = JSON.stringify({
  jsonrpc: '2.0',
  id: 1,
  method: 'SendMessage',
  params: {
    message: {
      messageId: '6f1c2d3e-4b5a-4c6d-8e7f-001122334455',
      role: 'ROLE_USER',
      parts: [{ text: 'Summarise the open incidents of the payments service in one paragraph.' }],
    },
  },
});

export const A2A_HEADERS: Record<string, string> = { 'content-type': 'application/json', 'a2a-version': '1.0' };

const ANSWER = JSON.stringify({
  jsonrpc: '2.0',
  id: 1,
  result: {
    task: {
      id: 'task-0001',
      contextId: 'ctx-0001',
      status: { state: 'TASK_STATE_COMPLETED', timestamp: '2026-01-01T00:00:00.000Z' },
      artifacts: [{ artifactId: 'answer', parts: [{ text: 'No incident is open for the payments service.' }] }],
    },
  },
});

export async function startA2aAgentMock(): Promise<{ port: number; close(): Promise<void> }> {
  const server: Server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      if (req.method !== 'POST' || req.url !== A2A_RPC_PATH) return void res.writeHead(404).end();
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(ANSWER) });
      res.end(ANSWER);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as AddressInfo).port,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
