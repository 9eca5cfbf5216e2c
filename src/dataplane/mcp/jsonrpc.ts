// JSON-RPC 2.0 as MCP uses it: requests, notifications, results and errors, checked on the way
// in (a client or a target may send anything) and built on the way out. gw never trusts a
// message's shape: every field it reads is checked here first.

export type JsonRpcId = string | number;
export type JsonObject = Record<string, unknown>;

export interface JsonRpcRequest {
  jsonrpc: '2.0';
  id: JsonRpcId;
  method: string;
  params?: JsonObject;
}

export interface JsonRpcNotification {
  jsonrpc: '2.0';
  method: string;
  params?: JsonObject;
}

export interface JsonRpcResult {
  jsonrpc: '2.0';
  id: JsonRpcId;
  result: JsonObject;
}

export interface JsonRpcErrorObject {
  code: number;
  message: string;
  data?: unknown;
}

export interface JsonRpcError {
  jsonrpc: '2.0';
  /** null when the request's id could not be read. */
  id: JsonRpcId | null;
  error: JsonRpcErrorObject;
}

export type JsonRpcResponse = JsonRpcResult | JsonRpcError;
export type JsonRpcMessage = JsonRpcRequest | JsonRpcNotification | JsonRpcResponse;

/** JSON-RPC and MCP error codes gw answers with. */
export const ErrorCode = {
  ParseError: -32700,
  InvalidRequest: -32600,
  MethodNotFound: -32601,
  InvalidParams: -32602,
  InternalError: -32603,
  /** MCP SDKs' code for a connection or session problem (implementation-defined range). */
  ConnectionClosed: -32000,
  /** MCP: the resource does not exist. */
  ResourceNotFound: -32002,
} as const;

/** Ids are bounded so that a client cannot make gw copy a megabyte into every header and map. */
export const MAX_ID_LENGTH = 256;
const MAX_METHOD_LENGTH = 256;

export function isRequest(message: JsonRpcMessage): message is JsonRpcRequest {
  return 'method' in message && 'id' in message;
}

export function isNotification(message: JsonRpcMessage): message is JsonRpcNotification {
  return 'method' in message && !('id' in message);
}

export function isResponse(message: JsonRpcMessage): message is JsonRpcResponse {
  return !('method' in message);
}

export function isErrorResponse(message: JsonRpcMessage): message is JsonRpcError {
  return 'error' in message;
}

export function isPlainObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function validId(value: unknown): value is JsonRpcId {
  if (typeof value === 'string') return value.length <= MAX_ID_LENGTH;
  return typeof value === 'number' && Number.isSafeInteger(value);
}

/** Why a value is not a JSON-RPC message, with the id when one could be read (for the error answer). */
export interface InvalidMessage {
  invalid: string;
  id: JsonRpcId | null;
}

/**
 * A parsed JSON value as a JSON-RPC 2.0 message, or why it is not one. Requests and notifications
 * need a string method and object params (MCP never uses positional params); responses need
 * exactly one of result (an object) and error (code and message).
 */
export function toMessage(value: unknown): JsonRpcMessage | InvalidMessage {
  if (!isPlainObject(value)) return { invalid: 'a JSON-RPC message must be an object', id: null };
  const id = 'id' in value && validId(value.id) ? value.id : null;
  if (value.jsonrpc !== '2.0') return { invalid: 'jsonrpc must be "2.0"', id };
  if ('id' in value && value.id !== null && !validId(value.id))
    return { invalid: `id must be a string (at most ${MAX_ID_LENGTH} characters) or an integer`, id: null };
  if ('method' in value) {
    if (typeof value.method !== 'string' || value.method === '' || value.method.length > MAX_METHOD_LENGTH)
      return { invalid: 'method must be a non-empty string', id };
    if ('params' in value && value.params !== undefined && !isPlainObject(value.params))
      return { invalid: 'params must be an object', id };
    if ('result' in value || 'error' in value) return { invalid: 'a request carries no result or error', id };
    if ('id' in value) {
      if (value.id === null) return { invalid: 'a request id must not be null', id: null };
      return value as unknown as JsonRpcRequest;
    }
    return value as unknown as JsonRpcNotification;
  }
  if (!('id' in value)) return { invalid: 'a message needs a method or an id', id: null };
  const hasResult = 'result' in value;
  const hasError = 'error' in value;
  if (hasResult === hasError) return { invalid: 'a response carries exactly one of result and error', id };
  if (hasResult) {
    if (!isPlainObject(value.result)) return { invalid: 'result must be an object', id };
    if (value.id === null) return { invalid: 'a result needs an id', id: null };
    return value as unknown as JsonRpcResult;
  }
  const error = value.error;
  if (!isPlainObject(error) || typeof error.code !== 'number' || typeof error.message !== 'string')
    return { invalid: 'error needs a numeric code and a message', id };
  return value as unknown as JsonRpcError;
}

export function isInvalid(value: JsonRpcMessage | InvalidMessage): value is InvalidMessage {
  return 'invalid' in value;
}

export function resultMessage(id: JsonRpcId, result: JsonObject): JsonRpcResult {
  return { jsonrpc: '2.0', id, result };
}

export function errorMessage(id: JsonRpcId | null, code: number, message: string, data?: unknown): JsonRpcError {
  const error: JsonRpcErrorObject = { code, message };
  if (data !== undefined) error.data = data;
  return { jsonrpc: '2.0', id, error };
}

/** A request's `_meta.progressToken`, when it has one. */
export function progressTokenOf(params: JsonObject | undefined): JsonRpcId | undefined {
  const meta = params?._meta;
  if (!isPlainObject(meta)) return undefined;
  const token = meta.progressToken;
  return validId(token) ? token : undefined;
}

/** `params` with `_meta.progressToken` set to `token` (or removed when undefined); a copy. */
export function withProgressToken(params: JsonObject | undefined, token: JsonRpcId | undefined): JsonObject {
  const meta = isPlainObject(params?._meta) ? { ...(params._meta as JsonObject) } : {};
  if (token === undefined) delete meta.progressToken;
  else meta.progressToken = token;
  const out: JsonObject = { ...params };
  if (Object.keys(meta).length > 0) out._meta = meta;
  else delete out._meta;
  return out;
}

/** The id as a map key that keeps 1 and "1" apart. */
export function idKey(id: JsonRpcId): string {
  return typeof id === 'number' ? `n${id}` : `s${id}`;
}

/** Texts made for messages while they were built (what JSON.stringify of the message gives). */
const jsonTexts = new WeakMap<object, string>();

/**
 * `message`, with its JSON text made already (a merged list, serialized target by target while
 * the answers came in). The message must not change afterwards: jsonText would give the old text.
 */
export function withJsonText<M extends JsonRpcMessage>(message: M, text: string): M {
  jsonTexts.set(message, text);
  return message;
}

/** The message as JSON text: the one made with it, else JSON.stringify's. */
export function jsonText(message: JsonRpcMessage): string {
  return jsonTexts.get(message) ?? JSON.stringify(message);
}
