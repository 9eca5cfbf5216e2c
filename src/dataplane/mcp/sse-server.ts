// The legacy HTTP+SSE transport towards clients (MCP 2024-11-05): GET on a path ending in /sse
// opens the client's event stream, whose first `endpoint` event names where to POST messages (the
// same path with ?sessionId=); every answer and server message then goes out on that stream. The
// stream is the session, so it lives in this replica and ends when the stream closes, whatever
// sessionRouting says (docs/mcp.md "Legacy SSE clients").
import { randomBytes } from 'node:crypto';
import type { RoutedRequest } from '../backends/backend.ts';
import type { ClientResponse } from '../proxy/client-response.ts';
import { accepts, clientScope, parseClientBody, readClientBody, sendRpcError } from './client-input.ts';
import type { ClientScope, MessageSink } from './client-scope.ts';
import { mcpCall } from './context.ts';
import { SSE_HEADERS } from './event-stream.ts';
import {
  ErrorCode,
  errorMessage,
  type InvalidMessage,
  isInvalid,
  isNotification,
  isRequest,
  type JsonRpcMessage,
} from './jsonrpc.ts';
import { handleNotification, handleRequest, initializeSession } from './multiplexer.ts';
import type { McpBackend } from './session.ts';
import { McpSession } from './session.ts';

/** Most legacy SSE connections a replica holds (each is a session and a long-lived stream). */
const MAX_CONNECTIONS = 10_000;
/** A client that does not read its stream loses it rather than gw buffering without end. */
const MAX_UNREAD_BYTES = 4 * 1024 * 1024;
const KEEPALIVE_MS = 25_000;

/** One client's SSE stream, and the session once it has sent initialize. */
class LegacyConnection implements MessageSink {
  readonly id = randomBytes(16).toString('base64url');
  readonly res: ClientResponse;
  session: McpSession | undefined;
  /** Messages are handled one after another, as the stream's order promises. */
  queue: Promise<void> = Promise.resolve();

  constructor(res: ClientResponse) {
    this.res = res;
  }

  /** The session ended on gw's side (its backend left the configuration): the stream ends too. */
  close(): void {
    this.res.end();
  }

  send(message: JsonRpcMessage): boolean {
    const res = this.res;
    if (res.writableEnded || res.destroyed) return false;
    res.write(`event: message\ndata: ${JSON.stringify(message)}\n\n`);
    if (res.writableLength > MAX_UNREAD_BYTES) res.destroy();
    return true;
  }
}

/** Legacy connections by session id, per process (a POST names its connection by ?sessionId=). */
const connections = new Map<string, LegacyConnection>();

export function isLegacySseRequest(routed: RoutedRequest): boolean {
  const path = routed.forward.path;
  if (!(path === '/sse' || path.endsWith('/sse'))) return false;
  if (routed.req.method === 'GET') return true;
  return routed.req.method === 'POST' && new URLSearchParams(routed.forward.query).has('sessionId');
}

export async function serveLegacySse(routed: RoutedRequest, backend: McpBackend): Promise<void> {
  if (routed.req.method === 'GET') return open(routed, backend);
  return post(routed, backend);
}

function open(routed: RoutedRequest, backend: McpBackend): void {
  const { req, res } = routed;
  if (!accepts(req.headers.accept, 'text/event-stream'))
    return void sendRpcError(
      res,
      406,
      errorMessage(null, ErrorCode.InvalidRequest, 'Not Acceptable: accept text/event-stream'),
    );
  if (connections.size >= MAX_CONNECTIONS)
    return void sendRpcError(res, 503, errorMessage(null, ErrorCode.ConnectionClosed, 'too many SSE sessions'));
  const connection = new LegacyConnection(res);
  connections.set(connection.id, connection);
  res.writeHead(200, SSE_HEADERS);
  // The path the client used (before any rewrite), so that its POSTs come back through this route.
  res.write(`event: endpoint\ndata: ${routed.record.path}?sessionId=${connection.id}\n\n`);
  const keepalive = setInterval(() => res.write(': keepalive\n\n'), KEEPALIVE_MS);
  keepalive.unref();
  res.once('close', () => {
    clearInterval(keepalive);
    connections.delete(connection.id);
    const session = connection.session;
    if (session) {
      backend.sessions.releaseLegacy(session);
      session.close(true);
    }
  });
}

async function post(routed: RoutedRequest, backend: McpBackend): Promise<void> {
  const { res } = routed;
  const id = new URLSearchParams(routed.forward.query).get('sessionId') ?? '';
  const connection = connections.get(id);
  if (!connection)
    return void sendRpcError(res, 404, errorMessage(null, ErrorCode.ConnectionClosed, 'Session not found'));
  const body = await readClientBody(routed);
  if (!Buffer.isBuffer(body))
    return void sendRpcError(res, body.status, errorMessage(null, ErrorCode.InvalidRequest, body.message), {
      connection: 'close',
    });
  const parsed = parseClientBody(body);
  if ('error' in parsed) return void sendRpcError(res, 400, parsed.error);
  const messages = parsed.batch ? parsed.messages : [parsed.message];
  const single = parsed.batch ? undefined : parsed.message;
  if (single && isInvalid(single))
    return void sendRpcError(res, 400, errorMessage(single.id, ErrorCode.InvalidRequest, single.invalid));
  res.writeHead(202, { 'content-type': 'text/plain; charset=utf-8' }).end('Accepted');
  const scope = clientScope(routed, connection);
  for (const message of messages) {
    connection.queue = connection.queue
      .then(() => handle(routed, backend, connection, message, scope))
      .catch(() => undefined);
  }
}

async function handle(
  routed: RoutedRequest,
  backend: McpBackend,
  connection: LegacyConnection,
  message: JsonRpcMessage | InvalidMessage,
  scope: ClientScope,
): Promise<void> {
  if (isInvalid(message)) {
    connection.send(errorMessage(message.id, ErrorCode.InvalidRequest, message.invalid));
    return;
  }
  if (isRequest(message) && message.method === 'initialize') {
    const previous = connection.session;
    if (previous) {
      // A second initialize on the stream: the old session goes, the stream stays.
      previous.legacySink = undefined;
      backend.sessions.releaseLegacy(previous);
      previous.close(true);
    }
    const { session, response } = await initializeSession(
      backend,
      message,
      scope,
      (version, capabilities, clientInfo) => {
        const created = new McpSession(backend, version, { capabilities, clientInfo }, scope);
        created.id = connection.id;
        created.legacySink = connection;
        return created;
      },
      (info) => mcpCall(routed, info),
    );
    connection.session = session;
    if (session) {
      backend.sessions.holdLegacy(session);
      session.listenAll();
    }
    connection.send(response);
    return;
  }
  const session = connection.session;
  if (!session) {
    if (isRequest(message))
      connection.send(errorMessage(message.id, ErrorCode.InvalidRequest, 'the session is not initialized'));
    return;
  }
  session.rebind(backend);
  session.lastScope = scope;
  session.lastUsed = backend.sessions.now();
  if (isRequest(message)) {
    // Answered out of order with later messages: a long tool call must not hold up the rest.
    void handleRequest(session, message, scope, (info) => mcpCall(routed, info)).then((response) =>
      connection.send(response),
    );
    return;
  }
  if (isNotification(message)) await handleNotification(session, message, scope);
  else await session.answerTarget(message, scope);
}
