// Error bodies in the client's own format, and provider errors converted to it.
//
// OpenAI formats (completions, responses, embeddings): {"error":{"message","type","param","code"}}.
// Anthropic formats (messages, count_tokens): {"type":"error","error":{"type","message"}}.
// Gemini formats (gemini, gemini_count_tokens): Google's {"error":{"code","message","status"}}.
import { STATUS_CODES } from 'node:http';
import { isPlainObject, stringOr } from './json.ts';
import type { ApiFormat, ProviderChatFormat } from './types.ts';

type Family = 'openai' | 'anthropic' | 'gemini';

function formatFamily(format: ApiFormat | ProviderChatFormat): Family {
  if (format === 'gemini' || format === 'gemini_count_tokens') return 'gemini';
  return format === 'messages' || format === 'count_tokens' ? 'anthropic' : 'openai';
}

/**
 * What an answer of gw's own means beyond its status, when the status alone does not say it:
 * `overloaded` (gw's buffer budget or password-check pool is full: try again shortly) and
 * `model_not_found` (the model the body names is not served here).
 */
export type ErrorKind = 'overloaded' | 'model_not_found';

interface OpenAiError {
  type: string;
  code: string | null;
}

// OpenAI's conventions (its error-codes guide and the bodies its API sends): most client errors
// are `invalid_request_error` told apart by `code`; a rate limit is type `requests`, code
// `rate_limit_exceeded`; a failure on the server's side is `server_error`. The SDKs pick their
// error class by status (AuthenticationError, PermissionDeniedError, RateLimitError...).
const OPENAI_ERRORS: Record<number, OpenAiError> = {
  400: { type: 'invalid_request_error', code: null },
  401: { type: 'invalid_request_error', code: 'invalid_api_key' },
  403: { type: 'invalid_request_error', code: 'permission_denied' },
  404: { type: 'invalid_request_error', code: 'not_found' },
  408: { type: 'invalid_request_error', code: 'request_timeout' },
  413: { type: 'invalid_request_error', code: 'request_too_large' },
  429: { type: 'requests', code: 'rate_limit_exceeded' },
};

// Anthropic's documented error types (https://docs.anthropic.com/en/api/errors), by status.
const ANTHROPIC_TYPES: Record<number, string> = {
  400: 'invalid_request_error',
  401: 'authentication_error',
  402: 'billing_error',
  403: 'permission_error',
  404: 'not_found_error',
  408: 'timeout_error',
  413: 'request_too_large',
  429: 'rate_limit_error',
  504: 'timeout_error',
  529: 'overloaded_error',
};

// google.rpc.Code names by HTTP status, as Google's APIs answer them (the error's `status`).
const GOOGLE_STATUSES: Record<number, string> = {
  400: 'INVALID_ARGUMENT',
  401: 'UNAUTHENTICATED',
  403: 'PERMISSION_DENIED',
  404: 'NOT_FOUND',
  408: 'DEADLINE_EXCEEDED',
  409: 'ABORTED',
  413: 'INVALID_ARGUMENT',
  429: 'RESOURCE_EXHAUSTED',
  499: 'CANCELLED',
  500: 'INTERNAL',
  501: 'UNIMPLEMENTED',
  503: 'UNAVAILABLE',
  504: 'DEADLINE_EXCEEDED',
  // Anthropic's "overloaded": Google says the service is unavailable.
  529: 'UNAVAILABLE',
};

function googleStatus(status: number, kind: ErrorKind | undefined): string {
  if (kind === 'overloaded') return 'UNAVAILABLE';
  return GOOGLE_STATUSES[status] ?? (status >= 500 ? 'INTERNAL' : 'FAILED_PRECONDITION');
}

function openaiError(status: number, kind: ErrorKind | undefined): OpenAiError {
  if (kind === 'model_not_found') return { type: 'invalid_request_error', code: 'model_not_found' };
  const known = OPENAI_ERRORS[status];
  if (known) return known;
  return status >= 500 ? { type: 'server_error', code: null } : { type: 'invalid_request_error', code: null };
}

function anthropicType(status: number, kind: ErrorKind | undefined): string {
  if (kind === 'overloaded') return 'overloaded_error';
  return ANTHROPIC_TYPES[status] ?? (status >= 500 ? 'api_error' : 'invalid_request_error');
}

