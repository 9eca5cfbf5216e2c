// HTTP calls from gw to the identity provider for MCP OAuth (metadata, client registration,
// token requests): one connection pool kept in the PolicyRuntime, every call bounded in time and
// in the size of the answer read, redirects never followed (an answer is passed on as it is).
import type { Readable } from 'node:stream';
import type { Agent, Dispatcher } from 'undici';
import { undici } from '../../../../util/undici.ts';
import type { PolicyRuntime } from '../../runtime.ts';

/** A call (connect, answer, body) that takes longer fails. */
export const IDP_TIMEOUT_MS = 10_000;
/** Largest answer read from the identity provider (metadata documents, registrations, tokens). */
export const MAX_IDP_RESPONSE_BYTES = 256 * 1024;

export interface IdpResponse {
  status: number;
  /** Content-Type of the answer, when it has one. */
  contentType: string | undefined;
  /** Cache-Control and Pragma of the answer (token answers say no-store), when set. */
  cacheHeaders: Record<string, string>;
  body: Buffer;
}

export interface IdpCall {
  method: 'GET' | 'POST';
  headers?: Record<string, string>;
  body?: Buffer | string;
}

/** The identity provider could not be asked: unreachable, too slow, or an answer too large. */
export class IdpUnavailable extends Error {}

export class IdentityProviderClient {
  private readonly agent: Agent = new (undici().Agent)({
    connections: 32,
    keepAliveTimeout: 4000,
    headersTimeout: IDP_TIMEOUT_MS,
    bodyTimeout: IDP_TIMEOUT_MS,
  });
  private readonly timeoutMs: number;
  private readonly maxBytes: number;

  constructor(options: { timeoutMs?: number; maxBytes?: number } = {}) {
    this.timeoutMs = options.timeoutMs ?? IDP_TIMEOUT_MS;
    this.maxBytes = options.maxBytes ?? MAX_IDP_RESPONSE_BYTES;
  }

  /** Calls `url`; rejects with IdpUnavailable (the reason, without the URL's query or credentials). */
  async call(url: string, call: IdpCall): Promise<IdpResponse> {
    let response: Dispatcher.ResponseData;
    try {
      response = await undici().request(url, {
        method: call.method,
        headers: call.headers,
        body: call.body,
        dispatcher: this.agent,
        signal: AbortSignal.timeout(this.timeoutMs),
      });
    } catch (error) {
      throw new IdpUnavailable(`${displayUrl(url)} could not be reached: ${(error as Error).message}`);
    }
    const declared = Number(response.headers['content-length']);
    if (declared > this.maxBytes) {
      discard(response.body);
      throw new IdpUnavailable(`${displayUrl(url)} answered more than ${this.maxBytes} bytes`);
    }
    const chunks: Buffer[] = [];
    let size = 0;
    try {
      for await (const chunk of response.body) {
        size += (chunk as Buffer).length;
        if (size > this.maxBytes) {
          discard(response.body);
          throw new IdpUnavailable(`${displayUrl(url)} answered more than ${this.maxBytes} bytes`);
        }
        chunks.push(chunk as Buffer);
      }
    } catch (error) {
      if (error instanceof IdpUnavailable) throw error;
      throw new IdpUnavailable(`${displayUrl(url)} failed while answering: ${(error as Error).message}`);
    }
    const cacheHeaders: Record<string, string> = {};
    for (const name of ['cache-control', 'pragma']) {
      const value = response.headers[name];
      if (typeof value === 'string') cacheHeaders[name] = value;
    }
    const type = response.headers['content-type'];
    return {
      status: response.statusCode,
      contentType: typeof type === 'string' ? type : undefined,
      cacheHeaders,
      body: Buffer.concat(chunks),
    };
  }

  close(): void {
    this.agent.close().catch(() => undefined);
  }
}

/** The client every MCP OAuth endpoint of the gateway shares (PolicyRuntime state). */
export function identityProviderClient(runtime: PolicyRuntime): IdentityProviderClient {
  return runtime.use('mcp-oauth identity provider client', () => new IdentityProviderClient());
}

/** A URL as it may be shown: no user info, no query (either could carry a secret). */
export function displayUrl(url: string): string {
  try {
    const parsed = new URL(url);
    return `${parsed.origin}${parsed.pathname}`;
  } catch {
    return 'the configured URL';
  }
}

function discard(body: Readable): void {
  body.on('error', () => undefined);
  body.destroy();
}
