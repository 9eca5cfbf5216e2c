// The MCP playground's client: a small JSON-RPC client of MCP's streamable HTTP transport, talking
// to an MCP route through gw's own listener (the @modelcontextprotocol/sdk client is a development
// dependency of gw, not one it ships). One playground action is one short session: initialize,
// notifications/initialized, the call (tools/list or tools/call), then DELETE of the session. An
// answer may come as JSON or as an event stream; the stream is read until the call's response.
import type { IncomingMessage } from 'node:http';
import { SseReader } from '../../../dataplane/ai/formats/sse-reader.ts';
import { cutText } from '../../../util/values.ts';
import { MAX_ANSWER_BYTES, type ResolvedListener, readAnswer, requestListener } from './listener-client.ts';

export const MCP_PROTOCOL_VERSION = '2025-06-18';
/** Pages of tools/list read at most (a server paging forever is cut off). */
const MAX_TOOL_PAGES = 20;
const MAX_ERROR_TEXT = 2048;

export class McpPlaygroundError extends Error {}

interface JsonRpcResponse {
  jsonrpc: '2.0';
  id?: number | string | null;
  result?: unknown;
  error?: { code: number; message: string; data?: unknown };
}

export interface McpTool {
  name: string;
  title?: string;
  description?: string;
  inputSchema?: unknown;
}

class McpSession {
  readonly #resolved: ResolvedListener;
  readonly #path: string;
  readonly #apiKey: string | undefined;
  #sessionId: string | undefined;
  #nextId = 1;
  serverInfo: unknown;

  constructor(resolved: ResolvedListener, path: string, apiKey: string | undefined) {
    this.#resolved = resolved;
    this.#path = path;
    this.#apiKey = apiKey;
  }

  #headers(): Record<string, string> {
    const headers: Record<string, string> = {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'user-agent': 'gw-ui-playground',
    };
    if (this.#sessionId) {
      headers['mcp-session-id'] = this.#sessionId;
      headers['mcp-protocol-version'] = MCP_PROTOCOL_VERSION;
    }
    if (this.#apiKey) headers.authorization = `Bearer ${this.#apiKey}`;
    return headers;
  }

  async initialize(): Promise<void> {
    const result = (await this.call('initialize', {
      protocolVersion: MCP_PROTOCOL_VERSION,
      capabilities: {},
      clientInfo: { name: 'gw-ui-playground', version: '1' },
    })) as { serverInfo?: unknown };
    this.serverInfo = result?.serverInfo;
    await this.#notify('notifications/initialized');
  }

  async call(method: string, params: unknown): Promise<unknown> {
    const id = this.#nextId++;
    const answer = await requestListener(this.#resolved, {
      method: 'POST',
      path: this.#path,
      headers: this.#headers(),
      body: JSON.stringify({ jsonrpc: '2.0', id, method, params }),
    });
    const status = answer.statusCode ?? 0;
    if (method === 'initialize') {
      const session = answer.headers['mcp-session-id'];
      if (typeof session === 'string') this.#sessionId = session;
    }
    if (status !== 200) {
      const text = await readAnswer(answer).catch(() => '');
      throw new McpPlaygroundError(
        `${method}: gw answered ${status}${text ? `: ${cutText(text, MAX_ERROR_TEXT)}` : ''}`,
      );
    }
    const response = await responseOf(answer, id);
    if (response.error)
      throw new McpPlaygroundError(
        `${method}: error ${response.error.code}: ${cutText(response.error.message, MAX_ERROR_TEXT)}`,
      );
    return response.result;
  }

  async #notify(method: string): Promise<void> {
    const answer = await requestListener(this.#resolved, {
      method: 'POST',
      path: this.#path,
      headers: this.#headers(),
      body: JSON.stringify({ jsonrpc: '2.0', method }),
    });
    await readAnswer(answer).catch(() => '');
  }

  /** Ends the session (a server that keeps none answers 405, which is fine). */
  async close(): Promise<void> {
    if (!this.#sessionId) return;
    try {
      const answer = await requestListener(this.#resolved, {
        method: 'DELETE',
        path: this.#path,
        headers: this.#headers(),
      });
      answer.resume();
    } catch {
      // The session ends on the server's own timeout.
    }
  }
}

/** The JSON-RPC response with `id` in a JSON answer or an event stream. */
async function responseOf(answer: IncomingMessage, id: number): Promise<JsonRpcResponse> {
  const type = String(answer.headers['content-type'] ?? '');
  const matches = (message: unknown): message is JsonRpcResponse =>
    typeof message === 'object' && message !== null && (message as JsonRpcResponse).id === id;
  if (type.startsWith('application/json')) {
    const message = JSON.parse(await readAnswer(answer)) as unknown;
    const found = Array.isArray(message) ? message.find(matches) : matches(message) ? message : undefined;
    if (!found) throw new McpPlaygroundError('the answer holds no response to the request');
    return found;
  }
  if (!type.startsWith('text/event-stream')) throw new McpPlaygroundError(`unexpected answer type ${type || '(none)'}`);
  const reader = new SseReader(MAX_ANSWER_BYTES);
  for await (const chunk of answer as AsyncIterable<Buffer>) {
    for (const block of reader.push(chunk)) {
      if (block.data === undefined) continue;
      let message: unknown;
      try {
        message = JSON.parse(block.data);
      } catch {
        continue;
      }
      if (matches(message)) {
        answer.destroy();
        return message;
      }
    }
    if (reader.overflowed) break;
  }
  throw new McpPlaygroundError('the event stream ended without a response to the request');
}

async function withSession<T>(
  resolved: ResolvedListener,
  path: string,
  apiKey: string | undefined,
  use: (session: McpSession) => Promise<T>,
): Promise<T> {
  const session = new McpSession(resolved, path, apiKey);
  try {
    await session.initialize();
    return await use(session);
  } finally {
    await session.close();
  }
}

/** The tools the MCP route offers (every page), with the server's name. */
export function listMcpTools(
  resolved: ResolvedListener,
  path: string,
  apiKey?: string,
): Promise<{ server: unknown; tools: McpTool[] }> {
  return withSession(resolved, path, apiKey, async (session) => {
    const tools: McpTool[] = [];
    let cursor: string | undefined;
    for (let page = 0; page < MAX_TOOL_PAGES; page++) {
      const result = (await session.call('tools/list', cursor ? { cursor } : {})) as {
        tools?: McpTool[];
        nextCursor?: string;
      };
      tools.push(...(result?.tools ?? []));
      cursor = result?.nextCursor;
      if (!cursor) break;
    }
    return { server: session.serverInfo, tools };
  });
}

/** Calls one tool with its arguments; the result as the server gave it. */
export function callMcpTool(
  resolved: ResolvedListener,
  path: string,
  tool: string,
  args: Record<string, unknown>,
  apiKey?: string,
): Promise<unknown> {
  return withSession(resolved, path, apiKey, (session) => session.call('tools/call', { name: tool, arguments: args }));
}
