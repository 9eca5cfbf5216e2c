// A provider that answers every request with an event stream that never ends: its `opening`
// events, then `repeated` written again and again as fast as the reader takes them (with
// backpressure), until the connection closes. For tests that a stream gw ends on the client's
// side is also ended upstream, and that gw does not go on reading.
import { createServer, type Server } from 'node:http';
import { closeServer, listen } from './http-server.ts';

export interface EndlessProvider {
  server: Server;
  port: number;
  /** Requests whose connection was closed under the stream. */
  closed(): number;
  /** Bytes of stream written so far, over every request. */
  written(): number;
  /** The request bodies received (parsed JSON), oldest first. */
  bodies: unknown[];
  close(): Promise<void>;
}

export async function startEndlessProvider(opening: string, repeated: string): Promise<EndlessProvider> {
  let closed = 0;
  let written = 0;
  const bodies: unknown[] = [];
  const block = Buffer.from(repeated.repeat(Math.max(1, Math.floor(16384 / repeated.length))));
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      bodies.push(JSON.parse(Buffer.concat(chunks).toString('utf8') || 'null'));
      let open = true;
      res.once('close', () => {
        open = false;
        closed++;
      });
      res.on('error', () => undefined);
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(opening);
      written += Buffer.byteLength(opening);
      const pump = (): void => {
        while (open) {
          written += block.length;
          if (!res.write(block)) {
            res.once('drain', pump);
            return;
          }
        }
      };
      pump();
    });
  });
  const port = await listen(server);
  return { server, port, closed: () => closed, written: () => written, bodies, close: () => closeServer(server) };
}

/** One SSE event: `event:` line when named, then its data as JSON. */
export function sseEvent(data: unknown, event?: string): string {
  return `${event === undefined ? '' : `event: ${event}\n`}data: ${JSON.stringify(data)}\n\n`;
}
