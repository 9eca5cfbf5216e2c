// How gw connects to one destination: the effective backend policy's tcp, tls, http and tunnel
// parts turned into the socket every kind of connection opens (address, connect deadline, TCP
// keepalive, TLS, the CONNECT proxy it goes through), undici pool options and gw's own HTTP/1.1
// pool options. Secrets and ConfigMaps (CA bundles, client certificates) come from the
// configuration's resolved data; nothing is looked up per request. A value that cannot be
// applied throws, naming its field.
import { type ConnectionOptions, type TLSSocket, connect as tlsConnect } from 'node:tls';
import type { buildConnector, Pool } from 'undici';
import type { BackendConnectionPolicy, Keepalive } from '../../api/types/backend-connection.ts';
import { undici } from '../../util/undici.ts';
import { durationMs } from '../../util/units.ts';
import { opensslGroups } from '../transport/key-exchange-groups.ts';
import { applyKeepalive, compileKeepalive, isKeepaliveProblem, type TcpKeepalive } from '../transport/tcp-keepalive.ts';
import { dialThroughProxy, type TunnelProxy } from './connect-tunnel.ts';
import type { DataLookup, Destination, SocketSettings } from './destination.ts';
import type { EndpointScope } from './endpoint-reference.ts';
import type { Http1PoolOptions } from './http1/pool.ts';
import { compileTunnelProxy } from './tunnel-proxy.ts';

/** The connection part of a backend policy (BackendConnectionPolicy: tcp, tls, http, tunnel). */
export type { BackendConnectionPolicy, DataLookup, Destination, SocketSettings };

export interface ConnectionSettings {
  /** The key under which pools with these settings are shared. */
  key: string;
  origin: string;
  socket: SocketSettings;
  /** undici pool options: `connect` opens `socket` (undiciConnector). */
  options: Pool.Options;
  /** gw's own HTTP/1.1 pool options (the LLM path's client); undefined for an HTTP/2 destination. */
  http1: Http1PoolOptions | undefined;
  /** Deadline for the response (BackendHTTP.requestTimeout), if any. */
  requestTimeoutMs: number | undefined;
}

/** Connect deadline when the policy sets none: a gateway must not wait on a dead host forever. */
export const DEFAULT_CONNECT_TIMEOUT_MS = 10_000;
/** Idle keep-alive connections to a backend are closed after this long. */
export const UPSTREAM_KEEP_ALIVE_MS = 60_000;

export class ConnectionSettingsError extends Error {
  readonly field: string;
  constructor(field: string, message: string) {
    super(message);
    this.field = field;
  }
}

/**
 * How to connect to a destination under a connection policy. Throws ConnectionSettingsError
 * (with the policy field) when a referenced CA or certificate is missing, a keepalive value or
 * key exchange group cannot be applied, or the tunnel's proxy cannot be used. A tunnel's
 * backendRef resolves in `tunnelScope` (the configuration's backends, and the namespace of the
 * policy that set the tunnel); without one, a tunnel is refused.
 */
