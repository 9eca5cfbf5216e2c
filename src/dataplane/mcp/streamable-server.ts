// The Streamable HTTP transport towards clients (MCP 2025-03-26 and later): POST carries one
// JSON-RPC message (or, up to 2025-03-26, a bounded batch); a request is answered with JSON, or
// with an SSE stream as soon as a message related to it must reach the client before the answer;
// GET opens the stream of server-initiated messages, or resumes a stream with Last-Event-ID;
// DELETE ends the session. Sessions are sealed into Mcp-Session-Id (sessionRouting Stateful), or
// there are none (Stateless). docs/mcp.md "Client transports".
import type { RoutedRequest } from '../backends/backend.ts';
import type { ClientResponse } from '../proxy/client-response.ts';
import { sendJson } from '../proxy/direct-response.ts';
import { accepts, clientScope, parseClientBody, readClientBody, sendRpcError } from './client-input.ts';
import type { ClientScope, MessageSink } from './client-scope.ts';
import { mcpCall } from './context.ts';
import { EventStream, parseEventId } from './event-stream.ts';
import {
  ErrorCode,
  errorMessage,
  type InvalidMessage,
  isInvalid,
  isNotification,
  isRequest,
  type JsonRpcMessage,
  type JsonRpcRequest,
  type JsonRpcResponse,
  jsonText,
} from './jsonrpc.ts';
import { type CallFactory, handleNotification, handleRequest, initializeSession } from './multiplexer.ts';
import { allowsBatches, DEFAULT_HEADER_VERSION, isSupportedVersion, wantsPrimingEvent } from './protocol-version.ts';
import type { McpBackend } from './session.ts';
import { GATEWAY_CLIENT_INFO, McpSession } from './session.ts';
import { retainStreams } from './session-registry.ts';

const ALLOW = 'GET, POST, DELETE';

export async function serveStreamable(routed: RoutedRequest, backend: McpBackend): Promise<void> {
  switch (routed.req.method) {
    case 'POST':
      return post(routed, backend);
    case 'GET':
      return get(routed, backend);
    case 'DELETE':
      return remove(routed, backend);
    default:
      return void sendRpcError(routed.res, 405, errorMessage(null, ErrorCode.ConnectionClosed, 'Method not allowed'), {
        allow: ALLOW,
      });
  }
}

function badRequest(
  res: ClientResponse,
  status: number,
  message: string,
  code: number = ErrorCode.InvalidRequest,
): void {
  sendRpcError(res, status, errorMessage(null, code, message));
}

/** The MCP-Protocol-Version header, when it names a version gw does not speak (answered 400). */
function unsupportedVersionHeader(routed: RoutedRequest): string | undefined {
  const header = routed.req.headers['mcp-protocol-version'];
  if (header === undefined) return undefined;
  return isSupportedVersion(header) ? undefined : String(header).slice(0, 64);
}

/** The session a request names (resumed from its id when this replica does not hold it), or why not. */
function findSession(
  routed: RoutedRequest,
  backend: McpBackend,
  scope: ClientScope,
): McpSession | { status: number; message: string } {
  const header = routed.req.headers['mcp-session-id'];
  const id = Array.isArray(header) ? header[0] : header;
  if (id === undefined || id === '')
    return { status: 400, message: 'Bad Request: the Mcp-Session-Id header is required' };
  let session = backend.sessions.get(id);
  if (!session) {
    if (backend.sessions.isTerminated(id)) return { status: 404, message: 'Session not found' };
    session = McpSession.resume(backend, id, scope);
    if (!session) return { status: 404, message: 'Session not found' };
    backend.sessions.add(session);
  }
  session.rebind(backend);
  session.lastScope = scope;
  return session;
}

/** A stateless request's session: nothing kept, targets initialized as the request needs them. */
function transientSession(routed: RoutedRequest, backend: McpBackend, scope: ClientScope): McpSession {
  const header = routed.req.headers['mcp-protocol-version'];
  const version = isSupportedVersion(header) ? header : DEFAULT_HEADER_VERSION;
  // No client capabilities: a target could not reach this client with requests of its own.
  const session = new McpSession(backend, version, { capabilities: {}, clientInfo: GATEWAY_CLIENT_INFO }, scope);
  session.addMissingLinks();
  return session;
}

/** The session of a POST: this request's own (Stateless), or the one its id names. */
function requestSession(
  routed: RoutedRequest,
  backend: McpBackend,
  scope: ClientScope,
): McpSession | { status: number; message: string } {
  return backend.sessionRouting === 'Stateless'
    ? transientSession(routed, backend, scope)
    : findSession(routed, backend, scope);
}