/** The error `type` a client of `format` expects for an HTTP status (and what the answer means). */
export function errorTypeForStatus(format: ApiFormat, status: number, kind?: ErrorKind): string {
  const family = formatFamily(format);
  if (family === 'gemini') return googleStatus(status, kind);
  return family === 'anthropic' ? anthropicType(status, kind) : openaiError(status, kind).type;
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

export function boundedMessage(message: string): string {
  return message.length > MAX_MESSAGE_LENGTH ? `${message.slice(0, MAX_MESSAGE_LENGTH)}…` : message;
}

/** The message gw gives when the provider's error body says nothing usable. */
export function genericErrorMessage(status: number): string {
  const reason = STATUS_CODES[status];
  return `The upstream provider returned HTTP ${status}${reason ? ` ${reason}` : ''}.`;
}

function openaiErrorObject(status: number, message: string, kind?: ErrorKind): Record<string, unknown> {
  const { type, code } = openaiError(status, kind);
  return { message: boundedMessage(message), type, param: null, code };
}

function anthropicErrorObject(status: number, message: string, kind?: ErrorKind): Record<string, unknown> {
  return { type: 'error', error: { type: anthropicType(status, kind), message: boundedMessage(message) } };
}

function googleErrorObject(status: number, message: string, kind?: ErrorKind): Record<string, unknown> {
  return { error: { code: status, message: boundedMessage(message), status: googleStatus(status, kind) } };
}

function errorObject(format: ApiFormat, status: number, message: string, kind?: ErrorKind): Record<string, unknown> {
  switch (formatFamily(format)) {
    case 'anthropic':
      return anthropicErrorObject(status, message, kind);
    case 'gemini':
      return googleErrorObject(status, message, kind);
    case 'openai':
      return { error: openaiErrorObject(status, message, kind) };
  }
}

/** An error response body in the client's format (`kind`: what the status alone does not say). */
export function errorBody(
  format: ApiFormat,
  status: number,
  message: string,
  kind?: ErrorKind,
): { contentType: string; body: string } {
  return { contentType: 'application/json', body: JSON.stringify(errorObject(format, status, message, kind)) };
}

/**
 * The Responses API's error event, numbered in its stream: the shape OpenAI sends when a stream
 * fails after its 200 (the error object nested, as in an error body), which the openai SDK throws
 * as an APIError and the AI SDK reads as the provider's error.
 */
export function responsesStreamErrorEvent(status: number, message: string, sequenceNumber: number): string {
  const payload = { type: 'error', error: openaiErrorObject(status, message), sequence_number: sequenceNumber };
  return `event: error\ndata: ${JSON.stringify(payload)}\n\n`;
}

/**
 * An error event for a streaming client, in its format's SSE framing (Gemini's is a chunk that
 * is the error object, as Google's streams end on an error).
 */
export function streamErrorEvent(format: ApiFormat, status: number, message: string): string {
  if (formatFamily(format) === 'anthropic') {
    return `event: error\ndata: ${JSON.stringify(anthropicErrorObject(status, message))}\n\n`;
  }
  return `data: ${JSON.stringify(errorObject(format, status, message))}\n\n`;
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
    const family =
      body.type === 'error' && typeof error.type === 'string'
        ? 'anthropic'
        : typeof error.code === 'number' && typeof error.status === 'string'
          ? 'gemini'
          : 'openai';
    return { message, family };
  }
  // AWS services answer {"message"} or, from the authorization layer, {"Message"}.
  const message = stringOr(error) ?? stringOr(body.message) ?? stringOr(body.Message) ?? stringOr(body.detail);
  return message === undefined ? undefined : { message, family: undefined };
}

/**
 * A provider's error response body as the client's error body. The provider's message is kept;
 * a body of the client's own family passes unchanged (its type, param and code intact); an
 * unreadable body becomes the generic message for the status.
 */
export function translateErrorBody(
  from: ApiFormat | ProviderChatFormat,
  to: ApiFormat,
  status: number,
  body: string,
): { contentType: string; body: string } {
  const parsed = parseErrorBody(body);
  if (!parsed) return errorBody(to, status, genericErrorMessage(status));
  // Anthropic's and Google's shapes are told apart exactly, so one reaches a client of its family
  // as it is from whichever API sent it (Google's from Vertex in front of Anthropic's models keeps
  // its details); OpenAI's is what is left over, so only an OpenAI-format provider's passes.
  const exact = parsed.family === 'anthropic' || parsed.family === 'gemini';
  if (parsed.family === formatFamily(to) && (exact || parsed.family === formatFamily(from))) {
    return { contentType: 'application/json', body };
  }
  return errorBody(to, status, parsed.message);
}

/**
 * The message of a provider's error body, whatever vendor's shape it is in; the generic message
 * for the status when it has none (for a client whose error shape is no vendor's chat format:
 * Cohere's, of the rerank API).
 */
export function providerErrorMessage(status: number, body: string): string {
  return parseErrorBody(body)?.message ?? genericErrorMessage(status);
}

/**
 * The seconds a Google error body asks the client to wait (its google.rpc.RetryInfo detail's
 * retryDelay, "7s" or "0.5s"), rounded up: what Gemini and Vertex send instead of a Retry-After
 * header, which gw gives clients of every format. Undefined when the body has none.
 */
export function googleRetryDelaySeconds(body: string): number | undefined {
  if (!body.includes('RetryInfo')) return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    return undefined;
  }
  const details = isPlainObject(parsed) && isPlainObject(parsed.error) ? parsed.error.details : undefined;
  if (!Array.isArray(details)) return undefined;
  for (const detail of details) {
    if (!isPlainObject(detail) || detail['@type'] !== 'type.googleapis.com/google.rpc.RetryInfo') continue;
    const delay = stringOr(detail.retryDelay);
    const match = delay === undefined ? null : /^(\d{1,9}(?:\.\d{1,9})?)s$/.exec(delay);
    if (match) return Math.ceil(Number(match[1]));
  }
  return undefined;
}