export function connectionSettings(
  destination: Destination,
  policy: BackendConnectionPolicy | undefined,
  data: DataLookup,
  namespace: string,
  tunnelScope?: EndpointScope,
): ConnectionSettings {
  const tcp = policy?.tcp;
  const keepalive = tcp?.keepalive ? keepaliveOf(tcp.keepalive) : undefined;
  let tunnel: TunnelProxy | undefined;
  if (policy?.tunnel !== undefined) {
    if (tunnelScope === undefined)
      throw new ConnectionSettingsError('tunnel', 'a tunnel cannot be resolved here (no backends are in scope)');
    if (destination.socketPath !== undefined)
      throw new ConnectionSettingsError(
        'tunnel',
        'the backend is a Unix domain socket (static unixPath): there is no host and port to ask a CONNECT proxy for',
      );
    // The proxy is opened as any destination is, under its GwBackend's own tcp and tls (no tunnel).
    // The CONNECT names the host: it must be one (a configuration's hostname or address) to be written there.
    if (!/^[A-Za-z0-9.:_-]+$/.test(destination.host))
      throw new ConnectionSettingsError('tunnel', `"${destination.host}" is not a host a CONNECT request can name`);
    const compiled = compileTunnelProxy(
      policy.tunnel,
      tunnelScope,
      data,
      keepalive,
      (proxy, proxyPolicy) => connectionSettings(proxy, proxyPolicy, data, tunnelScope.namespace).socket,
    );
    if ('message' in compiled) throw new ConnectionSettingsError(compiled.field, compiled.message);
    tunnel = compiled;
  }
  // BackendHTTP.version, else inferred: the Service's appProtocol (h2c, gRPC), else HTTP/1.1 — for
  // plaintext HTTP the original protocol, which is HTTP/1.1 on gw's listeners, and HTTP1 for HTTPS.
  const http2 = (policy?.http?.version ?? destination.inferredVersion) === 'HTTP2';
  const socket: SocketSettings = {
    host: destination.host,
    port: destination.port,
    socketPath: destination.socketPath,
    connectTimeoutMs: tcp?.connectTimeout ? durationMs(tcp.connectTimeout) : DEFAULT_CONNECT_TIMEOUT_MS,
    keepalive,
    tls:
      destination.protocol === 'https:'
        ? tlsOptionsOf(destination, policy?.tls ?? {}, data, namespace, http2 ? ['h2', 'http/1.1'] : ['http/1.1'])
        : undefined,
    tunnel,
  };
  const options: Pool.Options = {
    // HTTP/2 over TLS by ALPN; over plain TCP with prior knowledge (h2c). undici's Client reads
    // allowH2 and useH2c only to build its connector, so they are given to the connector alone.
    connect: undiciConnector(socket, { allowH2: http2 && socket.tls !== undefined, h2c: http2 && !socket.tls }),
    keepAliveTimeout: UPSTREAM_KEEP_ALIVE_MS,
    keepAliveMaxTimeout: UPSTREAM_KEEP_ALIVE_MS,
    // Timeouts of the response are the request's (requestTimeout, route timeouts); undici's own
    // defaults (300 s) stay as an outer bound.
    pipelining: 1,
  };
  const origin = destination.socketPath
    ? 'http://localhost'
    : `${destination.protocol}//${destination.host.includes(':') ? `[${destination.host}]` : destination.host}:${destination.port}`;
  const http1: Http1PoolOptions | undefined = http2
    ? undefined
    : {
        host: socket.host,
        port: socket.port,
        socketPath: socket.socketPath,
        hostHeader: new URL(origin).host,
        tls: socket.tls,
        connectTimeoutMs: socket.connectTimeoutMs,
        keepalive: socket.keepalive,
        keepAliveMs: UPSTREAM_KEEP_ALIVE_MS,
        tunnel,
      };
  return {
    key: JSON.stringify([
      origin,
      destination.socketPath ?? '',
      destination.serverName ?? '',
      policy?.tcp ?? null,
      policy?.tls ?? null,
      http2,
      namespace,
      tunnel?.key ?? null,
    ]),
    origin,
    socket,
    options,
    http1,
    requestTimeoutMs: policy?.http?.requestTimeout ? durationMs(policy.http.requestTimeout) : undefined,
  };
}

/**
 * The connector undici opens `socket` with: undici's own (TLS session cache, ALPN for HTTP/2,
 * the connect deadline), built on first use so that undici loads only once a pool connects, and
 * TCP keepalive's three options set on each socket it opens (undici's connector sets only the
 * idle time, and node's positional form then probes every second, ten times).
 */
