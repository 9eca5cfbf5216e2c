// Downstream HTTP CONNECT (Frontend.connect). Unset and Deny answer 405, as agentgateway does.
// Route matches the CONNECT (authority host:port, path "/") against the listener's routes, runs
// the route's traffic policies (authentication, authorization, rate limits...), connects to the
// chosen HTTP backend's address (with its backend TLS, if any) and tunnels bytes both ways.
// Tunnel terminates the CONNECT and hands the tunnel to this data plane's listener on the port
// the authority names, as a new downstream connection (TLS, HTTP and its policies all apply there).
import type { IncomingMessage, ServerResponse } from 'node:http';
import { ServerResponse as Http1Response } from 'node:http';
import type { Http2ServerRequest, Http2ServerResponse } from 'node:http2';
import type { Duplex } from 'node:stream';
import type { ConnectAuthority } from '../backends/backend.ts';
import { DestinationRefused } from '../backends/forward-proxy/destination-refused.ts';
import { RefusedBackend } from '../backends/refused.ts';
import type { CompiledPort } from '../config/compile.ts';
import { selectListener } from '../config/compile.ts';
import { PolicyExchange } from '../policies/exchange.ts';
import { NO_TRAFFIC_POLICY, runSteps } from '../policies/pipeline.ts';
import type { ExchangeOutcome } from '../proxy/client-response.ts';
import { sendLocalResponse, sendText } from '../proxy/direct-response.ts';
import { forwardedRequestHeaders } from '../proxy/headers.ts';
import { sendOwnFailure } from '../proxy/own-failure.ts';
import { type RequestScope, takeRule } from '../proxy/request-handler.ts';
import type { HeaderBag } from '../routing/filters.ts';
import { routingHost } from '../routing/host.ts';
import type { RequestRecord } from '../telemetry/request-record.ts';
import type { PeerAddress } from './proxy-protocol.ts';

/** A CONNECT request, HTTP/1.1 (the socket is handed over) or HTTP/2 (one stream). */
export interface ConnectDownstream {
  readonly req: IncomingMessage;
  /** Answers that are not a tunnel (errors, policy answers) go here. */
  readonly res: ServerResponse;
  /** The authority asked for (host:port). */
  readonly authority: string;
  /** Answers 200 and gives the tunnel: the client's bytes after the CONNECT, and the way back. */
  open(): Duplex;
  /** Called once when the exchange is over: answered, or its tunnel closed. */
  onDone(callback: (outcome: ExchangeOutcome) => void): void;
}

const ALLOWED_METHODS = 'GET, HEAD, POST, PUT, PATCH, DELETE, OPTIONS';

/** An HTTP/1.1 CONNECT: node hands over the socket (and any bytes read past the request head). */
export function http1Connect(req: IncomingMessage, socket: Duplex, head: Buffer): ConnectDownstream {
  const res = new Http1Response(req);
  res.assignSocket(socket as never);
  // The server no longer manages this socket: an answer that is not a tunnel ends it.
  res.setHeader('connection', 'close');
  res.once('finish', () => socket.end());
  let done: ((outcome: ExchangeOutcome) => void) | undefined;
  let tunnel = false;
  const answered = () => {
    if (!tunnel) done?.(res);
  };
  res.once('finish', answered);
  socket.once('close', answered);
  return {
    req,
    res,
    authority: req.url ?? '',
    open() {
      tunnel = true;
      res.detachSocket(socket as never);
      socket.write('HTTP/1.1 200 Connection Established\r\n\r\n');
      if (head.length > 0) socket.unshift(head);
      tunnelClosed(socket, (clean) => done?.(tunnelOutcome(clean)));
      return socket;
    },
    onDone(callback) {
      done = once(callback);
    },
  };
}

/** An HTTP/2 CONNECT (RFC 9113 section 8.5): the tunnel is the request's stream. */
export function http2Connect(req: Http2ServerRequest, res: Http2ServerResponse): ConnectDownstream {
  let done: ((outcome: ExchangeOutcome) => void) | undefined;
  let tunnel = false;
  const answered = () => {
    if (!tunnel) done?.(res as unknown as ServerResponse);
  };
  res.once('finish', answered);
  res.once('close', answered);
  return {
    req: req as unknown as IncomingMessage,
    res: res as unknown as ServerResponse,
    authority: req.authority ?? '',
    open() {
      tunnel = true;
      res.writeHead(200); // sends the HEADERS frame at once
      tunnelClosed(req.stream, (clean) => done?.(tunnelOutcome(clean)));
      return req.stream;
    },
    onDone(callback) {
      done = once(callback);
    },
  };
}

function once<T>(callback: (value: T) => void): (value: T) => void {
  let called = false;
  return (value) => {
    if (called) return;
    called = true;
    callback(value);
  };
}

function tunnelOutcome(clean: boolean): ExchangeOutcome {
  return { statusCode: 200, getHeaders: () => ({}), writableEnded: clean, writableFinished: clean };
}

function tunnelClosed(stream: Duplex, callback: (clean: boolean) => void): void {
  let failed = false;
  stream.once('error', () => {
    failed = true;
  });
  stream.once('close', () => callback(!failed));
}

export interface ConnectContext {
  readonly mode: 'Deny' | 'Route' | 'Tunnel' | undefined;
  readonly port: CompiledPort;
  readonly record: RequestRecord;
  readonly scope: RequestScope;
  /** The client (its PROXY-header address when there was one). */
  readonly source: PeerAddress;
  /** Tunnel: this data plane's listener on a port, which takes a tunnel as a new connection. */
  readonly tunnelTarget: (port: number) => ((stream: Duplex, source: PeerAddress) => void) | undefined;
}

