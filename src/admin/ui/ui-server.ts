// The web UI on the admin listener: GET / sends the browser to /ui/; /ui/assets/ and /ui/vendor/
// are the pages' modules and the libraries (static-assets.ts); /ui/api/ is the JSON API
// (api/endpoints.ts); every other /ui/ path is the shell, whose scripts show the page the path
// names. Before an API endpoint answers: the Host check of a loopback-only UI, the session when a
// token is required, the cross-site checks of a change, and a bounded body. Off loopback without
// a token the UI is refused (a page saying how to give one). docs/ui.md, decision 0046.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AdminRoutes } from '../../dataplane/telemetry/admin-server.ts';
import { type JsonAnswer, STREAMED, type UiContext, type UiEndpoint, type UiRequest } from './api/endpoint.ts';
import { ENDPOINTS } from './api/endpoints.ts';
import { AdminToken } from './security/admin-token.ts';
import { authenticated, crossSiteProblem, foreignHostProblem, isLoopbackBinding } from './security/request-guard.ts';
import type { UiSources } from './sources.ts';
import { type Asset, loadStaticAssets } from './static-assets.ts';

export interface AdminUiOptions {
  sources: UiSources;
  /** The address the admin listener binds: anything but loopback requires the token. */
  adminAddress: string;
  /** The admin token (--admin-token-file, GW_ADMIN_TOKEN), if given. */
  token?: string;
  /** Endpoints beyond the built-in ones (tests; the list in api/endpoints.ts is the place for features). */
  endpoints?: readonly UiEndpoint[];
}

/** How the UI answers: openly on loopback, behind the token, or not at all (off loopback, no token). */
export type UiAccess = 'loopback' | 'token' | 'refused';

export interface AdminUi extends AdminRoutes {
  readonly access: UiAccess;
}

/** The largest JSON body the API reads (an object's YAML, a login). */
export const MAX_BODY_BYTES = 1024 * 1024;

const REFUSED_TEXT =
  'The web UI is off: the admin listener is bound to a non-loopback address and no admin token is set.\n' +
  'Give one with gw run --admin-token-file FILE or GW_ADMIN_TOKEN (docs/ui.md), or bind the admin\n' +
  'listener to loopback (--admin-address 127.0.0.1) and reach it through a tunnel.\n';

export function createAdminUi(options: AdminUiOptions): AdminUi {
  const assets = loadStaticAssets();
  const token = options.token === undefined ? undefined : new AdminToken(options.token);
  const access: UiAccess = token ? 'token' : isLoopbackBinding(options.adminAddress) ? 'loopback' : 'refused';
  const endpoints = [...ENDPOINTS, ...(options.endpoints ?? [])];
  const securityHeaders = {
    'content-security-policy': assets.contentSecurityPolicy,
    'x-content-type-options': 'nosniff',
    'referrer-policy': 'no-referrer',
    'x-frame-options': 'DENY',
    'cross-origin-opener-policy': 'same-origin',
    'cross-origin-resource-policy': 'same-origin',
  };

  const handle = (request: IncomingMessage, response: ServerResponse, path: string): boolean => {
    if (path !== '/' && path !== '/ui' && !path.startsWith('/ui/')) return false;
    for (const [name, value] of Object.entries(securityHeaders)) response.setHeader(name, value);
    if (access === 'refused') {
      request.resume();
      sendText(response, request, 403, REFUSED_TEXT);
      return true;
    }
    const foreign = access === 'loopback' ? foreignHostProblem(request) : undefined;
    if (foreign !== undefined) {
      request.resume();
      sendText(response, request, 403, `${foreign}\n`);
      return true;
    }
    if (path === '/' || path === '/ui') {
      request.resume();
      response.statusCode = 302;
      response.setHeader('location', '/ui/');
      response.end();
      return true;
    }
    if (path.startsWith('/ui/api/')) {
      serveApi(request, response, path).catch((error: Error) =>
        sendJson(response, request, { status: 500, body: { error: error.message } }),
      );
      return true;
    }
    request.resume();
    if (request.method !== 'GET' && request.method !== 'HEAD') {
      response.setHeader('allow', 'GET, HEAD');
      sendText(response, request, 405, 'method not allowed\n');
      return true;
    }
    const file = assets.files.get(path);
    if (file) sendAsset(response, request, file);
    else if (path.startsWith('/ui/assets/') || path.startsWith('/ui/vendor/'))
      sendText(response, request, 404, 'not found\n');
    else sendAsset(response, request, assets.shell);
    return true;
  };

  const serveApi = async (request: IncomingMessage, response: ServerResponse, path: string): Promise<void> => {
    const method = request.method ?? 'GET';
    const atPath = endpoints.filter((e) => e.path === path);
    const endpoint = atPath.find((e) => e.method === method || (method === 'HEAD' && e.method === 'GET'));
    if (!endpoint) {
      request.resume();
      if (atPath.length > 0) response.setHeader('allow', atPath.map((e) => e.method).join(', '));
      sendJson(response, request, {
        status: atPath.length > 0 ? 405 : 404,
        body: { error: atPath.length > 0 ? `${method} is not allowed here` : `no API endpoint ${path}` },
      });
      return;
    }
    const isAuthenticated = token === undefined || authenticated(request, token);
    if (!endpoint.public && !isAuthenticated) {
      request.resume();
      sendJson(response, request, { status: 401, body: { error: 'log in with the admin token', login: true } });
      return;
    }
    const crossSite = crossSiteProblem(request);
    if (crossSite !== undefined) {
      request.resume();
      sendJson(response, request, { status: 403, body: { error: crossSite } });
      return;
    }
    let body: unknown;
    if (method === 'POST' || method === 'PUT') {
      const read = await readJson(request);
      if ('problem' in read) {
        sendJson(response, request, { status: read.status, body: { error: read.problem } });
        return;
      }
      body = read.value;
    } else {
      request.resume();
    }
    const url = new URL(request.url ?? '/', 'http://admin');
    const context: UiContext = { sources: options.sources, token, authenticated: isAuthenticated };
    const uiRequest: UiRequest = { query: url.searchParams, body, raw: request, response };
    const answer = await endpoint.handle(context, uiRequest);
    if (answer !== STREAMED) sendJson(response, request, answer);
  };

  return { access, handle };
}

