// One HTTP exchange with Keycloak, bounded: a time limit for the whole exchange (connect,
// answer, body), a byte limit on the answer read, redirects not followed. Its own connection
// pool, closed when the procedure ends so that the command can exit.
import type { Agent } from 'undici';
import { undici } from '../util/undici.ts';

/** The most of an answer read: Keycloak's listings of one realm stay far below it. */
export const MAX_ANSWER_BYTES = 4 * 1024 * 1024;

export interface HttpAnswer {
  status: number;
  contentType: string;
  location: string | undefined;
  text: string;
}

/** No answer came: refused, reset, timed out, or too large to read. */
export class NoAnswer extends Error {}

export class HttpClient {
  readonly #agent: Agent;
  readonly #timeoutMs: number;

  constructor(timeoutMs: number) {
    this.#timeoutMs = timeoutMs;
    this.#agent = new (undici().Agent)({
      connect: { timeout: timeoutMs },
      headersTimeout: timeoutMs,
      bodyTimeout: timeoutMs,
      connections: 4,
    });
  }

  async send(method: string, url: URL, headers: Record<string, string>, body?: string): Promise<HttpAnswer> {
    const signal = AbortSignal.timeout(this.#timeoutMs);
    try {
      const response = await undici().request(url, {
        method: method as 'GET',
        headers,
        body,
        signal,
        dispatcher: this.#agent,
      });
      const chunks: Buffer[] = [];
      let size = 0;
      for await (const chunk of response.body) {
        size += (chunk as Buffer).length;
        if (size > MAX_ANSWER_BYTES) {
          response.body.destroy();
          throw new NoAnswer(`the answer is larger than ${MAX_ANSWER_BYTES / 1024 / 1024} MiB`);
        }
        chunks.push(chunk as Buffer);
      }
      const location = response.headers.location;
      const contentType = response.headers['content-type'];
      return {
        status: response.statusCode,
        contentType: typeof contentType === 'string' ? contentType : '',
        location: typeof location === 'string' ? location : undefined,
        text: Buffer.concat(chunks).toString('utf8'),
      };
    } catch (error) {
      if (error instanceof NoAnswer) throw error;
      if (signal.aborted) throw new NoAnswer(`no complete answer within ${this.#timeoutMs / 1000} s`);
      const cause = (error as { cause?: { message?: string } }).cause?.message;
      throw new NoAnswer(cause ?? (error as Error).message);
    }
  }

  async close(): Promise<void> {
    await this.#agent.close();
  }
}