/** Serves one CONNECT request as the port's Frontend.connect says. */
export async function serveConnect(downstream: ConnectDownstream, context: ConnectContext): Promise<void> {
  const { res } = downstream;
  const { record } = context;
  // A CONNECT's target is its authority (its Host header, if any, names the proxy).
  record.host = downstream.authority;
  record.path = '/';
  record.query = '';
  if (context.mode === undefined || context.mode === 'Deny')
    return void sendText(res, 405, 'CONNECT is not allowed here', { allow: ALLOWED_METHODS });
  const target = parseAuthority(downstream.authority);
  if (!target) return void sendText(res, 400, 'CONNECT needs a host:port authority');
  if (context.mode === 'Route') return routeConnect(downstream, context, target);
  const accept = context.tunnelTarget(target.port);
  if (!accept) return void sendText(res, 404, `no gateway listener on port ${target.port}`);
  accept(downstream.open(), context.source);
}

/** host:port, the port 1-65535, an IPv6 host in brackets. */
function parseAuthority(authority: string): { host: string; port: number } | undefined {
  const match = /^(\[[0-9A-Fa-f:.]+\]|[^:[\]/\s@]+):([0-9]{1,5})$/.exec(authority);
  if (!match) return undefined;
  const port = Number(match[2]);
  if (port < 1 || port > 65535) return undefined;
  const host = match[1]!.startsWith('[') ? match[1]!.slice(1, -1) : match[1]!;
  return { host, port };
}

async function routeConnect(
  downstream: ConnectDownstream,
  context: ConnectContext,
  target: ConnectAuthority,
): Promise<void> {
  const { req, res, authority } = downstream;
  const { record, scope } = context;
  const listener = selectListener(context.port, routingHost(authority));
  if (!listener) return void sendText(res, 404, 'no listener for this host');
  record.listener = listener.config.name;
  scope.telemetry = listener.telemetry;
  listener.telemetry?.start(record, req.headers);
  if (listener.refused) return void sendOwnFailure(res, record, listener.refused);
  const forward = { path: '/', query: '', headers: forwardedRequestHeaders(req.headers) as HeaderBag };
  let exchange: PolicyExchange | undefined;
  const policyExchange = () => {
    if (!exchange) {
      exchange = scope.exchange = new PolicyExchange(req, res, record, forward);
      // A CONNECT has no request body: what follows its head is the tunnel's.
      exchange.body = Buffer.alloc(0);
    }
    return exchange;
  };
  if (listener.preRouting !== NO_TRAFFIC_POLICY) {
    const answer =
      (await runSteps(listener.preRouting.beforeFilters, policyExchange())) ??
      (await runSteps(listener.preRouting.afterFilters, policyExchange()));
    if (answer) return void sendLocalResponse(res, answer);
  }
  const match = listener.table.match({
    host: authority,
    path: '/',
    query: '',
    method: 'CONNECT',
    headers: forward.headers as IncomingMessage['headers'],
  });
  const rule = match ? listener.rules.get(match.rule) : undefined;
  if (!rule) return void sendText(res, 404, 'no route matches this request');
  const unusable = takeRule(record, rule);
  if (unusable) return void sendOwnFailure(res, record, unusable);
  if (rule.policies !== NO_TRAFFIC_POLICY) {
    const answer =
      (await runSteps(rule.policies.beforeFilters, policyExchange())) ??
      (await runSteps(rule.policies.afterFilters, policyExchange()));
    if (answer) return void sendLocalResponse(res, answer);
  }
  const chosen = rule.backends.pick();
  if (!chosen) return void sendOwnFailure(res, record, 'the route has no backend a CONNECT can be tunneled to');
  record.backend = chosen.name;
  record.backendType = chosen.backend.type;
  // The backend's request policies (its extAuth decides whether the tunnel opens).
  if (chosen.policies.steps.length > 0) {
    const answer = await runSteps(chosen.policies.steps, policyExchange());
    if (answer) return void sendLocalResponse(res, answer);
  }
  const tunnel = chosen.backend.tunnel;
  // A backend that cannot be served answers as it would any request; other kinds cannot take a tunnel.
  if (!tunnel) {
    if (chosen.backend instanceof RefusedBackend)
      return void sendOwnFailure(res, record, chosen.backend.message, chosen.backend.status);
    return void sendOwnFailure(res, record, `a CONNECT cannot be tunneled to an ${chosen.backend.type} backend`);
  }
  record.upstreamStartTime = process.hrtime.bigint();
  let upstream: Duplex;
  try {
    upstream = await tunnel(target);
  } catch (error) {
    record.upstreamEndTime = process.hrtime.bigint();
    // A destination the backend refuses (a dynamic forward proxy's rules) is answered as it says.
    if (error instanceof DestinationRefused) {
      record.error = error.logText;
      return void sendText(res, error.status, error.message);
    }
    record.error = `upstream connect failure: ${(error as Error).message}`;
    return void sendText(res, 503, 'upstream connect failure');
  }
  record.upstreamEndTime = process.hrtime.bigint();
  if (res.destroyed || req.destroyed) {
    upstream.destroy();
    return;
  }
  splice(downstream.open(), upstream);
}

/** Pipes two streams into each other; when either closes or fails, both are closed. */
export function splice(a: Duplex, b: Duplex): void {
  a.pipe(b);
  b.pipe(a);
  const closeBoth = () => {
    a.destroy();
    b.destroy();
  };
  a.once('close', closeBoth);
  b.once('close', closeBoth);
  a.on('error', closeBoth);
  b.on('error', closeBoth);
}
