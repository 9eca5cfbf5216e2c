// A Realtime session: the OpenAI Realtime API over WebSocket (GET …/realtime?model=… with
// `Upgrade: websocket`), proxied to a provider that has it. The request has been through the
// listener, routing and the rule's traffic policies like any other (a refused client got an HTTP
// answer and no upgrade). Here: plan the provider's Realtime URL, open the upstream WebSocket
// first — with gw's credentials for the provider (the client's own never go upstream), the
// backend's TLS settings and its connect deadline — and only once it is open accept the client's
// upgrade, so that a provider that cannot be reached or refuses is an HTTP answer (the next
// provider tried when the failure allows). Then messages are relayed both ways unchanged (text and
// binary), each at most the listener's http.maxBufferSize (a bigger one closes the session with
// 1009), with backpressure (a side that cannot keep up pauses the reading of the other), close
// codes passed on, and an idle deadline. Server events are metered (metering.ts); the request is
// finished — access log, metrics, token rate limits — when the session closes.
import type { IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';
import type { ConnectionOptions } from 'node:tls';
import { type RawData, WebSocket, WebSocketServer } from 'ws';
import { shorterTimeout } from '../../../util/deadlines.ts';
import type { RoutedRequest } from '../../backends/backend.ts';
import type { ObservedResponse } from '../../balancing/endpoint-health.ts';
import type { Subrequest } from '../../policies/exchange.ts';
import { runResponseHooks } from '../../proxy/response-head.ts';
import type { WebSocketUpgrade } from '../../proxy/websocket-upgrade.ts';
import { celContext } from '../../telemetry/cel-context.ts';
import { LlmRecord } from '../../telemetry/request-record.ts';
import { applyKeepalive } from '../../transport/tcp-keepalive.ts';
import { dialThroughProxy } from '../../upstream/connect-tunnel.ts';
import type { SocketSettings } from '../../upstream/connection-settings.ts';
import { unguardableRequest } from '../guards/apply.ts';
import { sendClientError, sendGatewayError } from '../llm-answers.ts';
import {
  attemptDeadline,
  type Candidate,
  clientHeadersForUpstream,
  hostAndPort,
  prepareUpstreamRequest,
} from '../llm-request.ts';
import { priceLlmRequest } from '../model-prices.ts';
import { providerSubrequest } from '../provider-subrequest.ts';
import { PlanError } from '../providers/index.ts';
import { RealtimeMeter } from './metering.ts';

/** A session with no message either way for this long is closed (1001). */
export const REALTIME_IDLE_TIMEOUT_MS = 10 * 60_000;

/** Past this many bytes queued towards one side, reading from the other pauses; it resumes below the low mark. */
const HIGH_WATER_BYTES = 1024 * 1024;
const LOW_WATER_BYTES = 256 * 1024;

/** Most bytes of a provider's refusal of the upgrade (an HTTP error body) passed on to the client. */
const MAX_REFUSAL_BYTES = 64 * 1024;

/** The WebSocket handshake headers of the client's request: the upstream handshake has its own. */
const HANDSHAKE_HEADERS = [
  'sec-websocket-key',
  'sec-websocket-version',
  'sec-websocket-extensions',
  'sec-websocket-protocol',
  'content-length',
];

/** Fields of a 101 answer that belong to the handshake (ws writes them) or to a body (there is none). */
const HANDSHAKE_RESPONSE_HEADERS: ReadonlySet<string> = new Set([
  'connection',
  'upgrade',
  'sec-websocket-accept',
  'sec-websocket-protocol',
  'sec-websocket-extensions',
  'content-length',
  'content-type',
  'transfer-encoding',
]);

/**
 * A subprotocol browsers use to carry an OpenAI key (`openai-insecure-api-key.<key>`): the
 * client's credential, which never goes upstream.
 */
const KEY_PROTOCOL_PREFIX = 'openai-insecure-api-key.';

/**
 * Query parameters browsers' Realtime clients carry a key in (Azure's `api-key`, an Entra token as
 * `Authorization`): the client's credentials, which never go upstream.
 */
const KEY_QUERY_PARAMETERS = ['api-key', 'Authorization', 'authorization'];

const KEY_PATTERN = /^[+/0-9A-Za-z]{22}==$/;

/** Why the request is not a WebSocket handshake gw can complete (RFC 6455 section 4.2.1), or undefined. */
function handshakeProblem(req: IncomingMessage): string | undefined {
  const key = req.headers['sec-websocket-key'];
  if (typeof key !== 'string' || !KEY_PATTERN.test(key))
    return 'The WebSocket handshake has no valid Sec-WebSocket-Key.';
  const version = req.headers['sec-websocket-version'];
  if (version !== '13' && version !== '8') return 'The WebSocket handshake must ask for Sec-WebSocket-Version 13.';
  return undefined;
}

/** The subprotocols the client offered, less any that carries its key. */
function offeredProtocols(req: IncomingMessage): string[] {
  const header = req.headers['sec-websocket-protocol'];
  if (typeof header !== 'string') return [];
  return header
    .split(',')
    .map((protocol) => protocol.trim())
    .filter((protocol) => protocol !== '' && !protocol.startsWith(KEY_PROTOCOL_PREFIX));
}

type Opened =
  | { kind: 'open'; upstream: WebSocket }
  | { kind: 'refused'; status: number; headers: Record<string, string | string[] | undefined>; body: Buffer }
  | { kind: 'failed'; failure: 'connect' | 'timeout'; message: string };

/**
 * ws's options for the provider connection: the backend's TLS (HTTP/1.1 only: a WebSocket is
 * opened over HTTP/1.1), the message bound, and the opening handshake's deadline — the connect
 * timeout, or the request's deadline when that is shorter (`requestDeadlineMs`: route
 * timeouts, BackendHTTP.requestTimeout, which bound the handshake, not the session).
 */
function upstreamOptions(
  connection: SocketSettings,
  headers: Record<string, string | string[]>,
  maxPayload: number,
  requestDeadlineMs: number | undefined,
): ConstructorParameters<typeof WebSocket>[2] {
  const tls: ConnectionOptions | undefined = connection.tls && { ...connection.tls, ALPNProtocols: ['http/1.1'] };
  const options: ConstructorParameters<typeof WebSocket>[2] = {
    ...tls,
    headers,
    maxPayload,
    perMessageDeflate: false,
    followRedirects: false,
    handshakeTimeout: shorterTimeout(connection.connectTimeoutMs, requestDeadlineMs),
  };
  const { tunnel } = connection;
  if (tunnel !== undefined) {
    // Through the backend's CONNECT proxy: node's client request takes the socket once it is open.
    const target = { host: connection.host, port: connection.port, tls, connectTimeoutMs: connection.connectTimeoutMs };
    const dial = (_options: unknown, created: (error: Error | null, socket?: Socket) => void): undefined => {
      dialThroughProxy({ ...target, proxy: tunnel }, { speaks: ['http/1.1'] }).then(
        (socket) => created(null, socket),
        (error: Error) => created(error),
      );
    };
    options!.createConnection = dial as unknown as NonNullable<typeof options>['createConnection'];
  }
  return options;
}

/** Opens the provider's WebSocket: open, refused with an HTTP answer, or not reached. */
function openUpstream(
  url: string,
  protocols: string[],
  options: ConstructorParameters<typeof WebSocket>[2],
  keepalive: SocketSettings['keepalive'],
) {
  return new Promise<Opened>((resolve) => {
    const upstream = new WebSocket(url, protocols, options);
    // The backend policy's tcp.keepalive, on the connection the session lives on.
    if (keepalive !== undefined)
      upstream.once('upgrade', (response) => applyKeepalive(response.socket as Socket, keepalive));
    // Errors after the outcome is known are the session's (it listens itself); none may go unheard.
    upstream.on('error', () => {});
    upstream.once('open', () => {
      // Nothing is read from the provider (its session.created...) until the client's side is there to take it.
      upstream.pause();
      resolve({ kind: 'open', upstream });
    });
    upstream.once('unexpected-response', (request, response) => {
      const chunks: Buffer[] = [];
      let size = 0;
      const done = () => {
        request.destroy();
        resolve({
          kind: 'refused',
          status: response.statusCode ?? 502,
          headers: response.headers,
          body: Buffer.concat(chunks),
        });
      };
      response.on('data', (chunk: Buffer) => {
        if (size >= MAX_REFUSAL_BYTES) return;
        chunks.push(chunk.subarray(0, MAX_REFUSAL_BYTES - size));
        size += chunk.length;
      });
      response.once('end', done);
      response.once('error', done);
    });
    upstream.once('error', (error: Error) =>
      resolve({
        kind: 'failed',
        failure: /timed out/i.test(error.message) ? 'timeout' : 'connect',
        message: error.message,
      }),
    );
  });
}

/** Headers for the upstream handshake: the client's without its own handshake's. */
function handshakeless(headers: Record<string, string | string[]>): Record<string, string | string[]> {
  for (const name of HANDSHAKE_HEADERS) delete headers[name];
  return headers;
}

/** The client's query without the key parameters of the Realtime APIs (gw sends the provider's credential). */
function withoutKeys(clientQuery: string): string {
  const query = new URLSearchParams(clientQuery);
  for (const name of KEY_QUERY_PARAMETERS) query.delete(name);
  return query.toString();
}

/**
 * Serves a Realtime session opened by `upgrade`, trying the candidates from `next` (at most
 * `total`) until one provider's WebSocket opens.
 */
export async function serveRealtime(
  routed: RoutedRequest,
  upgrade: WebSocketUpgrade,
  total: number,
  next: () => Candidate | undefined,
): Promise<void> {
  const { req, res, record } = routed;
  const llm = new LlmRecord();
  record.llm = llm;
  llm.streaming = true;
  const clientModel = new URLSearchParams(routed.forward.query).get('model') ?? undefined;
  llm.requestModel = clientModel ?? '';
  const problem = handshakeProblem(req);
  if (problem !== undefined) return sendClientError(res, 'realtime', 400, problem);
  // A policy on the response body (extProc's response phase, traffic.buffer.response) has no
  // body to work on in a session: the session is refused rather than opened without it.
  if (res !== upgrade.response)
    return sendGatewayError(
      res,
      record,
      'realtime',
      501,
      "A Realtime session cannot be opened on this route: a traffic policy works on response bodies (extProc's response phase, buffer.response), and a WebSocket session has none. Remove that policy from the route serving Realtime.",
    );
  let clientGone = false;
  req.socket.once('close', () => {
    clientGone = true;
  });
  const clientHeaders = handshakeless(clientHeadersForUpstream(routed));
  const protocols = offeredProtocols(req);
  const clientQuery = withoutKeys(routed.forward.query);
  const maxPayload = routed.route.maxBufferBytes;
  let candidate = next();
  for (let attemptNumber = 1; candidate; attemptNumber++, candidate = next()) {
    const { endpoint } = candidate;
    if (candidate.rejection)
      return sendGatewayError(res, record, 'realtime', candidate.rejection.status, candidate.rejection.message);
    // A session's events are not read by gw: guarded traffic is refused rather than let through unchecked.
    if (endpoint.guards !== undefined) return sendClientError(res, 'realtime', 400, unguardableRequest('Realtime'));
    const unmoderatable = endpoint.moderation?.refusal('Realtime', true);
    if (unmoderatable !== undefined) return sendClientError(res, 'realtime', 400, unmoderatable);
    const canRetry = attemptNumber < total;
    const plan = endpoint.provider.plan({
      clientFormat: 'realtime',
      routeType: 'Realtime',
      body: undefined,
      stream: true,
      headers: req.headers,
      ...(clientModel === undefined ? {} : { realtimeModel: clientModel }),
    });
    if (plan instanceof PlanError) return sendGatewayError(res, record, 'realtime', plan.status, plan.message);
    if (endpoint.connection.socketPath !== undefined)
      return sendGatewayError(res, record, 'realtime', 502, 'A Realtime session cannot be opened over a Unix socket.');
    // The provider's own extAuth and transformation check and change its handshake (decision 0045).
    let attempt = { routed, headers: { ...clientHeaders }, query: clientQuery };
    let subrequest: Subrequest | undefined;
    if (endpoint.requestPolicies) {
      const own = await providerSubrequest(routed, endpoint.requestPolicies, Buffer.alloc(0), 'realtime');
      if (own === undefined) return;
      subrequest = own.subrequest;
      const ownHeaders = handshakeless(clientHeadersForUpstream(own.routed));
      attempt = { routed: own.routed, headers: ownHeaders, query: withoutKeys(own.routed.forward.query) };
    }
    const headers = attempt.headers;
    const prepared = await prepareUpstreamRequest(
      attempt.routed,
      endpoint,
      plan,
      headers,
      undefined,
      celContext(record),
      attempt.query,
    );
    if (typeof prepared !== 'string') {
      record.error = prepared.logText;
      if (canRetry && prepared.status >= 500) {
        subrequest?.abandon();
        continue;
      }
      return sendGatewayError(
        res,
        record,
        'realtime',
        prepared.status,
        prepared.status < 500 ? prepared.message : prepared.logText,
      );
    }
    llm.providerFamily = endpoint.provider.family;
    llm.genAiProvider = endpoint.genAiProviderName;
    llm.providerName = endpoint.name;
    if (candidate.backend !== undefined) record.backend = candidate.backend;
    record.upstreamHost = hostAndPort(plan.origin);
    record.upstreamStartTime = process.hrtime.bigint();
    const { origin } = plan;
    const host = origin.host.includes(':') ? `[${origin.host}]` : origin.host;
    // TLS as the provider's connection settings say (a backend tls policy originates it on any port).
    const url = `${endpoint.connection.tls === undefined ? 'ws:' : 'wss:'}//${host}:${origin.port}${prepared}`;
    const started = performance.now();
    const opened = await openUpstream(
      url,
      protocols,
      upstreamOptions(endpoint.connection, headers, maxPayload, attemptDeadline(routed, endpoint)),
      // Through a tunnel the socket to the proxy has its keepalive already (the dial sets it).
      endpoint.connection.tunnel === undefined ? endpoint.connection.keepalive : undefined,
    );
    const latencyMs = performance.now() - started;
    const observed: ObservedResponse =
      opened.kind === 'failed'
        ? { connectionFailed: true, latencyMs }
        : { status: opened.kind === 'open' ? 101 : opened.status, latencyMs };
    const unhealthy = endpoint.unhealthy(observed);
    candidate.report({ ...observed, unhealthy });
    if (opened.kind === 'open') {
      if (clientGone) {
        opened.upstream.terminate();
        record.error = 'client went away';
        return;
      }
      return relay(routed, upgrade, opened.upstream, maxPayload);
    }
    record.upstreamEndTime = process.hrtime.bigint();
    if (unhealthy && canRetry && !clientGone) {
      record.error = opened.kind === 'failed' ? `upstream ${opened.failure}` : `upstream status ${opened.status}`;
      subrequest?.abandon();
      continue;
    }
    if (opened.kind === 'refused') {
      // The provider's own answer (its status and error body) is the client's.
      record.error = `upstream status ${opened.status}`;
      const contentType = opened.headers['content-type'];
      res.writeHead(opened.status, {
        ...(contentType === undefined ? {} : { 'content-type': String(contentType) }),
        'content-length': opened.body.length,
      });
      res.end(opened.body);
      return;
    }
    record.error = `upstream ${opened.failure}: ${opened.message}`;
    const message =
      opened.failure === 'timeout' ? 'The provider did not answer in time.' : 'The provider could not be reached.';
    return sendClientError(res, 'realtime', opened.failure === 'timeout' ? 504 : 502, message);
  }
  sendClientError(res, 'realtime', 502, 'No provider could serve the request.');
}

/**
 * The close code ws sends a peer whose message it cannot take (a message over maxPayload: 1009;
 * invalid UTF-8 text: 1007; any other protocol error: 1002), by ws's error code; the other side
 * of the session is closed with the same code at once (the failing side stops reading, so its
 * own close would come only when its connection ends).
 */
function receiveErrorCode(error: Error): number | undefined {
  const code = (error as NodeJS.ErrnoException).code ?? '';
  if (!code.startsWith('WS_ERR_')) return undefined;
  if (code === 'WS_ERR_UNSUPPORTED_MESSAGE_LENGTH') return 1009;
  if (code === 'WS_ERR_INVALID_UTF8') return 1007;
  return 1002;
}

/** A close code that may be sent in a close frame (RFC 6455 section 7.4), else undefined. */
function sendableCode(code: number): number | undefined {
  if ((code >= 1000 && code <= 1003) || (code >= 1007 && code <= 1014) || (code >= 3000 && code <= 4999)) return code;
  return undefined;
}

/** Accepts the client's upgrade and relays messages between it and the open `upstream` until either closes. */
function relay(routed: RoutedRequest, upgrade: WebSocketUpgrade, upstream: WebSocket, maxPayload: number): void {
  const { req, record } = routed;
  const llm = record.llm!;
  const meter = new RealtimeMeter();
  const chosen = upstream.protocol;
  const server = new WebSocketServer({
    noServer: true,
    maxPayload,
    perMessageDeflate: false,
    clientTracking: false,
    // The subprotocol the provider chose, when the client offered it.
    handleProtocols: (offered) => (chosen !== '' && offered.has(chosen) ? chosen : false),
  });
  // The 101 carries what the route's response hooks (header filters and policies) set, as any
  // answer of the route would; the handshake's own fields stay ws's.
  server.on('headers', (lines) => {
    const response = upgrade.response;
    response.statusCode = 101;
    runResponseHooks(response);
    const set = response.getHeaders();
    for (const name in set) {
      if (HANDSHAKE_RESPONSE_HEADERS.has(name)) continue;
      const value = set[name];
      for (const item of Array.isArray(value) ? value : [value]) if (item !== undefined) lines.push(`${name}: ${item}`);
    }
  });
  const { socket, head } = upgrade.take();
  let accepted = false;
  let ended = false;
  let idle: NodeJS.Timeout | undefined;
  /** Why the session ended abnormally, the first reason only; empty while nothing went wrong. */
  let failure = '';
  const fail = (reason: string) => {
    failure ||= reason;
  };
  const finish = () => {
    if (ended) return;
    ended = true;
    clearTimeout(idle);
    record.upstreamEndTime = process.hrtime.bigint();
    if (meter.usage !== undefined) llm.usage = meter.usage;
    if (meter.model !== undefined) llm.responseModel = meter.model;
    priceLlmRequest(record);
    if (meter.firstOutputTime !== 0n) llm.firstTokenTime = meter.firstOutputTime;
    record.error = failure;
    upgrade.end(failure === '');
  };
  // The handshake may fail on the client's side (it went away): the session is over then.
  socket.once('close', () => {
    if (accepted) return;
    fail('the client went away during the WebSocket handshake');
    upstream.close(1001);
    finish();
  });
  /** Closes one side with `code` unless it is closing already. */
  const closeIfOpen = (target: WebSocket, code: number) => {
    if (target.readyState === WebSocket.OPEN || target.readyState === WebSocket.CONNECTING) target.close(code);
  };
  upstream.on('error', (error: Error) => {
    fail(`upstream: ${error.message}`);
    const code = receiveErrorCode(error);
    if (code !== undefined && accepted) closeIfOpen(clientSocket!, code);
  });
  let clientSocket: WebSocket | undefined;
  server.handleUpgrade(req, socket, head, (client) => {
    accepted = true;
    clientSocket = client;
    const restartIdle = () => {
      clearTimeout(idle);
      idle = setTimeout(() => {
        fail('idle timeout');
        client.close(1001, 'idle timeout');
        upstream.close(1001, 'idle timeout');
      }, REALTIME_IDLE_TIMEOUT_MS);
    };
    restartIdle();
    client.on('error', (error: Error) => {
      fail(`client: ${error.message}`);
      const code = receiveErrorCode(error);
      if (code !== undefined) closeIfOpen(upstream, code);
    });
    pipe(client, upstream, (data) => {
      restartIdle();
      record.bytesIn += data.length;
    });
    pipe(upstream, client, (data, isBinary) => {
      restartIdle();
      record.bytesOut += data.length;
      if (!isBinary) meter.serverText(data);
    });
    let open = 2;
    const closed = (other: WebSocket, code: number, reason: Buffer, side: 'client' | 'upstream') => {
      // A close without a code (1005) is passed on without one; a connection that dropped without
      // a close (1006, 1015) closes the other side with 1011 (the provider went away) or 1001 (the
      // client did); every other code is passed on as it is, with its reason.
      const sendable = sendableCode(code);
      if (code !== 1000 && code !== 1005 && sendable === undefined && side === 'upstream')
        fail(`upstream closed abnormally (${code})`);
      // Reading from the other side may be paused (backpressure): its close reply must be read.
      if (other.isPaused) other.resume();
      if (other.readyState === WebSocket.OPEN || other.readyState === WebSocket.CONNECTING) {
        if (sendable !== undefined) other.close(sendable, reason);
        else if (code === 1005) other.close();
        else other.close(side === 'upstream' ? 1011 : 1001);
      }
      if (--open === 0) finish();
    };
    client.once('close', (code, reason) => closed(upstream, code, reason, 'client'));
    if (upstream.readyState === WebSocket.CLOSED) {
      // The provider's connection dropped while the client's handshake was under way: its close
      // event is past.
      fail('the provider closed during the client handshake');
      open--;
      client.close(1011);
      return;
    }
    upstream.once('close', (code, reason) => closed(client, code, reason, 'upstream'));
    upstream.resume();
  });
}

/** Relays `from`'s messages to `to` as they are, pausing `from` while `to` has too much queued. */
function pipe(from: WebSocket, to: WebSocket, seen: (data: Buffer, isBinary: boolean) => void): void {
  const resume = () => {
    if (from.isPaused && to.bufferedAmount <= LOW_WATER_BYTES) from.resume();
  };
  from.on('message', (raw: RawData, isBinary: boolean) => {
    const data = raw as Buffer;
    seen(data, isBinary);
    if (to.readyState !== WebSocket.OPEN) return;
    to.send(data, { binary: isBinary }, resume);
    if (to.bufferedAmount > HIGH_WATER_BYTES && !from.isPaused) from.pause();
  });
}
