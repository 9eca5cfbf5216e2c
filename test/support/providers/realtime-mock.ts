// A stand-in for OpenAI's Realtime API on loopback: an HTTP server taking WebSocket upgrades at
// `paths` (GET ?model=…, or Azure's ?deployment=…) with the key — `Authorization: Bearer <key>`,
// or Azure OpenAI's `api-key: <key>` — anything else is refused over HTTP with OpenAI's error
// body, as the API does. Once open it speaks the event protocol: it sends
// `session.created` (the session's model), answers `response.create` with response.created,
// response.output_text.delta events, response.output_text.done and `response.done` carrying
// usage (input_tokens, output_tokens, total_tokens, input_token_details.cached_tokens), echoes a
// binary message back as binary, on the test's own `test.close` event closes with the code it
// names, and on `test.flood` sends many binary messages at once (for backpressure). Every handshake (path, query, headers, subprotocols) and client event is recorded.
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { WebSocket, WebSocketServer } from 'ws';

export interface RealtimeHandshake {
  /** The port the client connected from (gw's end of the connection). */
  clientPort: number;
  path: string;
  query: URLSearchParams;
  headers: IncomingHttpHeaders;
}

export interface RealtimeMock {
  port: number;
  handshakes: RealtimeHandshake[];
  /** The client events each session got, by session (in handshake order). */
  events: Record<string, unknown>[][];
  /** For each `test.flood`, the bytes still queued at the stand-in when it sampled (sampleAfterMs). */
  flooded: number[];
  /** The close code each session ended with, as the stand-in saw it (by session, as `events`). */
  closes: number[];
  /** Usage each response.done reports. */
  usage: { input_tokens: number; output_tokens: number; total_tokens: number; cached_tokens: number };
  close(): Promise<void>;
}

/** The words of the reply to `text`, sent as one delta each. */
function replyDeltas(text: string): string[] {
  return `echo: ${text}`.split(/(?<= )/);
}

/** The path at which the stand-in never answers a handshake. */
export const HANGING_PATH = '/v1/hang';

/** Where the stand-in takes sessions and how it wants the key. */
export interface RealtimeMockOptions {
  paths?: readonly string[];
  /** `authorization` (Bearer, OpenAI) or `api-key` (Azure OpenAI). */
  keyHeader?: 'authorization' | 'api-key';
  /** Serve over TLS (wss) with this certificate and key (PEM). */
  tls?: { cert: string; key: string };
}

