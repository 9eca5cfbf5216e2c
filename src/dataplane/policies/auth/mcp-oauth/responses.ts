// The answers MCP OAuth endpoints give: JSON documents and plain-text errors, all readable from
// any origin (the documents are public and browser-based MCP clients read them), and CORS
// preflights answered here because these endpoints are served before any route's CORS policy.
import type { IncomingMessage } from 'node:http';
import { BodyTooLargeError, bodyFailure, readRequestBody } from '../../../proxy/body.ts';
import type { LocalResponse } from '../../types.ts';

export const CORS_HEADERS: Readonly<Record<string, string>> = Object.freeze({ 'access-control-allow-origin': '*' });

export function jsonResponse(status: number, value: unknown, headers: Record<string, string> = {}): LocalResponse {
  return {
    status,
    headers: { 'content-type': 'application/json', ...CORS_HEADERS, ...headers },
    body: Buffer.from(JSON.stringify(value)),
  };
}

export function textResponse(status: number, message: string, headers: Record<string, string> = {}): LocalResponse {
  return { status, headers: { ...CORS_HEADERS, ...headers }, body: message };
}

/** 405 naming the methods the endpoint takes. */
export function methodNotAllowed(allowed: string): LocalResponse {
  return textResponse(405, `use ${allowed.split(', ')[0]} here`, { allow: allowed });
}

// Header names a preflight may ask for: tokens separated by commas, bounded.
const REQUESTED_HEADERS = /^[A-Za-z0-9!#$%&'*+\-.^_`|~, ]{1,1024}$/;

/** The answer to a CORS preflight of an endpoint taking `methods`: any origin, the headers asked for. */
export function preflight(req: IncomingMessage, methods: string): LocalResponse {
  const requested = req.headers['access-control-request-headers'];
  const headers: Record<string, string> = {
    ...CORS_HEADERS,
    'access-control-allow-methods': methods,
    'access-control-max-age': '600',
  };
  if (typeof requested === 'string' && REQUESTED_HEADERS.test(requested))
    headers['access-control-allow-headers'] = requested;
  return { status: 204, headers };
}

/** The request body, at most `limit` bytes; a LocalResponse when it is larger or cannot be read. */
export async function requestBody(req: IncomingMessage, limit: number): Promise<Buffer | LocalResponse> {
  try {
    return await readRequestBody(req, limit);
  } catch (error) {
    if (error instanceof BodyTooLargeError)
      return textResponse(413, `the request body is larger than ${limit} bytes`, { connection: 'close' });
    const { status, message } = bodyFailure(error);
    return textResponse(status, message, { connection: 'close' });
  }
}
