// One JSON endpoint of the web UI's API (/ui/api/...): its method and path, and the function that
// answers it from the running gateway. The endpoints are listed in endpoints.ts, one file per
// concept beside this one; the UI server (ui-server.ts) does what every endpoint needs before
// (the session, the cross-site checks, the bounded body) and after (JSON, headers).
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AdminToken } from '../security/admin-token.ts';
import type { UiSources } from '../sources.ts';

export type Method = 'GET' | 'POST' | 'PUT' | 'DELETE';

export interface UiRequest {
  query: URLSearchParams;
  /** The JSON body of a POST or PUT (undefined for GET and DELETE). */
  body: unknown;
  /** The request itself, for an endpoint that answers as a stream (server-sent events). */
  raw: IncomingMessage;
  response: ServerResponse;
}

export interface JsonAnswer {
  status: number;
  body: unknown;
  headers?: Record<string, string>;
}

/** An answer as JSON, or STREAMED when the endpoint wrote the response itself. */
export type UiAnswer = JsonAnswer | typeof STREAMED;

export const STREAMED = Symbol('streamed');

export interface UiContext {
  sources: UiSources;
  /** The admin token, when one is required (the admin listener is not loopback-only). */
  token: AdminToken | undefined;
  /** Whether the request holds a session (always, when no token is required). */
  authenticated: boolean;
}

export interface UiEndpoint {
  method: Method;
  /** The exact path (objects are named by the query: ?kind=...&namespace=...&name=...). */
  path: string;
  /** Answered without a session: the login alone. */
  public?: boolean;
  handle(context: UiContext, request: UiRequest): UiAnswer | Promise<UiAnswer>;
}

export function json(body: unknown, status = 200): JsonAnswer {
  return { status, body };
}

/** A client mistake or a missing object, with the message the UI shows. */
export function problem(status: number, message: string, details?: Record<string, unknown>): JsonAnswer {
  return { status, body: { error: message, ...details } };
}
