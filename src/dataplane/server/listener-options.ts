// The connection-level part of a Frontend policy (tcp, networkAuthorization, tls, http,
// proxyProtocol, connect), compiled once per configuration into what the listener servers apply:
// node server properties, HTTP/2 settings, per-connection socket options and checks. These act
// before a request's Host is known, so a port applies one listener's settings (see compile.ts).
import type { Settings } from 'node:http2';
import type { Frontend, FrontendConnect, FrontendHTTP } from '../../api/types/frontend.ts';
import { byteSize, durationMs } from '../../util/units.ts';
import { compileKeepalive, isKeepaliveProblem, type TcpKeepalive } from '../transport/tcp-keepalive.ts';
import { HTTP2_MAX_CONCURRENT_STREAMS } from './downstream-limits.ts';
import { compileNetworkAuthorization, type NetworkAuthorization } from './network-authorization.ts';
import type { ProxyProtocolOptions } from './proxy-protocol.ts';
import { compileTlsSettings, DEFAULT_TLS_SETTINGS, type TlsSettings } from './tls-options.ts';

export interface Http2Options {
  /** SETTINGS gw sends: per-stream window, largest frame, largest header list, concurrent streams. */
  readonly settings: Readonly<Settings>;
  /** The connection-level receive window, when configured (HTTP/2's own default is 64 KiB - 1). */
  readonly connectionWindowSize: number | undefined;
  /** PING interval; none when undefined. */
  readonly keepaliveIntervalMs: number | undefined;
  /** How long a PING may go unanswered before the connection is closed. */
  readonly keepaliveTimeoutMs: number;
}

export interface ConnectionOptions {
  readonly keepalive: TcpKeepalive | undefined;
  readonly networkAuthorization: NetworkAuthorization | undefined;
  readonly tls: TlsSettings;
  readonly http1MaxHeaders: number;
  readonly http1IdleTimeoutMs: number;
  readonly http1HeaderCase: 'Lowercase' | 'Preserve';
  readonly http2: Http2Options;
  /** Connections are closed gracefully after this long; never when undefined. */
  readonly maxConnectionDurationMs: number | undefined;
  readonly proxyProtocol: ProxyProtocolOptions | undefined;
  /** Frontend.connect.mode; unset answers CONNECT with 405. */
  readonly connect: FrontendConnect['mode'] | undefined;
}

/** Spec: http1MaxHeaders default 100. */
const DEFAULT_HTTP1_MAX_HEADERS = 100;
/** Spec: http1IdleTimeout default 10 minutes. */
const DEFAULT_HTTP1_IDLE_TIMEOUT_MS = 600_000;
/** Spec: http2FrameSize default 16kb (16Ki, HTTP/2's smallest maximum frame size). */
const DEFAULT_HTTP2_FRAME_SIZE = 16_384;
/** Spec: http2MaxHeaderSize default 16Ki. */
const DEFAULT_HTTP2_MAX_HEADER_SIZE = 16_384;
/** Without http2KeepaliveTimeout, an unanswered PING closes the connection after this long. */
const DEFAULT_HTTP2_KEEPALIVE_TIMEOUT_MS = 20_000;

/** HTTP/2 (RFC 9113 section 6.5.2) bounds of the settings. */
const FRAME_SIZE_RANGE: [number, number] = [16_384, 16_777_215];
const WINDOW_RANGE: [number, number] = [0, 2 ** 31 - 1];
const HEADER_LIST_RANGE: [number, number] = [0, 2 ** 32 - 1];

export const DEFAULT_CONNECTION_OPTIONS: ConnectionOptions = Object.freeze({
  keepalive: undefined,
  networkAuthorization: undefined,
  tls: DEFAULT_TLS_SETTINGS,
  http1MaxHeaders: DEFAULT_HTTP1_MAX_HEADERS,
  http1IdleTimeoutMs: DEFAULT_HTTP1_IDLE_TIMEOUT_MS,
  http1HeaderCase: 'Lowercase',
  http2: Object.freeze({
    settings: Object.freeze({
      maxFrameSize: DEFAULT_HTTP2_FRAME_SIZE,
      maxHeaderListSize: DEFAULT_HTTP2_MAX_HEADER_SIZE,
      maxConcurrentStreams: HTTP2_MAX_CONCURRENT_STREAMS,
    }),
    connectionWindowSize: undefined,
    keepaliveIntervalMs: undefined,
    keepaliveTimeoutMs: DEFAULT_HTTP2_KEEPALIVE_TIMEOUT_MS,
  }),
  maxConnectionDurationMs: undefined,
  proxyProtocol: undefined,
  connect: undefined,
});

export interface ConnectionOptionsResult {
  options: ConnectionOptions;
  /** What makes the policy unusable as written: the listener answers 500 (fail closed). */
  problems: string[];
  /** What is served differently than configured, for the log. */
  notes: string[];
}

