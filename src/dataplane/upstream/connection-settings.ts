// How gw connects to one destination: the effective backend policy's tcp, tls and http parts
// turned into undici pool options. Secrets and ConfigMaps (CA bundles, client certificates) come
// from the configuration's resolved data; nothing is looked up per request.
import type { ConnectionOptions } from 'node:tls';
import type { Client, Pool } from 'undici';
import { undici } from '../../util/undici.ts';
import { durationMs } from '../../util/units.ts';
import type { Http1PoolOptions } from './http1/pool.ts';

export interface BackendConnectionPolicy {
  tcp?: { connectTimeout?: string; keepalive?: { time?: string; interval?: string; retries?: number } };
  tls?: {
    sni?: string;
    insecureSkipVerify?: 'All' | 'Hostname';
    caCertificateRefs?: { name: string; kind?: string }[];
    mtlsCertificateRef?: { name: string }[];
    alpnProtocols?: string[];
    verifySubjectAltNames?: string[];
  };
  http?: { version?: 'HTTP1' | 'HTTP2'; requestTimeout?: string };
}

/** A destination: where to connect, and whether to originate TLS. */
export interface Destination {
  protocol: 'http:' | 'https:';
  host: string;
  port: number;
  /**
   * The HTTP version the destination itself asks for when the policy sets none (a Service port's
   * appProtocol): BackendHTTP.version's inference rules.
   */
  inferredVersion?: 'HTTP1' | 'HTTP2';
  /** A Unix domain socket to connect to instead of host:port. */
  socketPath?: string;
}

export type DataLookup = (ref: string) => Record<string, string> | undefined;

export interface ConnectionSettings {
  /** The key under which pools with these settings are shared. */
  key: string;
  origin: string;
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
 * Pool options for a destination under a connection policy. Throws ConnectionSettingsError
 * (with the policy field) when a referenced CA or certificate is missing.
 */
export function connectionSettings(
  destination: Destination,
  policy: BackendConnectionPolicy | undefined,
  data: DataLookup,
  namespace: string,
): ConnectionSettings {
  const tcp = policy?.tcp;
  const connect: Record<string, unknown> = {
    timeout: tcp?.connectTimeout ? durationMs(tcp.connectTimeout) : DEFAULT_CONNECT_TIMEOUT_MS,
  };
  if (tcp?.keepalive) {
    connect.keepAlive = true;
    connect.keepAliveInitialDelay = durationMs(tcp.keepalive.time ?? '180s');
  }
  if (destination.socketPath) connect.socketPath = destination.socketPath;
  const tls = policy?.tls;
  let tlsOptions: ConnectionOptions | undefined;
  // BackendHTTP.version, else inferred: the Service's appProtocol (h2c, gRPC), else HTTP/1.1 — for
  // plaintext HTTP the original protocol, which is HTTP/1.1 on gw's listeners, and HTTP1 for HTTPS.
  const http2 = (policy?.http?.version ?? destination.inferredVersion) === 'HTTP2';
  if (destination.protocol === 'https:') {
    tlsOptions = { servername: tls?.sni ?? hostForSni(destination.host) };
    if (tls?.insecureSkipVerify === 'All') tlsOptions.rejectUnauthorized = false;
    if (tls?.insecureSkipVerify === 'Hostname') tlsOptions.checkServerIdentity = () => undefined;
    else if (tls?.verifySubjectAltNames) {
      const names = tls.verifySubjectAltNames;
      tlsOptions.checkServerIdentity = (_host, certificate) => {
        const altNames = (certificate.subjectaltname ?? '')
          .split(', ')
          .map((entry) => entry.replace(/^[A-Za-z ]+:/, ''));
        return names.some((name) => altNames.includes(name))
          ? undefined
          : new Error(`the certificate names none of ${names.join(', ')}`);
      };
    }
    const caRef = tls?.caCertificateRefs?.[0];
    if (caRef) {
      const key = `${caRef.kind ?? 'ConfigMap'} ${namespace}/${caRef.name}`;
      const ca = data(key)?.['ca.crt'];
      if (!ca) throw new ConnectionSettingsError('tls.caCertificateRefs[0]', `${key} has no ca.crt`);
      tlsOptions.ca = ca;
    }
    const mtlsRef = tls?.mtlsCertificateRef?.[0];
    if (mtlsRef) {
      const key = `Secret ${namespace}/${mtlsRef.name}`;
      const secret = data(key);
      if (!secret?.['tls.crt'] || !secret['tls.key'])
        throw new ConnectionSettingsError('tls.mtlsCertificateRef[0]', `${key} needs tls.crt and tls.key`);
      tlsOptions.cert = secret['tls.crt'];
      tlsOptions.key = secret['tls.key'];
      if (!tlsOptions.ca && secret['ca.cert']) tlsOptions.ca = secret['ca.cert'];
    }
    if (tls?.alpnProtocols) tlsOptions.ALPNProtocols = tls.alpnProtocols;
    Object.assign(connect, tlsOptions);
  }
  const options: Pool.Options = {
    connect: connect as Pool.Options['connect'],
    keepAliveTimeout: UPSTREAM_KEEP_ALIVE_MS,
    keepAliveMaxTimeout: UPSTREAM_KEEP_ALIVE_MS,
    // Timeouts of the response are the request's (requestTimeout, route timeouts); undici's own
    // defaults (300 s) stay as an outer bound.
    pipelining: 1,
  };
  if (http2) {
    if (destination.protocol === 'https:') options.allowH2 = true;
    // HTTP/2 with prior knowledge over plain TCP: undici's Pool hands its clients a ready-made
    // connector, which drops useH2c, so the clients are made here with the connect options.
    else
      options.factory = (origin, clientOptions) =>
        new (undici().Client)(origin, { ...clientOptions, connect, allowH2: true, useH2c: true } as Client.Options);
  }
  const origin = destination.socketPath
    ? 'http://localhost'
    : `${destination.protocol}//${destination.host.includes(':') ? `[${destination.host}]` : destination.host}:${destination.port}`;
  const http1: Http1PoolOptions | undefined = http2
    ? undefined
    : {
        host: destination.host,
        port: destination.port,
        socketPath: destination.socketPath,
        hostHeader: new URL(origin).host,
        tls: tlsOptions,
        connectTimeoutMs: connect.timeout as number,
        tcpKeepAliveDelayMs: tcp?.keepalive ? (connect.keepAliveInitialDelay as number) : undefined,
        keepAliveMs: UPSTREAM_KEEP_ALIVE_MS,
      };
  return {
    key: JSON.stringify([
      origin,
      destination.socketPath ?? '',
      policy?.tcp ?? null,
      policy?.tls ?? null,
      http2,
      namespace,
    ]),
    origin,
    options,
    http1,
    requestTimeoutMs: policy?.http?.requestTimeout ? durationMs(policy.http.requestTimeout) : undefined,
  };
}

/** SNI must be a hostname: an IP address is not sent. */
function hostForSni(host: string): string | undefined {
  return /^[0-9.]+$/.test(host) || host.includes(':') ? undefined : host;
}