function callFactory(routed: RoutedRequest): CallFactory {
  return (info) => mcpCall(routed, info);
}

async function post(routed: RoutedRequest, backend: McpBackend): Promise<void> {
  const { req, res } = routed;
  const type = (req.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
  if (type !== 'application/json') return badRequest(res, 415, 'Unsupported Media Type: use application/json');
  const accept = req.headers.accept;
  const acceptsSse = accepts(accept, 'text/event-stream');
  if (!acceptsSse || !accepts(accept, 'application/json'))
    return badRequest(res, 406, 'Not Acceptable: accept both application/json and text/event-stream');
  const body = await readClientBody(routed);
  if (!Buffer.isBuffer(body)) {
    return void sendRpcError(res, body.status, errorMessage(null, ErrorCode.InvalidRequest, body.message), {
      connection: 'close',
    });
  }
  const parsed = parseClientBody(body);
  if ('error' in parsed) return void sendRpcError(res, 400, parsed.error);
  const badVersion = unsupportedVersionHeader(routed);
  if (parsed.batch) {
    if (parsed.messages.some((m) => !isInvalid(m) && isRequest(m) && m.method === 'initialize'))
      return badRequest(res, 400, 'initialize must not be part of a batch');
    if (badVersion) return badRequest(res, 400, `Bad Request: unsupported protocol version ${badVersion}`);
    return postBatch(routed, backend, parsed.messages);
  }
  const message = parsed.message;
  if (isInvalid(message))
    return void sendRpcError(res, 400, errorMessage(message.id, ErrorCode.InvalidRequest, message.invalid));
  if (isRequest(message) && message.method === 'initialize') return postInitialize(routed, backend, message);
  if (badVersion) return badRequest(res, 400, `Bad Request: unsupported protocol version ${badVersion}`);
  const scope = clientScope(routed, undefined);
  const session = requestSession(routed, backend, scope);
  if (!(session instanceof McpSession))
    return badRequest(res, session.status, session.message, ErrorCode.ConnectionClosed);
  if (!isRequest(message)) {
    // Accepted at once; what it causes at the targets happens after.
    res.writeHead(202).end();
    if (!session.stateless) void forwardClientMessage(session, message, scope);
    return;
  }
  const channel = new AnswerChannel(res, session, acceptsSse);
  scope.sink = channel;
  try {
    const response = await handleRequest(session, message, scope, callFactory(routed));
    channel.finish(response);
  } finally {
    if (session.stateless) session.close(true);
  }
}

/** A client notification, or its answer to a target's request. */
async function forwardClientMessage(session: McpSession, message: JsonRpcMessage, scope: ClientScope): Promise<void> {
  try {
    if (isNotification(message)) await handleNotification(session, message, scope);
    else if (!isRequest(message)) await session.answerTarget(message, scope);
  } catch {
    // a notification has nobody to tell of a failure
  }
}

async function postInitialize(routed: RoutedRequest, backend: McpBackend, request: JsonRpcRequest): Promise<void> {
  const scope = clientScope(routed, undefined);
  const stateless = backend.sessionRouting === 'Stateless';
  const { session, response, status } = await initializeSession(
    backend,
    request,
    scope,
    (version, capabilities, clientInfo) =>
      // Stateless: targets are asked with gw's own identity and no client capabilities, as later requests will be.
      stateless
        ? new McpSession(backend, version, { capabilities: {}, clientInfo: GATEWAY_CLIENT_INFO }, scope)
        : new McpSession(backend, version, { capabilities, clientInfo }, scope),
    callFactory(routed),
  );
  if (!session) return void sendJson(routed.res, status ?? 200, JSON.stringify(response));
  if (stateless) {
    session.close(true);
    return void sendJson(routed.res, 200, JSON.stringify(response));
  }
  session.id = session.seal();
  backend.sessions.add(session);
  sendJson(routed.res, 200, JSON.stringify(response), { 'mcp-session-id': session.id });
}

/** A batch (2025-03-26 and before): answered with a JSON array; related messages go to the GET stream. */
async function postBatch(
  routed: RoutedRequest,
  backend: McpBackend,
  messages: (JsonRpcMessage | InvalidMessage)[],
): Promise<void> {
  const { res } = routed;
  const scope = clientScope(routed, undefined);
  const session = requestSession(routed, backend, scope);
  if (!(session instanceof McpSession))
    return badRequest(res, session.status, session.message, ErrorCode.ConnectionClosed);
  try {
    if (!allowsBatches(session.clientVersion))
      return badRequest(res, 400, `JSON-RPC batches are not part of protocol version ${session.clientVersion}`);
    const answers = await Promise.all(
      messages.map(async (message): Promise<JsonRpcResponse | undefined> => {
        if (isInvalid(message)) return errorMessage(message.id, ErrorCode.InvalidRequest, message.invalid);
        if (isRequest(message)) return handleRequest(session, message, scope, callFactory(routed));
        if (!session.stateless) await forwardClientMessage(session, message, scope);
        return undefined;
      }),
    );
    const responses = answers.filter((answer) => answer !== undefined);
    if (responses.length === 0) return void res.writeHead(202).end();
    sendJson(res, 200, JSON.stringify(responses));
  } finally {
    if (session.stateless) session.close(true);
  }
}

/**
 * How a request is answered: JSON when the answer is all there is; an SSE stream (resumable,
 * kept by the session) from the first message that must reach the client before the answer.
 */
class AnswerChannel implements MessageSink {
  readonly #res: ClientResponse;
  readonly #session: McpSession;
  readonly #sse: boolean;
  #stream: EventStream | undefined;
  #finished = false;

  constructor(res: ClientResponse, session: McpSession, acceptsSse: boolean) {
    this.#res = res;
    this.#session = session;
    this.#sse = acceptsSse;
  }

  send(message: JsonRpcMessage): boolean {
    if (this.#finished || !this.#sse) return false;
    if (!this.#stream) {
      if (this.#res.headersSent || this.#res.destroyed) return false;
      const now = this.#session.backend.sessions.now;
      this.#stream = new EventStream(now);
      if (!this.#session.stateless) {
        this.#session.streams.set(this.#stream.key, this.#stream);
        retainStreams(this.#session, now());
      }
      this.#stream.attach(
        this.#res,
        undefined,
        !this.#session.stateless && wantsPrimingEvent(this.#session.clientVersion),
      );
    }
    this.#stream.push(message);
    return true;
  }

  finish(response: JsonRpcResponse): void {
    this.#finished = true;
    if (this.#stream) {
      this.#stream.push(response);
      this.#stream.end();
      return;
    }
    if (!this.#res.destroyed) sendJson(this.#res, 200, jsonText(response));
  }
}

/** GET and DELETE of an endpoint without sessions (Stateless): there is nothing to listen to or end. */
function noSessions(res: ClientResponse): void {
  sendRpcError(
    res,
    405,
    errorMessage(null, ErrorCode.ConnectionClosed, 'Method not allowed: this MCP endpoint keeps no sessions'),
    { allow: 'POST' },
  );
}

async function get(routed: RoutedRequest, backend: McpBackend): Promise<void> {
  const { req, res } = routed;
  if (backend.sessionRouting === 'Stateless') return noSessions(res);
  if (!accepts(req.headers.accept, 'text/event-stream'))
    return badRequest(res, 406, 'Not Acceptable: accept text/event-stream');
  const badVersion = unsupportedVersionHeader(routed);
  if (badVersion) return badRequest(res, 400, `Bad Request: unsupported protocol version ${badVersion}`);
  const session = findSession(routed, backend, clientScope(routed, undefined));
  if (!(session instanceof McpSession))
    return badRequest(res, session.status, session.message, ErrorCode.ConnectionClosed);
  const lastEventId = req.headers['last-event-id'];
  const resumed = typeof lastEventId === 'string' ? parseEventId(lastEventId) : undefined;
  const stream =
    resumed === undefined
      ? undefined
      : resumed.key === session.standalone.key
        ? session.standalone
        : session.streams.get(resumed.key);
  if (stream && stream !== session.standalone) return stream.attach(res, resumed!.seq, false);
  // The stream of server-initiated messages (also when the stream to resume is not held here).
  const standalone = session.standalone;
  standalone.attach(res, stream ? resumed!.seq : undefined, !stream && wantsPrimingEvent(session.clientVersion));
  session.listenAll();
  res.once('close', () => {
    if (!standalone.attached) session.stopListening();
  });
}

async function remove(routed: RoutedRequest, backend: McpBackend): Promise<void> {
  const { res } = routed;
  if (backend.sessionRouting === 'Stateless') return noSessions(res);
  const session = findSession(routed, backend, clientScope(routed, undefined));
  if (!(session instanceof McpSession))
    return badRequest(res, session.status, session.message, ErrorCode.ConnectionClosed);
  backend.sessions.terminate(session);
  res.writeHead(200).end();
}
