// Responses the gateway answers itself (no route, a backend that cannot be used, an upstream
// failure). Plain text with the reason; never a stack trace or a secret.
import type { ServerResponse } from 'node:http';

export function sendText(res: ServerResponse, status: number, message: string, headers?: Record<string, string>): void {
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

export function sendJson(res: ServerResponse, status: number, body: string, headers?: Record<string, string>): void {
  if (res.headersSent) {
    res.destroy();
    return;
  }
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), ...headers });
  res.end(body);
}
