// A byte stream to a plain HTTP backend's address, for a CONNECT tunnel (Frontend.connect Route):
// a TCP connection, or TLS with the backend policy's settings when the backend is reached over TLS
// — through the backend policy's CONNECT proxy when it sets a tunnel.
import { type Socket, connect as tcpConnect } from 'node:net';
import type { Duplex } from 'node:stream';
import { connect as tlsConnect } from 'node:tls';
import { applyKeepalive } from '../transport/tcp-keepalive.ts';
import { dialThroughProxy } from './connect-tunnel.ts';
import type { ConnectionSettings } from './connection-settings.ts';

/**
 * Opens a byte stream to an HTTP backend's address as its connection settings say (connect
 * deadline, TCP keepalive, TLS — without ALPN: the bytes are the client's).
 */
export function openTunnel(settings: ConnectionSettings): Promise<Duplex> {
  const { host, port, socketPath, connectTimeoutMs, keepalive, tls, tunnel } = settings.socket;
  if (tunnel !== undefined) {
    const withoutAlpn = tls === undefined ? undefined : { ...tls, ALPNProtocols: undefined };
    return dialThroughProxy({ host, port, tls: withoutAlpn, connectTimeoutMs, proxy: tunnel });
  }
  const where = socketPath !== undefined ? { path: socketPath } : { host, port };
  return new Promise((resolve, reject) => {
    let socket: Socket;
    if (tls !== undefined) {
      const { ALPNProtocols: _alpn, ...withoutAlpn } = tls;
      socket = tlsConnect({ ...withoutAlpn, ...where }, () => settle());
    } else socket = tcpConnect(where as { host: string; port: number }, () => settle());
    if (keepalive) applyKeepalive(socket, keepalive);
    const deadline = setTimeout(() => socket.destroy(new Error('connect timeout')), connectTimeoutMs);
    const settle = () => {
      clearTimeout(deadline);
      socket.off('error', fail);
      resolve(socket);
    };
    const fail = (error: Error) => {
      clearTimeout(deadline);
      reject(error);
    };
    socket.once('error', fail);
  });
}