/** Compiles a listener's Frontend (the effective policy, defaults not necessarily filled in). */
export function compileConnectionOptions(frontend: Frontend | undefined): ConnectionOptionsResult {
  const problems: string[] = [];
  const notes: string[] = [];
  if (!frontend) return { options: DEFAULT_CONNECTION_OPTIONS, problems, notes };
  let keepalive: TcpKeepalive | undefined;
  if (frontend.tcp?.keepalive) {
    const compiled = compileKeepalive(frontend.tcp.keepalive);
    if (isKeepaliveProblem(compiled)) problems.push(`frontend.tcp.keepalive.${compiled.field}: ${compiled.message}`);
    else keepalive = compiled;
  }
  let networkAuthorization: NetworkAuthorization | undefined;
  if (frontend.networkAuthorization) {
    const compiled = compileNetworkAuthorization(frontend.networkAuthorization);
    if (typeof compiled === 'string') problems.push(`frontend.networkAuthorization.${compiled}`);
    else networkAuthorization = compiled;
  }
  const tls = compileTlsSettings(frontend.tls);
  problems.push(...tls.problems);
  notes.push(...tls.notes);
  const http = (frontend.http ?? {}) as FrontendHTTP;
  if (http.http1HeaderCase === 'Preserve')
    notes.push(
      'frontend.http.http1HeaderCase Preserve: request header names go to HTTP backends as the client spelled them; response header names come back lowercase (the upstream client normalises them)',
    );
  const proxy = frontend.proxyProtocol;
  const version = proxy?.version ?? 'V2';
  return {
    options: {
      keepalive,
      networkAuthorization,
      tls: tls.settings,
      http1MaxHeaders: http.http1MaxHeaders ?? DEFAULT_HTTP1_MAX_HEADERS,
      http1IdleTimeoutMs: http.http1IdleTimeout ? durationMs(http.http1IdleTimeout) : DEFAULT_HTTP1_IDLE_TIMEOUT_MS,
      http1HeaderCase: http.http1HeaderCase ?? 'Lowercase',
      http2: compileHttp2(http, notes),
      maxConnectionDurationMs: http.maxConnectionDuration ? durationMs(http.maxConnectionDuration) : undefined,
      proxyProtocol: proxy
        ? { v1: version !== 'V2', v2: version !== 'V1', strict: (proxy.mode ?? 'Strict') === 'Strict' }
        : undefined,
      connect: frontend.connect?.mode,
    },
    problems,
    notes,
  };
}

function compileHttp2(http: FrontendHTTP, notes: string[]): Http2Options {
  const size = (field: keyof FrontendHTTP, fallback: number | undefined, range: [number, number]) => {
    const value = http[field];
    if (value === undefined) return fallback;
    const bytes = byteSize(value as number | string);
    const bounded = Math.min(Math.max(bytes, range[0]), range[1]);
    if (bounded !== bytes)
      notes.push(
        `frontend.http.${field} ${value} is outside HTTP/2's ${range[0]}-${range[1]} bytes; ${bounded} is used`,
      );
    return bounded;
  };
  const settings: Settings = {
    maxFrameSize: size('http2FrameSize', DEFAULT_HTTP2_FRAME_SIZE, FRAME_SIZE_RANGE),
    maxHeaderListSize: size('http2MaxHeaderSize', DEFAULT_HTTP2_MAX_HEADER_SIZE, HEADER_LIST_RANGE),
    maxConcurrentStreams: HTTP2_MAX_CONCURRENT_STREAMS,
  };
  const windowSize = size('http2WindowSize', undefined, WINDOW_RANGE);
  if (windowSize !== undefined) settings.initialWindowSize = windowSize;
  return {
    settings,
    connectionWindowSize: size('http2ConnectionWindowSize', undefined, WINDOW_RANGE),
    keepaliveIntervalMs: http.http2KeepaliveInterval ? durationMs(http.http2KeepaliveInterval) : undefined,
    keepaliveTimeoutMs: http.http2KeepaliveTimeout
      ? durationMs(http.http2KeepaliveTimeout)
      : DEFAULT_HTTP2_KEEPALIVE_TIMEOUT_MS,
  };
}

/**
 * The Frontend fields that act on connections (everything but body buffering and telemetry),
 * as one comparable string: listeners sharing a port should agree on them.
 */
export function connectionFieldsKey(frontend: Frontend | undefined): string {
  if (!frontend) return '{}';
  const { maxBufferSize: _maxBufferSize, ...http } = (frontend.http ?? {}) as FrontendHTTP;
  return JSON.stringify([
    frontend.tcp,
    frontend.networkAuthorization,
    frontend.tls,
    http,
    frontend.proxyProtocol,
    frontend.connect,
  ]);
}
