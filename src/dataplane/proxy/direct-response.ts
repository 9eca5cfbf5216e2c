// Responses the gateway answers itself (no route, a backend that cannot be used, an upstream
// failure). Plain text with the reason; never a stack trace or a secret.
import type { ClientResponse } from './client-response.ts';

export function sendText(res: ClientResponse, status: number, message: string, headers?: Record<string, string>): void {
  if (res.headersSent) {
    res.destroy();
    return;
  }
  const body = `${message}\n`;
  res.writeHead(status, {
    'content-type': 'text/plain; charset=utf-8',
    'content-length': Buffer.byteLength(body),
    ...headers,
  });
  res.end(body);
}

export function sendJson(res: ClientResponse, status: number, body: string, headers?: Record<string, string>): void {
  if (res.headersSent) {
    res.destroy();
    return;
  }
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), ...headers });
  res.end(body);
}

/** An answer a policy gives (policies/types.ts LocalResponse). */
export interface LocalAnswer {
  status: number;
  headers?: Record<string, string | string[]>;
  body?: string | Buffer;
  /** gw's own refusal, whose body is a one-line message (an LLM route words it in its client's format). */
  own?: 'refusal' | 'overloaded';
}

/** An answer a policy gives, as it is: text gets a text/plain type and a trailing newline. */
export function sendLocalResponse(res: ClientResponse, response: LocalAnswer): void {
  if (res.headersSent) {
    res.destroy();
    return;
  }
  const body =
    response.body === undefined
      ? undefined
      : typeof response.body === 'string'
        ? Buffer.from(response.body.endsWith('\n') || response.body === '' ? response.body : `${response.body}\n`)
        : response.body;
  const headers: Record<string, string | string[] | number> = { ...response.headers };
  const hasType = Object.keys(headers).some((name) => name.toLowerCase() === 'content-type');
  if (typeof response.body === 'string' && response.body !== '' && !hasType)
    headers['content-type'] = 'text/plain; charset=utf-8';
  headers['content-length'] = body?.length ?? 0;
  res.writeHead(response.status, headers);
  res.end(body);
}
