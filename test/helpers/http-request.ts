// One HTTP request from a test (undici), its answer read whole: status, headers, body.
import type { Readable } from 'node:stream';
import { request } from 'undici';

export interface RequestOptions {
  /** GET unless given. */
  method?: string;
  headers?: Record<string, string | string[]>;
  body?: string | Buffer | Readable;
}

export interface Reply {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  /** The body as UTF-8 text. */
  body: string;
  /** The body's bytes. */
  bytes: Buffer;
}

export async function httpRequest(url: string, options: RequestOptions = {}): Promise<Reply> {
  const response = await request(url, {
    method: (options.method ?? 'GET') as 'GET',
    headers: options.headers,
    body: options.body,
  });
  const bytes = Buffer.from(await response.body.arrayBuffer());
  return {
    status: response.statusCode,
    headers: response.headers as Reply['headers'],
    body: bytes.toString('utf8'),
    bytes,
  };
}
