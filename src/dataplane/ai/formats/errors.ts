// Error bodies in the client's own format, and provider errors converted to it.
//
// OpenAI formats (completions, responses, embeddings): {"error":{"message","type","param","code"}}.
// Anthropic formats (messages, count_tokens): {"type":"error","error":{"type","message"}}.
import { STATUS_CODES } from 'node:http';
import { isPlainObject, stringOr } from './json.ts';
import type { ApiFormat } from './types.ts';

type Family = 'openai' | 'anthropic';

function formatFamily(format: ApiFormat): Family {
  return format === 'messages' || format === 'count_tokens' ? 'anthropic' : 'openai';
}

// Error types both families name the same way for these statuses.
const SHARED_TYPES: Record<number, string> = {
  400: 'invalid_request_error',
  401: 'authentication_error',
  403: 'permission_error',
  404: 'not_found_error',
  413: 'request_too_large',
  429: 'rate_limit_error',
};

const ANTHROPIC_ONLY_TYPES: Record<number, string> = {
  402: 'billing_error',
  504: 'timeout_error',
  529: 'overloaded_error',
};

/** The error `type` a client of `format` expects for an HTTP status. */
export function errorTypeForStatus(format: ApiFormat, status: number): string {
  const shared = SHARED_TYPES[status];
  if (shared) return shared;
  if (formatFamily(format) === 'anthropic' && ANTHROPIC_ONLY_TYPES[status]) return ANTHROPIC_ONLY_TYPES[status];
  return status >= 500 ? 'api_error' : 'invalid_request_error';
}

// The status an error type stands for, for errors that arrive inside a stream (no HTTP status).
const STATUS_OF_TYPE: Record<string, number> = {
  invalid_request_error: 400,
  authentication_error: 401,
  billing_error: 402,
  permission_error: 403,
  not_found_error: 404,
  request_too_large: 413,
  rate_limit_error: 429,
  insufficient_quota: 429,
  tokens: 429,
  requests: 429,
  api_error: 500,
  server_error: 500,
  timeout_error: 504,
  overloaded_error: 529,
};

export function statusForErrorType(type: unknown): number {
  return (typeof type === 'string' && STATUS_OF_TYPE[type]) || 500;
}

// A message is echoed to the client; a provider's (or a proxy's) huge body is not.
const MAX_MESSAGE_LENGTH = 4096;

function boundedMessage(message: string): string {
  return message.length > MAX_MESSAGE_LENGTH ? `${message.slice(0, MAX_MESSAGE_LENGTH)}…` : message;
}

/** The message gw gives when the provider's error body says nothing usable. */
export function genericErrorMessage(status: number): string {
  const reason = STATUS_CODES[status];
  return `The upstream provider returned HTTP ${status}${reason ? ` ${reason}` : ''}.`;
}

function openaiErrorObject(status: number, message: string): Record<string, unknown> {
  return { message: boundedMessage(message), type: errorTypeForStatus('completions', status), param: null, code: null };
}

function anthropicErrorObject(status: number, message: string): Record<string, unknown> {
  return { type: 'error', error: { type: errorTypeForStatus('messages', status), message: boundedMessage(message) } };
}

/** An error response body in the client's format. */
export function errorBody(format: ApiFormat, status: number, message: string): { contentType: string; body: string } {
  const payload =
    formatFamily(format) === 'anthropic'
      ? anthropicErrorObject(status, message)
      : { error: openaiErrorObject(status, message) };
  return { contentType: 'application/json', body: JSON.stringify(payload) };
}

/** An error event for a streaming client, in its format's SSE framing. */
export function streamErrorEvent(format: ApiFormat, status: number, message: string): string {
  if (formatFamily(format) === 'anthropic') {
    return `event: error\ndata: ${JSON.stringify(anthropicErrorObject(status, message))}\n\n`;
  }
  return `data: ${JSON.stringify({ error: openaiErrorObject(status, message) })}\n\n`;
}

interface ParsedError {
  message: string;
  /** The body already is an error of this family's documented shape. */
  family: Family | undefined;
}

/** The message of a provider's error body, tolerating the shapes OpenAI-compatible servers use. */
function parseErrorBody(text: string): ParsedError | undefined {
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (!isPlainObject(body)) return undefined;
  const error = body.error;
  if (isPlainObject(error)) {
    const message = stringOr(error.message);
    if (message === undefined) return undefined;
    const family = body.type === 'error' && typeof error.type === 'string' ? 'anthropic' : 'openai';
    return { message, family };
  }
  const message = stringOr(error) ?? stringOr(body.message) ?? stringOr(body.detail);
  return message === undefined ? undefined : { message, family: undefined };
}

/**
 * A provider's error response body as the client's error body. The provider's message is kept;
 * a body of the client's own family passes unchanged (its type, param and code intact); an
 * unreadable body becomes the generic message for the status.
 */
export function translateErrorBody(
  from: ApiFormat,
  to: ApiFormat,
  status: number,
  body: string,
): { contentType: string; body: string } {
  const parsed = parseErrorBody(body);
  if (!parsed) return errorBody(to, status, genericErrorMessage(status));
  if (parsed.family !== undefined && parsed.family === formatFamily(from) && parsed.family === formatFamily(to)) {
    return { contentType: 'application/json', body };
  }
  return errorBody(to, status, parsed.message);
}
