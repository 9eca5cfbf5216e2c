// The response a backend kind writes to (RoutedRequest.res): the part of node's ServerResponse
// the kinds use, and nothing more. It is the client's own ServerResponse when nothing works on the
// response body, or the response path's capture (./response-capture.ts) when something does
// (external processing, a body transformation, response buffering); a kind cannot tell which.
import type { OutgoingHttpHeader, OutgoingHttpHeaders, ServerResponse } from 'node:http';

/**
 * What the request's telemetry reads when an exchange that has no ordinary response is over (a
 * CONNECT tunnel, a WebSocket session): its status, headers and whether it ended cleanly.
 */
export type ExchangeOutcome = Pick<ServerResponse, 'statusCode' | 'getHeaders' | 'writableEnded' | 'writableFinished'>;

export interface ClientResponse {
  statusCode: number;
  readonly headersSent: boolean;
  readonly writableEnded: boolean;
  readonly writableFinished: boolean;
  readonly destroyed: boolean;
  /** Bytes written and not yet taken by the client (a kind that does not wait for 'drain' bounds it). */
  readonly writableLength: number;

  setHeader(name: string, value: number | string | readonly string[]): this;
  getHeader(name: string): number | string | string[] | undefined;
  getHeaders(): OutgoingHttpHeaders;
  hasHeader(name: string): boolean;
  removeHeader(name: string): void;
  writeHead(statusCode: number, headers?: OutgoingHttpHeaders | OutgoingHttpHeader[]): this;
  writeHead(statusCode: number, statusMessage: string, headers?: OutgoingHttpHeaders | OutgoingHttpHeader[]): this;
  /** Sends the head now (a stream whose first event may be a while). */
  flushHeaders(): void;
  write(chunk: string | Uint8Array, callback?: (error?: Error | null) => void): boolean;
  end(chunk?: string | Uint8Array, callback?: () => void): this;
  /** Ends the response abruptly: the client sees the connection (or HTTP/2 stream) reset. */
  destroy(error?: Error): this;

  /** close: the response is over (finished, or the client went away: responseCompleted says which). */
  on(event: 'close' | 'drain' | 'finish', listener: () => void): this;
  once(event: 'close' | 'drain' | 'finish', listener: () => void): this;
  off(event: 'close' | 'drain' | 'finish', listener: () => void): this;
}

/**
 * Whether the response was written to its end, rather than cut off by the client going away. Not
 * writableFinished alone: node's HTTP/2 compatibility response reports it (and emits 'finish') for
 * a stream the client reset or whose connection closed, though it was never ended.
 */
export function responseCompleted(res: Pick<ClientResponse, 'writableEnded' | 'writableFinished'>): boolean {
  return res.writableEnded && res.writableFinished;
}

/** The status and headers of a response before they are written, as response hooks change them. */
export type ResponseHead = Pick<
  ClientResponse,
  'statusCode' | 'getHeader' | 'getHeaders' | 'hasHeader' | 'setHeader' | 'removeHeader'
>;

/** Sets the headers given to writeHead — an object, or the raw list [name, value, name, value, ...] — on `res`. */
export function setHeadHeaders(
  res: Pick<ResponseHead, 'setHeader'>,
  headers: OutgoingHttpHeaders | OutgoingHttpHeader[] | undefined,
): void {
  if (Array.isArray(headers)) {
    for (let i = 0; i + 1 < headers.length; i += 2) res.setHeader(String(headers[i]), headers[i + 1]!);
  } else if (headers) {
    for (const name of Object.keys(headers)) {
      const value = headers[name];
      if (value !== undefined) res.setHeader(name, value);
    }
  }
}

/**
 * The response as a stream to pipe a body into. Both implementations are node writable streams
 * (a ServerResponse, the capture: a PassThrough); the interface leaves the stream machinery out
 * so that kinds cannot reach for more than it names.
 */
export function writableOf(res: ClientResponse): NodeJS.WritableStream {
  return res as unknown as NodeJS.WritableStream;
}
