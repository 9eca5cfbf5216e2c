// MCP over Streamable HTTP as the benchmark's load generator speaks it, with undici: open a
// session (initialize, then notifications/initialized), POST requests on it, and read an answer
// whether it comes as JSON or as an SSE stream.
import type { Dispatcher } from 'undici';

export const PROTOCOL_VERSION = '2025-11-25';

const BASE_HEADERS = {
  'content-type': 'application/json',
  accept: 'application/json, text/event-stream',
};

export interface RpcAnswer {
  id?: unknown;
  result?: Record<string, unknown>;
  error?: { code: number; message: string };
}

/** The headers of every request on a session: the transport's, the session id if there is one, the version. */
export function sessionHeaders(sessionId: string | undefined): Record<string, string> {
  return {
    ...BASE_HEADERS,
    'mcp-protocol-version': PROTOCOL_VERSION,
    ...(sessionId === undefined ? {} : { 'mcp-session-id': sessionId }),
  };
}

/** The JSON-RPC answer in a response body: the body itself (JSON), or the last data line of an SSE stream. */
export function parseAnswer(contentType: string, text: string): RpcAnswer {
  if (contentType.startsWith('text/event-stream')) {
    const data = text
      .split('\n')
      .filter((line) => line.startsWith('data:'))
      .map((line) => line.slice(5).trim())
      .filter((line) => line !== '');
    return JSON.parse(data.at(-1) ?? 'null') as RpcAnswer;
  }
  return JSON.parse(text) as RpcAnswer;
}

/** POSTs one message; for a request, resolves with its answer (rejecting on HTTP errors and JSON-RPC errors). */
export async function post(
  dispatcher: Dispatcher,
  url: URL,
  headers: Record<string, string>,
  message: Record<string, unknown>,
): Promise<{ answer: RpcAnswer | undefined; sessionId: string | undefined }> {
  const response = await dispatcher.request({
    origin: url.origin,
    path: url.pathname,
    method: 'POST',
    headers,
    body: JSON.stringify(message),
  });
  const text = await response.body.text();
  if (response.statusCode === 202) return { answer: undefined, sessionId: undefined };
  if (response.statusCode !== 200) throw new Error(`${message.method} answered HTTP ${response.statusCode}: ${text}`);
  const answer = parseAnswer(String(response.headers['content-type'] ?? ''), text);
  if (answer.error) throw new Error(`${message.method} answered ${answer.error.code} ${answer.error.message}`);
  const sessionId = response.headers['mcp-session-id'];
  return { answer, sessionId: typeof sessionId === 'string' ? sessionId : undefined };
}

/** Opens a session; resolves with the headers of its requests (no session id from a stateless server). */
export async function openSession(dispatcher: Dispatcher, url: URL): Promise<Record<string, string>> {
  const { sessionId } = await post(dispatcher, url, BASE_HEADERS, {
    jsonrpc: '2.0',
    id: 'init',
    method: 'initialize',
    params: {
      protocolVersion: PROTOCOL_VERSION,
      capabilities: {},
      clientInfo: { name: 'gw-mcp-bench', version: '1.0.0' },
    },
  });
  const headers = sessionHeaders(sessionId);
  await post(dispatcher, url, headers, { jsonrpc: '2.0', method: 'notifications/initialized' });
  return headers;
}

/** Ends a session (DELETE), so that the server frees it; nothing to do without a session id. */
export async function closeSession(dispatcher: Dispatcher, url: URL, headers: Record<string, string>): Promise<void> {
  if (headers['mcp-session-id'] === undefined) return;
  const response = await dispatcher.request({ origin: url.origin, path: url.pathname, method: 'DELETE', headers });
  await response.body.dump();
}
