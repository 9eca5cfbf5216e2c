// HTTP/2 requests reach gw's request path through node's compatibility API (Http2ServerRequest),
// whose headers carry the pseudo-header fields (:method, :path, :authority, :scheme) and no Host.
// The request path reads headers the HTTP/1 way and forwards them, so an HTTP/2 request gets
// that view: Host from :authority (RFC 9113 section 8.3.1), the pseudo-header fields left out
// (method and URL stay on req.method and req.url), and a body of unknown length marked the way
// HTTP/1.1 marks it.
import type { IncomingHttpHeaders } from 'node:http';
import type { Http2ServerRequest } from 'node:http2';

export function adaptHttp2Request(req: Http2ServerRequest): void {
  const original = req.headers;
  const headers: IncomingHttpHeaders = {};
  for (const name in original) if (name.charCodeAt(0) !== 58 /* : */) headers[name] = original[name];
  const authority = original[':authority'];
  if (typeof authority === 'string' && authority !== '') headers.host = authority;
  // A body without content-length is framed by DATA frames; HTTP/1.1 says so with chunked
  // encoding, which is what the request path checks (and never forwards: it is hop-by-hop).
  if (headers['content-length'] === undefined && !req.stream.endAfterHeaders) headers['transfer-encoding'] = 'chunked';
  // An own property in front of the class's getter; node's compat code reads its own copy.
  Object.defineProperty(req, 'headers', { value: headers, writable: true, configurable: true, enumerable: true });
}

/** The size of a header list as HTTP/2 counts it (RFC 9113 section 6.5.2): name + value + 32 per field. */
export function headerListSize(rawHeaders: readonly string[]): number {
  let size = 0;
  for (let index = 0; index + 1 < rawHeaders.length; index += 2)
    size += rawHeaders[index]!.length + rawHeaders[index + 1]!.length + 32;
  return size;
}
