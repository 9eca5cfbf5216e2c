// Test servers on node:http (and node:net): bound to 127.0.0.1 on a port the OS picks, closed by
// the test without waiting for idle keep-alive connections to time out.
import type { Server } from 'node:http';
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