/** The request's JSON body, at most MAX_BODY_BYTES (the admin listener bounds the time it takes). */
async function readJson(request: IncomingMessage): Promise<{ value: unknown } | { problem: string; status: number }> {
  const type = request.headers['content-type'] ?? '';
  if (!/^application\/json\b/i.test(type)) {
    request.resume();
    return { problem: 'send the body as application/json', status: 415 };
  }
  const declared = Number(request.headers['content-length'] ?? 0);
  if (declared > MAX_BODY_BYTES) {
    request.resume();
    return { problem: `the body is larger than ${MAX_BODY_BYTES} bytes`, status: 413 };
  }
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of request as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_BODY_BYTES) {
      request.resume();
      return { problem: `the body is larger than ${MAX_BODY_BYTES} bytes`, status: 413 };
    }
    chunks.push(chunk);
  }
  try {
    return { value: JSON.parse(Buffer.concat(chunks).toString('utf8')) };
  } catch (error) {
    return { problem: `the body is not JSON: ${(error as Error).message}`, status: 400 };
  }
}

function sendJson(response: ServerResponse, request: IncomingMessage, answer: JsonAnswer): void {
  if (response.headersSent) {
    response.destroy();
    return;
  }
  for (const [name, value] of Object.entries(answer.headers ?? {})) response.setHeader(name, value);
  const text = JSON.stringify(answer.body);
  response.statusCode = answer.status;
  response.setHeader('content-type', 'application/json; charset=utf-8');
  response.setHeader('content-length', Buffer.byteLength(text));
  response.setHeader('cache-control', 'no-store');
  response.end(request.method === 'HEAD' ? undefined : text);
}

function sendText(response: ServerResponse, request: IncomingMessage, status: number, text: string): void {
  response.statusCode = status;
  response.setHeader('content-type', 'text/plain; charset=utf-8');
  response.setHeader('content-length', Buffer.byteLength(text));
  response.setHeader('cache-control', 'no-store');
  response.end(request.method === 'HEAD' ? undefined : text);
}

function sendAsset(response: ServerResponse, request: IncomingMessage, asset: Asset): void {
  response.setHeader('etag', asset.etag);
  response.setHeader('cache-control', 'no-cache');
  if (request.headers['if-none-match'] === asset.etag) {
    response.statusCode = 304;
    response.end();
    return;
  }
  response.statusCode = 200;
  response.setHeader('content-type', asset.contentType);
  response.setHeader('content-length', asset.body.length);
  response.end(request.method === 'HEAD' ? undefined : asset.body);
}
