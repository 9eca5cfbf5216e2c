// What a connection is made to and how its socket is opened: a destination (address, TLS or
// not, the HTTP version it asks for) and the socket settings connection-settings.ts derives from
// a backend policy. Types only, shared by the upstream modules without importing one another.
import type { ConnectionOptions } from 'node:tls';
import type { TcpKeepalive } from '../transport/tcp-keepalive.ts';
import type { TunnelProxy } from './connect-tunnel.ts';

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
  /**
   * The name TLS is for when `host` is an address resolved from it (a dynamic forward proxy
   * connects to the address it checked): the SNI and the name the certificate must carry.
   */
  serverName?: string;
}

export type DataLookup = (ref: string) => Record<string, string> | undefined;

/** The socket a connection to the destination opens, whichever client opens it. */
export interface SocketSettings {
  host: string;
  port: number;
  /** A Unix domain socket to connect to instead of host:port. */
  socketPath: string | undefined;
  /** Deadline for the connection, TLS handshake included. */
  connectTimeoutMs: number;
  /** TCP keepalive (BackendTCP.keepalive); off when undefined. */
  keepalive: TcpKeepalive | undefined;
  /**
   * TLS to originate (server name, verification, CA, client certificate, ALPN, key exchange
   * groups as `ecdhCurve`); undefined for plain TCP.
   */
  tls: ConnectionOptions | undefined;
  /**
   * The HTTP CONNECT proxy the connection goes through (BackendTunnel); undefined: direct. Then
   * host and port are the CONNECT's authority, and `tls` the backend's TLS inside the tunnel.
   */
  tunnel: TunnelProxy | undefined;
}
