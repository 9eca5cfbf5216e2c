// gw's own answers on an LLM route, in the API format its client speaks, so that the official SDKs
// read them as their own error classes: OpenAI's error object for Chat Completions, Responses,
// Embeddings, the model listing and Realtime; Anthropic's error object for Messages and token
// counting (formats/errors.ts has each vendor's status, type and code conventions); Cohere's
// `{"message"}` for reranking (formats/rerank.ts). Everything gw itself
// says no to on such a route comes here: a policy's refusal (401, 403, 429, 413...), a request gw
// will not serve (unknown model, a body not in its route type's format), a provider gw could not
// reach, and gw's own 5xx — still hiding its detail behind a request id (proxy/own-failure.ts).
import type { RouteType } from '../../api/types/ai.ts';
import type { GatewayAnswers } from '../proxy/answers.ts';
import type { ClientResponse } from '../proxy/client-response.ts';
import { type LocalAnswer, sendLocalResponse } from '../proxy/direct-response.ts';
import { ownFailure } from '../proxy/own-failure.ts';
import type { RequestRecord } from '../telemetry/request-record.ts';
import type { ErrorKind } from './formats/index.ts';
import { type ClientFormat, clientErrorBody, ROUTE_CLIENT_FORMAT } from './providers/index.ts';

/** Headers of a policy's answer that describe its plain-text body, which the error body replaces. */
const BODY_HEADERS: ReadonlySet<string> = new Set(['content-type', 'content-length']);

/** Answers the client an error in its format; `kind` says what the status alone does not. */
export function sendClientError(
  res: ClientResponse,
  format: ClientFormat,
  status: number,
  message: string,
  headers?: Record<string, string | string[]>,
  kind?: ErrorKind,
): void {
  if (res.headersSent) {
    res.destroy();
    return;
  }
  const { contentType, body } = clientErrorBody(format, status, message, kind);
  res.writeHead(status, { ...headers, 'content-type': contentType, 'content-length': Buffer.byteLength(body) });
  res.end(body);
}

/**
 * Answers an error gw decided in the client's format; a 5xx of gw's own (a refused model, a request
 * gw cannot build) carries a request id instead of its detail (proxy/own-failure.ts).
 */
export function sendGatewayError(
  res: ClientResponse,
  record: RequestRecord,
  format: ClientFormat,
  status: number,
  message: string,
): void {
  if (status < 500) {
    sendClientError(res, format, status, message);
    return;
  }
  const failure = ownFailure(record, message);
  sendClientError(res, format, status, failure.message, failure.headers);
}

/** A policy's refusal in the client's format, its headers (www-authenticate, retry-after...) kept. */
function sendRefusal(res: ClientResponse, format: ClientFormat, answer: LocalAnswer): void {
  if (answer.own === undefined || answer.status < 400) {
    sendLocalResponse(res, answer);
    return;
  }
  const message = (typeof answer.body === 'string' ? answer.body : (answer.body?.toString('utf8') ?? '')).trim();
  let headers: Record<string, string | string[]> | undefined;
  for (const name in answer.headers) {
    if (BODY_HEADERS.has(name.toLowerCase())) continue;
    headers ??= {};
    headers[name] = answer.headers[name]!;
  }
  sendClientError(res, format, answer.status, message, headers, answer.own === 'overloaded' ? 'overloaded' : undefined);
}

function answersIn(format: ClientFormat): GatewayAnswers {
  return Object.freeze({
    local: (res: ClientResponse, answer: LocalAnswer) => sendRefusal(res, format, answer),
    ownFailure: (res: ClientResponse, record: RequestRecord, detail: string, status = 500) => {
      const failure = ownFailure(record, detail);
      sendClientError(res, format, status, failure.message, failure.headers);
    },
  });
}

const BY_FORMAT: Readonly<Record<ClientFormat, GatewayAnswers>> = {
  completions: answersIn('completions'),
  messages: answersIn('messages'),
  responses: answersIn('responses'),
  embeddings: answersIn('embeddings'),
  count_tokens: answersIn('count_tokens'),
  gemini: answersIn('gemini'),
  gemini_count_tokens: answersIn('gemini_count_tokens'),
  models: answersIn('models'),
  rerank: answersIn('rerank'),
  realtime: answersIn('realtime'),
};

/** gw's answers on an LLM route whose client speaks `format`. */
export function llmAnswers(format: ClientFormat): GatewayAnswers {
  return BY_FORMAT[format];
}

/** gw's answers on each path of an LLM backend, by the route type the path has there. */
export function answersByRouteType(routeTypeOf: (path: string) => RouteType): (path: string) => GatewayAnswers {
  return (path) => BY_FORMAT[ROUTE_CLIENT_FORMAT[routeTypeOf(path)] ?? 'completions'];
}
