// What both client transports do with a POST before the multiplexer sees it: read the body
// (bounded by the listener's buffer limit), parse it into one message or a bounded batch, and
// build the scope the calls to targets carry (the client's headers, the route's deadline).
import type { RoutedRequest } from '../backends/backend.ts';
import { BodyTooLargeError, bodyFailure, readRequestBody } from '../proxy/body.ts';
import type { ClientResponse } from '../proxy/client-response.ts';
import { sendJson } from '../proxy/direct-response.ts';
import { addForwardedFor } from '../proxy/headers.ts';
import { parseJsonBody } from '../proxy/json-body.ts';
import { celContext } from '../telemetry/cel-context.ts';
import type { ClientScope, MessageSink } from './client-scope.ts';
import {
  ErrorCode,
  errorMessage,
  type InvalidMessage,
  type JsonRpcError,
  type JsonRpcMessage,
  toMessage,
} from './jsonrpc.ts';
import { clientHeadersForTargets } from './upstream-http.ts';

/** Most messages in one JSON-RPC batch (2025-03-26 and before). */
export const MAX_BATCH = 32;

/** A JSON-RPC error as an HTTP answer (the status says the transport's view, the body the message). */
export function sendRpcError(
  res: ClientResponse,
  status: number,
  error: JsonRpcError,
  headers?: Record<string, string>,
): void {
  sendJson(res, status, JSON.stringify(error), headers);
}

/** The POST body: already read by a policy, or read here up to the listener's limit. */
export async function readClientBody(routed: RoutedRequest): Promise<Buffer | { status: number; message: string }> {
  if (routed.exchange?.body) return routed.exchange.body;
  try {
    return await readRequestBody(routed.req, routed.route.maxBufferBytes);
  } catch (error) {
    if (error instanceof BodyTooLargeError) return { status: 413, message: `the body exceeds ${error.limit} bytes` };
    return bodyFailure(error);
  }
}

export type ParsedBody =
  | { batch: false; message: JsonRpcMessage | InvalidMessage }
  | { batch: true; messages: (JsonRpcMessage | InvalidMessage)[] }
  | { error: JsonRpcError };

/**
 * The body as one message or a batch; a parse error (a body that is not JSON, or JSON that
 * parsers read differently: proxy/json-body.ts), an empty or oversized batch as an error.
 */
export function parseClientBody(body: Buffer): ParsedBody {
  const parsed = parseJsonBody(body);
  if (parsed.problem !== undefined)
    return { error: errorMessage(null, ErrorCode.ParseError, `Parse error: the body ${parsed.problem}`) };
  const value = parsed.value;
  if (!Array.isArray(value)) return { batch: false, message: toMessage(value) };
  if (value.length === 0) return { error: errorMessage(null, ErrorCode.InvalidRequest, 'an empty batch') };
  if (value.length > MAX_BATCH)
    return { error: errorMessage(null, ErrorCode.InvalidRequest, `a batch of more than ${MAX_BATCH} messages`) };
  return { batch: true, messages: value.map(toMessage) };
}

/** What MCP clients send (the SDKs, the spec's example): both types, answered without parsing. */
const MCP_ACCEPT = 'application/json, text/event-stream';

/** Whether an Accept header admits a media type (no header admits everything). */
export function accepts(header: string | undefined, type: string): boolean {
  if (header === MCP_ACCEPT && (type === 'application/json' || type === 'text/event-stream')) return true;
  if (header === undefined || header.trim() === '') return true;
  const [major] = type.split('/');
  return header.split(',').some((entry) => {
    const range = entry.split(';')[0]!.trim().toLowerCase();
    return range === type || range === '*/*' || range === `${major}/*`;
  });
}

/** The scope of a client request: headers for targets (X-Forwarded-For added), the route's deadline. */
export function clientScope(routed: RoutedRequest, sink: MessageSink | undefined): ClientScope {
  const headers = clientHeadersForTargets(routed.forward.headers as Record<string, string | string[]>);
  addForwardedFor(headers, routed.record.clientAddress, routed.scheme);
  if (routed.record.traceparent !== undefined) headers.traceparent = routed.record.traceparent;
  return {
    headers,
    incoming: routed.req.headers,
    variables: () => celContext(routed.record),
    exchange: routed.exchange,
    timeoutMs: routed.route.timeoutMs,
    sink,
  };
}
