// TCP keepalive (the API's Keepalive: time, interval, retries) as the three socket options Linux
// takes, for accepted connections (Frontend.tcp) and backend connections (BackendTCP) alike.
// The kernel counts whole seconds from 1 to 32767 (TCP_KEEPIDLE, TCP_KEEPINTVL) and up to 127
// probes (TCP_KEEPCNT); node (libuv) quietly keeps the kernel's defaults for a value outside
// that (measured: 500ms or 10h left 7200 s, 75 s and 9 probes), so such a value is refused here,
// when the configuration is compiled, instead of being ignored on every connection.
import type { Socket } from 'node:net';
import type { Keepalive } from '../../api/types/backend-connection.ts';
import { durationMs } from '../../util/units.ts';

/** Keepalive as node's socket.setKeepAlive takes it (milliseconds, whole seconds). */
export interface TcpKeepalive {
  readonly initialDelayMs: number;
  readonly intervalMs: number;
  readonly count: number;
}

/** A keepalive value the kernel cannot take: its field (time, interval, retries) and why. */
export interface KeepaliveProblem {
  readonly field: 'time' | 'interval' | 'retries';
  readonly message: string;
}

/** Spec: TCP keepalive retries default 9, time and interval default 180s. */
const DEFAULT_KEEPALIVE = { time: '180s', interval: '180s', retries: 9 } as const;

/** Linux's bounds (include/net/tcp.h MAX_TCP_KEEPIDLE, MAX_TCP_KEEPINTVL, MAX_TCP_KEEPCNT). */
const MAX_KEEPALIVE_SECONDS = 32_767;
const MAX_KEEPALIVE_PROBES = 127;

/** The socket options of a Keepalive (unset fields take the spec's defaults), or what the kernel cannot take. */
export function compileKeepalive(keepalive: Partial<Keepalive>): TcpKeepalive | KeepaliveProblem {
  const configured = { ...DEFAULT_KEEPALIVE, ...keepalive };
  const initialDelayMs = wholeSeconds(configured.time);
  if (typeof initialDelayMs === 'string') return { field: 'time', message: initialDelayMs };
  const intervalMs = wholeSeconds(configured.interval);
  if (typeof intervalMs === 'string') return { field: 'interval', message: intervalMs };
  const count = configured.retries;
  if (!Number.isInteger(count) || count < 1 || count > MAX_KEEPALIVE_PROBES)
    return { field: 'retries', message: `${count} is not a number of probes from 1 to ${MAX_KEEPALIVE_PROBES}` };
  return { initialDelayMs, intervalMs, count };
}

export function isKeepaliveProblem(value: TcpKeepalive | KeepaliveProblem): value is KeepaliveProblem {
  return 'message' in value;
}

/** Switches keepalive on for a socket with all three options (idle time, probe interval, probe count). */
export function applyKeepalive(socket: Socket, keepalive: TcpKeepalive): void {
  socket.setKeepAlive({
    enable: true,
    initialDelay: keepalive.initialDelayMs,
    interval: keepalive.intervalMs,
    count: keepalive.count,
  });
}

/** Milliseconds of a Duration that is a whole number of seconds in the kernel's range, else why not. */
function wholeSeconds(duration: string): number | string {
  const ms = durationMs(duration);
  if (ms % 1000 !== 0 || ms < 1000 || ms > MAX_KEEPALIVE_SECONDS * 1000)
    return `${duration} is not a whole number of seconds from 1s to ${MAX_KEEPALIVE_SECONDS}s, which is what the kernel's TCP keepalive takes`;
  return ms;
}
