// gw's own answers on an A2A route, in the error shape of the binding the client speaks, so that
// an A2A SDK reads them as the errors it knows: a JSON-RPC error object (the request's id when gw
// read it) for the JSON-RPC binding; for HTTP+JSON (REST), v1.0's `{"error": {code, status,
// message, details}}` (the HTTP status and its google.rpc code name) or v0.3's `{code, message}`
// (a JSON-RPC code), told apart by the A2A-Version header (a v1.0 client sends it; none means 0.3,
// as the SDK's servers read it). The HTTP status says the same as it would in plain text.
import type { IncomingHttpHeaders } from 'node:http';
import type { ClientResponse } from '../../proxy/client-response.ts';
import { sendJson } from '../../proxy/direct-response.ts';
import { failureMessage, statusForFailure, type UpstreamFailure } from '../../proxy/http-forward.ts';

export type A2aBinding = 'jsonrpc' | 'rest';

/** The header an A2A v1.0 client names its protocol version in. */
export const A2A_VERSION_HEADER = 'a2a-version';

/** JSON-RPC error codes gw answers with (JSON-RPC 2.0's own). */
export const JsonRpcCode = {
  ParseError: -32700,
  InvalidRequest: -32600,
  InternalError: -32603,
} as const;

/** google.rpc.Code names of the HTTP statuses gw answers with (v1.0 REST's `status`). */
const STATUS_NAMES: Readonly<Record<number, string>> = {
  400: 'INVALID_ARGUMENT',
  408: 'DEADLINE_EXCEEDED',
  413: 'INVALID_ARGUMENT',
  500: 'INTERNAL',
  502: 'UNAVAILABLE',
  503: 'UNAVAILABLE',
  504: 'DEADLINE_EXCEEDED',
};

export interface A2aErrorAnswer {
  readonly status: number;
  readonly message: string;
  /** The JSON-RPC code (JSON-RPC, and v0.3 REST). */
  readonly code: number;
}

/** Answers `error` in the binding's shape; `id` is the JSON-RPC request's id when gw read it. */
export function sendA2aError(
  res: ClientResponse,
  binding: A2aBinding,
  headers: IncomingHttpHeaders,
  error: A2aErrorAnswer,
  id: unknown = null,
): void {
  sendJson(res, error.status, JSON.stringify(errorBody(binding, headers, error, id)));
}

function errorBody(binding: A2aBinding, headers: IncomingHttpHeaders, error: A2aErrorAnswer, id: unknown): unknown {
  if (binding === 'jsonrpc')
    return { jsonrpc: '2.0', id: validId(id), error: { code: error.code, message: error.message } };
  if (isLegacy(headers)) return { code: error.code, message: error.message };
  return {
    error: { code: error.status, status: STATUS_NAMES[error.status] ?? 'UNKNOWN', message: error.message, details: [] },
  };
}

/** An upstream failure (the agent unreachable, reset, late) as the binding's error. */
export function upstreamFailureAnswer(
  binding: A2aBinding,
  headers: IncomingHttpHeaders,
  id: unknown,
): (res: ClientResponse, failure: UpstreamFailure) => void {
  return (res, failure) =>
    sendA2aError(
      res,
      binding,
      headers,
      { status: statusForFailure(failure), message: failureMessage(failure), code: JsonRpcCode.InternalError },
      id,
    );
}

/** A v0.3 client: it sends no A2A-Version, or says 0.3. */
function isLegacy(headers: IncomingHttpHeaders): boolean {
  const version = headers[A2A_VERSION_HEADER];
  const value = Array.isArray(version) ? version[0] : version;
  return value === undefined || value.trim() === '' || value.trim().startsWith('0.');
}

/** A JSON-RPC id as it may be echoed: a string or number; anything else is null. */
function validId(id: unknown): string | number | null {
  return typeof id === 'string' || (typeof id === 'number' && Number.isFinite(id)) ? id : null;
}