function undiciConnector(socket: SocketSettings, http2: { allowH2: boolean; h2c: boolean }): buildConnector.connector {
  if (socket.tunnel !== undefined) return tunnelConnector(socket, socket.tunnel, http2);
  // undici offers its own ALPN list (http/1.1, and h2 when allowed): another configured one
  // (tls.alpnProtocols, already restricted to what the connection speaks) needs gw's own TLS connect.
  const undiciOffers = http2.allowH2 ? ['http/1.1', 'h2'] : ['http/1.1'];
  const configured = socket.tls?.ALPNProtocols as string[] | undefined;
  if (configured && socket.socketPath === undefined && !sameMembers(configured, undiciOffers))
    return alpnConnector(socket, undiciOffers);
  let connector: buildConnector.connector | undefined;
  const { keepalive } = socket;
  return (options, callback) => {
    connector ??= undici().buildConnector({
      ...socket.tls,
      socketPath: socket.socketPath,
      timeout: socket.connectTimeoutMs,
      // Configured keepalive is set below; without it undici's default applies (60 s idle).
      ...(keepalive ? { keepAlive: false } : {}),
      allowH2: http2.allowH2,
      useH2c: http2.h2c,
    } as buildConnector.BuildOptions);
    if (!keepalive) return connector(options, callback);
    connector(options, (...result) => {
      if (result[1]) applyKeepalive(result[1], keepalive);
      callback(...result);
    });
  };
}

/**
 * A connector through the backend's CONNECT proxy: the tunnel, then the backend's TLS inside it
 * offering what the pool speaks (the configured ALPN list, else h2 when allowed, and http/1.1),
 * or HTTP/2 with prior knowledge (h2c) on the tunnel itself. TLS sessions are resumed.
 */
function tunnelConnector(
  socket: SocketSettings,
  proxy: TunnelProxy,
  http2: { allowH2: boolean; h2c: boolean },
): buildConnector.connector {
  const speaks = http2.allowH2 ? ['h2', 'http/1.1'] : ['http/1.1'];
  const alpn = (socket.tls?.ALPNProtocols as string[] | undefined) ?? speaks;
  const target = {
    host: socket.host,
    port: socket.port,
    tls: socket.tls,
    connectTimeoutMs: socket.connectTimeoutMs,
    proxy,
  };
  let session: Buffer | undefined;
  const onSession = (given: Buffer) => {
    session = given;
  };
  return (_options, callback) => {
    dialThroughProxy(target, { alpn, speaks, session, onSession }).then(
      (connected) => {
        // undici speaks HTTP/2 on a socket whose protocol says so (its own connector marks h2c the same way).
        if (http2.h2c) (connected as { alpnProtocol?: string | false }).alpnProtocol = 'h2';
        callback(null, connected);
      },
      (error: Error) => callback(error, null),
    );
  };
}

function sameMembers(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((item) => b.includes(item));
}

/** TLS sessions kept per server name for resumption, at most (the least recently stored go first). */
const MAX_TLS_SESSIONS = 64;

/**
 * A connector offering the configured ALPN list (BackendTLS.alpnProtocols, less what the
 * connection cannot speak), which undici's would replace with its own. The protocol the backend picks must be one the pool speaks
 * (`speaks`), else the connection fails — as gw's HTTP/1.1 client does for LLM providers. Connect
 * deadline, TLS session resumption and TCP keepalive as undici's connector and ours do.
 */
function alpnConnector(socket: SocketSettings, speaks: readonly string[]): buildConnector.connector {
  const sessions = new Map<string, Buffer>();
  return (options, callback) => {
    const servername = (socket.tls?.servername as string | undefined) ?? options.servername ?? options.hostname;
    let settled = false;
    const settle = (error: Error | null, connected?: TLSSocket) => {
      if (settled) return;
      settled = true;
      clearTimeout(deadline);
      if (error) callback(error, null);
      else callback(null, connected!);
    };
    const connection = tlsConnect({
      ...socket.tls,
      host: options.hostname,
      port: Number(options.port) || 443,
      servername,
      session: sessions.get(servername),
    });
    const deadline = setTimeout(() => {
      const error = Object.assign(new Error('connect timeout'), { code: 'UND_ERR_CONNECT_TIMEOUT' });
      connection.destroy(error);
    }, socket.connectTimeoutMs);
    connection.on('session', (session: Buffer) => {
      sessions.delete(servername);
      sessions.set(servername, session);
      if (sessions.size > MAX_TLS_SESSIONS) sessions.delete(sessions.keys().next().value!);
    });
    connection.once('error', (error) => settle(error));
    connection.once('secureConnect', () => {
      const chosen = connection.alpnProtocol;
      if (chosen && !speaks.includes(chosen)) {
        connection.destroy();
        const message = `the backend chose ${chosen} by ALPN, which this connection does not speak`;
        // A TLS handshake gw cannot use: a connection that could not be made (503), as any other.
        return settle(Object.assign(new Error(message), { code: 'ERR_TLS_ALPN_NOT_SPOKEN' }));
      }
      if (socket.keepalive) applyKeepalive(connection, socket.keepalive);
      settle(null, connection);
    });
  };
}

