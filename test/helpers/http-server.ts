// Test servers on node:http (and node:net): bound to 127.0.0.1 on a port the OS picks, closed by
// the test without waiting for idle keep-alive connections to time out; and the two things every
// stand-in does, reading a request body and answering JSON.
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { Server as NetServer } from 'node:net';

/** Starts `server` listening on 127.0.0.1:0; resolves its port. */
export async function listen(server: Server | NetServer): Promise<number> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  return typeof address === 'object' && address ? address.port : 0;
}

/** Closes `server` and every connection it still has open (an undefined server is already closed). */
export async function closeServer(server: Server | undefined): Promise<void> {
  if (!server) return;
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
}

/** The whole body of `req` as UTF-8 text. */
export function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

/** Answers `status` with `body` as JSON. */
export function sendJson(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8' });
  res.end(JSON.stringify(body));
}