export async function startRealtimeMock(apiKey: string, options: RealtimeMockOptions = {}): Promise<RealtimeMock> {
  const paths = options.paths ?? ['/v1/realtime'];
  const keyHeader = options.keyHeader ?? 'authorization';
  const expectedKey = keyHeader === 'authorization' ? `Bearer ${apiKey}` : apiKey;
  const handshakes: RealtimeHandshake[] = [];
  const events: Record<string, unknown>[][] = [];
  const closes: number[] = [];
  const hanging = new Set<import('node:stream').Duplex>();
  const flooded: number[] = [];
  const usage = { input_tokens: 12, output_tokens: 5, total_tokens: 17, cached_tokens: 4 };
  const wss = new WebSocketServer({
    noServer: true,
    handleProtocols: (offered) => (offered.has('realtime') ? 'realtime' : false),
  });
  const plainAnswer = (_req: unknown, res: import('node:http').ServerResponse) => {
    res.writeHead(426, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ error: { message: 'Upgrade to WebSocket', type: 'invalid_request_error' } }));
  };
  const server: Server = options.tls ? createHttpsServer(options.tls, plainAnswer) : createServer(plainAnswer);
  const refuse = (socket: import('node:stream').Duplex, status: number, message: string, type: string) => {
    const body = JSON.stringify({ error: { message, type, param: null, code: null } });
    socket.end(
      `HTTP/1.1 ${status} ${status === 401 ? 'Unauthorized' : 'Not Found'}\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`,
    );
  };
  server.on('upgrade', (req, socket, head) => {
    const url = new URL(req.url ?? '/', 'http://stand-in');
    handshakes.push({
      clientPort: req.socket.remotePort ?? 0,
      path: url.pathname,
      query: url.searchParams,
      headers: req.headers,
    });
    // A provider that takes the connection and never answers the handshake.
    if (url.pathname === HANGING_PATH) {
      hanging.add(socket);
      socket.once('close', () => hanging.delete(socket));
      return socket.resume();
    }
    if (!paths.includes(url.pathname))
      return refuse(socket, 404, `no realtime endpoint at ${url.pathname}`, 'invalid_request_error');
    if (req.headers[keyHeader] !== expectedKey)
      return refuse(socket, 401, 'Incorrect API key provided.', 'invalid_request_error');
    const model = url.searchParams.get('deployment') ?? url.searchParams.get('model') ?? '';
    wss.handleUpgrade(req, socket, head, (ws) => {
      const seen: Record<string, unknown>[] = [];
      events.push(seen);
      let eventId = 0;
      const send = (event: Record<string, unknown>) =>
        ws.send(JSON.stringify({ event_id: `event_${++eventId}`, ...event }));
      send({ type: 'session.created', session: { id: 'sess_1', object: 'realtime.session', model, type: 'realtime' } });
      const session = events.length - 1;
      ws.once('close', (code) => {
        closes[session] = code;
      });
      let lastText = '';
      ws.on('message', (data, isBinary) => {
        if (isBinary) return ws.send(data, { binary: true });
        const event = JSON.parse(data.toString()) as Record<string, unknown>;
        seen.push(event);
        if (event.type === 'conversation.item.create') {
          const content = (event.item as { content?: { text?: string }[] } | undefined)?.content ?? [];
          lastText = content.map((part) => part.text ?? '').join('');
        } else if (event.type === 'response.create') {
          const id = `resp_${seen.length}`;
          send({ type: 'response.created', response: { id, object: 'realtime.response', status: 'in_progress' } });
          for (const delta of replyDeltas(lastText))
            send({
              type: 'response.output_text.delta',
              response_id: id,
              item_id: 'item_1',
              output_index: 0,
              content_index: 0,
              delta,
            });
          send({
            type: 'response.output_text.done',
            response_id: id,
            item_id: 'item_1',
            output_index: 0,
            content_index: 0,
            text: `echo: ${lastText}`,
          });
          send({
            type: 'response.done',
            response: {
              id,
              object: 'realtime.response',
              status: 'completed',
              usage: {
                total_tokens: usage.total_tokens,
                input_tokens: usage.input_tokens,
                output_tokens: usage.output_tokens,
                input_token_details: {
                  cached_tokens: usage.cached_tokens,
                  text_tokens: usage.input_tokens,
                  audio_tokens: 0,
                },
                output_token_details: { text_tokens: usage.output_tokens, audio_tokens: 0 },
              },
            },
          });
        } else if (event.type === 'test.flood') {
          // `count` binary messages of `size` bytes as fast as the connection takes them; what is
          // still queued here `sampleAfterMs` later says whether the reader kept on reading.
          const chunk = Buffer.alloc(event.size as number, 7);
          for (let sent = 0; sent < (event.count as number); sent++) ws.send(chunk, { binary: true });
          setTimeout(() => flooded.push(ws.bufferedAmount), event.sampleAfterMs as number);
        } else if (event.type === 'test.close') {
          ws.close(event.code as number, String(event.reason ?? ''));
        }
      });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as AddressInfo).port,
    handshakes,
    events,
    closes,
    flooded,
    usage,
    close: () =>
      new Promise((resolve) => {
        for (const client of wss.clients) client.terminate();
        for (const socket of hanging) socket.destroy();
        wss.close();
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

export { WebSocket };
