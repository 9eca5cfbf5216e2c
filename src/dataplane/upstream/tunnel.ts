// A byte stream to a plain HTTP backend's address, for a CONNECT tunnel (Frontend.connect Route):
// a TCP connection, or TLS with the backend policy's settings when the backend is reached over TLS.
import { connect as tcpConnect } from 'node:net';
import type { Duplex } from 'node:stream';
import { type ConnectionOptions as TlsConnectionOptions, connect as tlsConnect } from 'node:tls';
import { type ConnectionSettings, DEFAULT_CONNECT_TIMEOUT_MS } from './connection-settings.ts';

/** Opens a byte stream to an HTTP backend's address, with its backend TLS (no ALPN: the bytes are the client's). */
export function openTunnel(settings: ConnectionSettings): Promise<Duplex> {
  const origin = new URL(settings.origin);
  const options = (settings.options.connect ?? {}) as Record<string, unknown> & TlsConnectionOptions;
  const { timeout, keepAlive, keepAliveInitialDelay, ALPNProtocols: _alpn, socketPath, ...tls } = options;
  const host = origin.hostname.startsWith('[') ? origin.hostname.slice(1, -1) : origin.hostname;
  const port = Number(origin.port || (origin.protocol === 'https:' ? 443 : 80));
  const where = typeof socketPath === 'string' ? { path: socketPath } : { host, port };
  return new Promise((resolve, reject) => {
    const socket =
      origin.protocol === 'https:'
        ? tlsConnect({ ...tls, ...where }, () => settle())
        : tcpConnect(where as { host: string; port: number }, () => settle());
    const deadline = setTimeout(
      () => socket.destroy(new Error('connect timeout')),
      typeof timeout === 'number' ? timeout : DEFAULT_CONNECT_TIMEOUT_MS,
    );
    const settle = () => {
      clearTimeout(deadline);
      socket.off('error', fail);
      if (keepAlive === true)
        socket.setKeepAlive(true, typeof keepAliveInitialDelay === 'number' ? keepAliveInitialDelay : 0);
      resolve(socket);
    };
    const fail = (error: Error) => {
      clearTimeout(deadline);
      reject(error);
    };
    socket.once('error', fail);
  });
}