function keepaliveOf(keepalive: Partial<Keepalive>): TcpKeepalive {
  const compiled = compileKeepalive(keepalive);
  if (isKeepaliveProblem(compiled))
    throw new ConnectionSettingsError(`tcp.keepalive.${compiled.field}`, compiled.message);
  return compiled;
}

/** BackendTLS as node TLS client options. */
function tlsOptionsOf(
  destination: Destination,
  tls: NonNullable<BackendConnectionPolicy['tls']>,
  data: DataLookup,
  namespace: string,
  speaks: readonly string[],
): ConnectionOptions {
  const options: ConnectionOptions = { servername: tls.sni ?? hostForSni(destination.serverName ?? destination.host) };
  if (tls.insecureSkipVerify === 'All') options.rejectUnauthorized = false;
  if (tls.insecureSkipVerify === 'Hostname') options.checkServerIdentity = () => undefined;
  else if (tls.verifySubjectAltNames) {
    const names = tls.verifySubjectAltNames;
    options.checkServerIdentity = (_host, certificate) => {
      const altNames = (certificate.subjectaltname ?? '').split(', ').map((entry) => entry.replace(/^[A-Za-z ]+:/, ''));
      return names.some((name) => altNames.includes(name))
        ? undefined
        : new Error(`the certificate names none of ${names.join(', ')}`);
    };
  }
  const caRef = tls.caCertificateRefs?.[0];
  if (caRef) {
    const key = `${caRef.kind ?? 'ConfigMap'} ${namespace}/${caRef.name}`;
    const ca = data(key)?.['ca.crt'];
    if (!ca) throw new ConnectionSettingsError('tls.caCertificateRefs[0]', `${key} has no ca.crt`);
    options.ca = ca;
  }
  const mtlsRef = tls.mtlsCertificateRef?.[0];
  if (mtlsRef) {
    const key = `Secret ${namespace}/${mtlsRef.name}`;
    const secret = data(key);
    if (!secret?.['tls.crt'] || !secret['tls.key'])
      throw new ConnectionSettingsError('tls.mtlsCertificateRef[0]', `${key} needs tls.crt and tls.key`);
    options.cert = secret['tls.crt'];
    options.key = secret['tls.key'];
    if (!options.ca && secret['ca.cert']) options.ca = secret['ca.cert'];
  }
  if (tls.alpnProtocols) {
    // Offered in the configured order, but only what the connection speaks: a protocol it cannot
    // speak, picked by the backend, would fail the connection.
    const offered = tls.alpnProtocols.filter((protocol) => speaks.includes(protocol));
    if (offered.length === 0)
      throw new ConnectionSettingsError(
        'tls.alpnProtocols',
        `offers none of the protocols this connection speaks (${speaks.join(', ')}; h2 with http.version HTTP2)`,
      );
    options.ALPNProtocols = offered;
  }
  if (tls.keyExchangeGroups && tls.keyExchangeGroups.length > 0) {
    const groups = opensslGroups(tls.keyExchangeGroups);
    if (typeof groups !== 'string')
      throw new ConnectionSettingsError(`tls.keyExchangeGroups[${groups.index}]`, groups.message);
    options.ecdhCurve = groups;
  }
  return options;
}

/** SNI must be a hostname: an IP address is not sent. */
function hostForSni(host: string): string | undefined {
  return /^[0-9.]+$/.test(host) || host.includes(':') ? undefined : host;
}
