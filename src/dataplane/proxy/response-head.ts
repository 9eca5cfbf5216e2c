// Hooks that see and change a response as it starts — its status and headers — whoever writes it:
// a backend of any kind, a policy's answer, gw's own error. Policies (header modifiers, CORS,
// transformations, rate-limit headers) and the route's ResponseHeaderModifier filters use them.
import type { OutgoingHttpHeaders, ServerResponse } from 'node:http';
import { type ResponseHead, setHeadHeaders } from './client-response.ts';

/** Changes the response as it starts: read res.statusCode, use res.getHeader/setHeader/removeHeader. */
export type ResponseHook = (res: ResponseHead) => void;

const hooksOf = new WeakMap<ServerResponse, ResponseHook[]>();

/**
 * Runs `hook` when `res` starts, after the hooks added before it — or, `first`, before them (what
 * is nearer the backend changes the response before what is nearer the client).
 */
export function onResponseHead(res: ServerResponse, hook: ResponseHook, first = false): void {
  let hooks = hooksOf.get(res);
  if (!hooks) {
    hooks = [];
    hooksOf.set(res, hooks);
    interceptWriteHead(res, hooks);
  }
  if (first) hooks.unshift(hook);
  else hooks.push(hook);
}

/**
 * Runs the hooks of `res` on its status and headers as they are, writing nothing: for a response
 * whose head is written by someone else (a WebSocket handshake's 101, proxy/websocket-upgrade.ts),
 * which then carries the headers the hooks left on `res`.
 */
export function runResponseHooks(res: ServerResponse): void {
  for (const hook of hooksOf.get(res) ?? []) {
    try {
      hook(res);
    } catch {
      // a hook adds headers; one failing must not lose the response
    }
  }
}

/**
 * Wraps res.writeHead so the hooks see and change the final status and headers. Every response
 * goes through writeHead (an implicit head too), so this catches all of them.
 */
function interceptWriteHead(res: ServerResponse, hooks: ResponseHook[]): void {
  const original = res.writeHead;
  res.writeHead = function writeHead(
    this: ServerResponse,
    status: number,
    reasonOrHeaders?: string | OutgoingHttpHeaders | (string | string[])[],
    maybeHeaders?: OutgoingHttpHeaders | (string | string[])[],
  ) {
    const headers = typeof reasonOrHeaders === 'string' ? maybeHeaders : reasonOrHeaders;
    if (typeof reasonOrHeaders === 'string') this.statusMessage = reasonOrHeaders;
    this.statusCode = status;
    setHeadHeaders(this, headers);
    for (const hook of hooks) {
      try {
        hook(this);
      } catch {
        // a hook adds headers; one failing must not lose the response
      }
    }
    return original.call(this, this.statusCode);
  } as ServerResponse['writeHead'];
}
