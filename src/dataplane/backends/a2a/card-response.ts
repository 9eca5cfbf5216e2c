// Serving a response that carries an agent card — the well-known card, the REST extended card, a
// JSON-RPC GetExtendedAgentCard result — with its URLs rewritten to gw's (./agent-card.ts). The
// agent's response is taken whole (bounded: a card is small), parsed once and rewritten; anything
// else the agent answers (an error status, an encoded body) reaches the client as it came. A body
// over the bound, or one that is not JSON, is answered 502 naming what was wrong: the client is
// never handed the agent's own URLs.
import { BodyTooLargeError, readBody } from '../../proxy/body.ts';
import { responseCompleted, writableOf } from '../../proxy/client-response.ts';
import { sendText } from '../../proxy/direct-response.ts';
import { parseJsonBody } from '../../proxy/json-body.ts';
import { pipeBody } from '../../proxy/pipe-body.ts';
import { requestOrigin } from '../../proxy/request-origin.ts';
import { ResponseCapture } from '../../proxy/response-capture.ts';
import { normalizePath } from '../../routing/path.ts';
import type { RoutedRequest } from '../backend.ts';
import type { ForwardingChanges, HttpForwarder } from '../http.ts';
import { rewriteAgentCard } from './agent-card.ts';

/** The most bytes of an agent card gw reads (the listener's buffer limit when that is smaller). */
export const MAX_CARD_BYTES = 1024 * 1024;

/** Where the card is in the agent's JSON answer: the whole of it, or a JSON-RPC response's `result`. */
export type CardPlace = 'body' | 'result';

/** Request headers that would let the agent answer with something gw cannot rewrite. */
const UNREWRITABLE_REQUEST_HEADERS = ['if-none-match', 'if-modified-since', 'if-match', 'if-range', 'range'];

/** Response headers that describe the agent's bytes, not the rewritten card. */
const STALE_RESPONSE_HEADERS = ['content-length', 'etag', 'last-modified', 'content-md5', 'digest'];

/** Forwards the request and answers the client with the card in the agent's answer rewritten. */
export async function serveCardResponse(
  forwarder: HttpForwarder,
  routed: RoutedRequest,
  how: ForwardingChanges,
  place: CardPlace,
  agentOrigins: readonly string[],
): Promise<void> {
  const { res, record, forward } = routed;
  const headers = forward.headers;
  // The card whole and as bytes gw can read: no revalidation (the agent's validators name its
  // bytes), no ranges, no content coding.
  for (const name of UNREWRITABLE_REQUEST_HEADERS) delete headers[name];
  headers['accept-encoding'] = 'identity';
  const { promise: head, resolve: headWritten } = Promise.withResolvers<void>();
  const capture = new ResponseCapture(() => headWritten());
  // The client going away ends the agent's response too (forwardHttp watches its response's close).
  const onClientGone = () => {
    if (!responseCompleted(res)) capture.destroy();
  };
  res.once('close', onClientGone);
  const forwarding = forwarder.forward({ ...routed, res: capture }, how);
  try {
    // The forwarder may end without writing anything (the client went away first).
    if ((await Promise.race([head.then(() => true), forwarding.then(() => false)])) === false) return;
    const status = capture.statusCode;
    const encoding = String(capture.getHeader('content-encoding') ?? 'identity').toLowerCase();
    if (status < 200 || status > 299 || encoding !== 'identity') return await passThrough(capture, routed);
    let body: Buffer;
    try {
      body = await readBody(capture, Math.min(MAX_CARD_BYTES, routed.route.maxBufferBytes));
    } catch (error) {
      // Nothing more of the agent's answer is wanted (an oversized one is not read to its end).
      capture.destroy();
      if (res.destroyed) return;
      record.error =
        error instanceof BodyTooLargeError
          ? `a2a: the agent card exceeds ${error.limit} bytes`
          : 'a2a: the agent card could not be read';
      return void sendText(res, 502, record.error);
    }
    const problem = rewriteInPlace(body, place, routed, agentOrigins);
    if (typeof problem === 'string') {
      record.error = `a2a: ${problem}`;
      return void sendText(res, 502, record.error);
    }
    const out = Buffer.from(problem.text);
    const answer = capture.getHeaders();
    for (const name of STALE_RESPONSE_HEADERS) delete answer[name];
    delete answer['content-encoding'];
    answer['content-type'] ??= 'application/json';
    answer['content-length'] = out.length;
    res.writeHead(status, answer);
    res.end(out);
  } finally {
    res.off('close', onClientGone);
    // What was wrong with the card says more than the cut-off exchange the forwarder then records.
    const cardProblem = record.error;
    await forwarding;
    if (cardProblem !== '') record.error = cardProblem;
  }
}

/** The agent's card rewritten, as JSON text; or what is wrong with the answer. */
function rewriteInPlace(
  body: Buffer,
  place: CardPlace,
  routed: RoutedRequest,
  agentOrigins: readonly string[],
): { text: string } | string {
  const parsed = parseJsonBody(body);
  if (parsed.problem !== undefined) return `the agent card ${parsed.problem}`;
  const value = parsed.value as Record<string, unknown> | null;
  const { record, req, forward } = routed;
  const gatewayOrigin = requestOrigin(
    routed.scheme,
    record.host || String(req.headers[':authority'] ?? ''),
    req.headers,
  );
  if (gatewayOrigin === undefined) return 'the request names no host to write into the agent card';
  const address = {
    gatewayOrigin,
    clientPath: normalizePath(record.path) ?? record.path,
    upstreamPath: forward.path,
    agentOrigins,
  };
  if (place === 'result') {
    // A JSON-RPC error (or anything but a result) carries no card: it goes as it came.
    if (typeof value !== 'object' || value === null || !('result' in value)) return { text: body.toString('utf8') };
    const rewritten = rewriteAgentCard(value.result, address);
    if ('problem' in rewritten) return rewritten.problem;
    return { text: JSON.stringify(value) };
  }
  const rewritten = rewriteAgentCard(value, address);
  return 'problem' in rewritten ? rewritten.problem : { text: JSON.stringify(rewritten.card) };
}

/** The agent's answer as it came (an error, an encoded body): head and body streamed to the client. */
function passThrough(capture: ResponseCapture, routed: RoutedRequest): Promise<void> {
  const { res } = routed;
  res.writeHead(capture.statusCode, capture.getHeaders());
  return new Promise((resolve) => {
    pipeBody(capture, writableOf(res), (error) => {
      if (error) res.destroy();
      resolve();
    });
  });
}
