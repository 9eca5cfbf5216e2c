// ExtAuth over plain HTTP: the request is re-sent to the authorization server — the original
// method, a path (the original one unless `path` computes another, under the url's base path),
// the allowed request headers plus computed ones, and a body (computed, forwarded or none). A
// 200 answer allows, copying allowedResponseHeaders to the upstream request and computing
// responseMetadata into `extauthz`; any other answer is the client's answer, or a redirect.
import type { AgentExtAuthHTTP } from '../../../api/types/inbound-auth.ts';
import { type Expression, fromCelValue, toCelValue } from '../../cel/expression.ts';
import { forwardedResponseHeaders } from '../../proxy/headers.ts';
import { celContext, celHeaders } from '../../telemetry/cel-context.ts';
import { compileField } from '../cel-field.ts';
import type { ResolvedEndpoint } from '../endpoint.ts';
import type { PolicyExchange } from '../exchange.ts';
import { isProblem, type PolicyProblem } from '../types.ts';
import { CheckFailure, type Decision, forbidden, type HeaderChange, NO_METADATA, validHeader } from './decision.ts';

/** The auth server's answer is read into memory up to this much; a larger one is a failure. */
export const MAX_CHECK_RESPONSE_BYTES = 1024 * 1024;

/** Request headers sent to the server when allowedRequestHeaders is unset. */
const DEFAULT_ALLOWED_REQUEST_HEADERS = ['authorization'];

/** Denials that are about the credentials (and so may be cached, or redirected). */
const CREDENTIAL_DENIALS = new Set([401, 403]);

/** The part of an undici Dispatcher this module uses (a Pool in production). */
export interface CheckDispatcher {
  request(options: {
    path: string;
    method: string;
    headers: Record<string, string | string[]>;
    body?: Buffer;
    signal?: AbortSignal;
  }): Promise<{
    statusCode: number;
    headers: Record<string, string | string[] | undefined>;
    body: AsyncIterable<Buffer> & { destroy(error?: Error): unknown };
  }>;
  /** An HTTP CONNECT: the answer's status and headers, and the connection it leaves (a tunnel when 2xx). */
  connect(options: { path: string; headers: Record<string, string | string[]>; signal?: AbortSignal }): Promise<{
    statusCode: number;
    headers: Record<string, string | string[] | undefined>;
    socket: { destroy(): unknown };
  }>;
}

export type HttpCheck = (exchange: PolicyExchange, body: Buffer | undefined) => Promise<Decision>;

/** Compiles the HTTP settings into the check of one request. */
export function compileHttpMode(
  settings: AgentExtAuthHTTP,
  endpoint: ResolvedEndpoint,
  dispatcher: CheckDispatcher,
  deadlineMs: number,
  field: string,
): HttpCheck | PolicyProblem {
  const problems: PolicyProblem[] = [];
  const compile = (source: string | undefined, path: string): Expression | undefined => {
    if (source === undefined) return undefined;
    const expression = compileField(source, `${field}.http.${path}`);
    if (!isProblem(expression)) return expression;
    problems.push(expression);
    return undefined;
  };
  const pathExpression = compile(settings.path, 'path');
  const redirectExpression = compile(settings.redirect, 'redirect');
  const bodyExpression = compile(settings.body, 'body');
  const addHeaders = Object.entries(settings.addRequestHeaders ?? {}).map(
    ([name, source]) => [name.toLowerCase(), compile(source, `addRequestHeaders.${name}`)] as const,
  );
  const responseMetadata = Object.entries(settings.responseMetadata ?? {}).map(
    ([name, source]) => [name, compile(source, `responseMetadata.${name}`)] as const,
  );
  if (problems.length > 0) return problems[0]!;
  const allowedRequestHeaders = (settings.allowedRequestHeaders ?? DEFAULT_ALLOWED_REQUEST_HEADERS).map((name) =>
    name.toLowerCase(),
  );
  const allowedResponseHeaders = (settings.allowedResponseHeaders ?? []).map((name) => name.toLowerCase());

  return async (exchange, forwardedBody) => {
    const variables = exchange.cel();
    let path: string;
    if (pathExpression) {
      const computed = evaluateString(pathExpression, variables);
      if (computed === undefined) return forbidden();
      path = computed.startsWith('/') ? computed : `/${computed}`;
    } else {
      path =
        exchange.forward.query === '' ? exchange.forward.path : `${exchange.forward.path}?${exchange.forward.query}`;
    }
    const headers: Record<string, string | string[]> = {};
    for (const name of allowedRequestHeaders) {
      const value = exchange.forward.headers[name];
      if (value !== undefined) headers[name] = Array.isArray(value) ? value : String(value);
    }
    for (const [name, expression] of addHeaders) {
      let value: string | undefined;
      try {
        value = headerValueOf(expression!.evaluate(variables));
      } catch {
        value = undefined;
      }
      if (value !== undefined && validHeader(name, value)) headers[name] = value;
    }
    let body: Buffer | undefined;
    if (bodyExpression) {
      try {
        body = bodyOf(bodyExpression.evaluate(variables));
      } catch {
        return forbidden();
      }
    } else if (forwardedBody) {
      body = forwardedBody;
      // Envoy's HTTP ext_authz tells the server whether the body was cut; gw never cuts it.
      headers['x-envoy-auth-partial-body'] = 'false';
    }
    const response = await send(dispatcher, {
      path: `${endpoint.basePath}${path}`,
      method: exchange.method,
      headers,
      body,
      deadlineMs,
    });
    if (response.status === 200) {
      const copied: HeaderChange[] = [];
      for (const name of allowedResponseHeaders) {
        const value = response.headers[name];
        if (value === undefined) continue;
        copied.push({ name, value: Array.isArray(value) ? value.join(', ') : value, action: 'overwrite' });
      }
      return {
        allow: true,
        headers: copied,
        removeHeaders: [],
        setQuery: [],
        removeQuery: [],
        responseHeaders: [],
        metadata: responseMetadata.length === 0 ? NO_METADATA : metadataOf(exchange, response, responseMetadata),
        cacheable: true,
      };
    }
    if (redirectExpression && CREDENTIAL_DENIALS.has(response.status)) {
      const location = evaluateString(redirectExpression, variables);
      if (location === undefined || !validHeader('location', location)) return forbidden();
      return {
        allow: false,
        response: { status: 302, headers: { location }, body: Buffer.alloc(0) },
        metadata: NO_METADATA,
        cacheable: true,
      };
    }
    const answerHeaders = forwardedResponseHeaders(response.headers) as Record<string, string | string[]>;
    delete answerHeaders['content-length'];
    return {
      allow: false,
      response: { status: response.status, headers: answerHeaders, body: response.body },
      metadata: NO_METADATA,
      // Other statuses (429, 5xx...) are likely passing: only credential denials are kept.
      cacheable: CREDENTIAL_DENIALS.has(response.status),
    };
  };
}

interface CheckAnswer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
}

/** One check request with a deadline on the whole exchange; any failure is a CheckFailure. */
async function send(
  dispatcher: CheckDispatcher,
  request: {
    path: string;
    method: string;
    headers: Record<string, string | string[]>;
    body: Buffer | undefined;
    deadlineMs: number;
  },
): Promise<CheckAnswer> {
  const signal = AbortSignal.timeout(request.deadlineMs);
  if (request.method === 'CONNECT') return sendConnect(dispatcher, request, signal);
  let response: Awaited<ReturnType<CheckDispatcher['request']>>;
  try {
    response = await dispatcher.request({
      path: request.path,
      method: request.method,
      headers: request.headers,
      ...(request.body ? { body: request.body } : {}),
      signal,
    });
  } catch (error) {
    throw new CheckFailure(`the authorization server did not answer: ${failureText(error, signal)}`);
  }
  const chunks: Buffer[] = [];
  let size = 0;
  try {
    for await (const chunk of response.body) {
      size += chunk.length;
      if (size > MAX_CHECK_RESPONSE_BYTES) {
        response.body.destroy();
        throw new CheckFailure(`the authorization server's answer exceeds ${MAX_CHECK_RESPONSE_BYTES} bytes`);
      }
      chunks.push(chunk);
    }
  } catch (error) {
    if (error instanceof CheckFailure) throw error;
    throw new CheckFailure(`the authorization server's answer broke off: ${failureText(error, signal)}`);
  }
  return { status: response.statusCode, headers: response.headers, body: Buffer.concat(chunks, size) };
}

/**
 * The check of a CONNECT (Frontend.connect Route): sent with the client's method, CONNECT, as
 * Envoy's HTTP ext_authz sends the downstream method (it copies `:method`; decision 0045). What
 * follows the server's answer on that connection is a tunnel (2xx) or a body gw does not read: the
 * connection is closed, and a denial reaches the client without the server's body.
 */
async function sendConnect(
  dispatcher: CheckDispatcher,
  request: { path: string; headers: Record<string, string | string[]> },
  signal: AbortSignal,
): Promise<CheckAnswer> {
  try {
    const answer = await dispatcher.connect({ path: request.path, headers: request.headers, signal });
    answer.socket.destroy();
    return { status: answer.statusCode, headers: answer.headers, body: Buffer.alloc(0) };
  } catch (error) {
    throw new CheckFailure(`the authorization server did not answer: ${failureText(error, signal)}`);
  }
}

function failureText(error: unknown, signal: AbortSignal): string {
  if (signal.aborted) return 'timed out';
  return (error as Error)?.message ?? String(error);
}

/**
 * responseMetadata: each expression sees the request's variables and `response` — the auth
 * server's answer: code, headers, body (text) and, when the body is JSON, json (gw's addition:
 * CEL here has no json() function). A failing expression leaves its entry out.
 */
function metadataOf(
  exchange: PolicyExchange,
  answer: CheckAnswer,
  entries: readonly (readonly [string, Expression | undefined])[],
): Record<string, unknown> {
  const text = answer.body.toString('utf8');
  const response: Record<string, unknown> = {
    code: BigInt(answer.status),
    headers: celHeaders(answer.headers),
    body: text,
  };
  const json = parseJson(text);
  if (json !== undefined) response.json = json;
  const variables = celContext(exchange.record, { response });
  const out: Record<string, unknown> = {};
  for (const [name, expression] of entries) {
    try {
      out[name] = expression!.evaluate(variables);
    } catch {
      // left out: later expressions see `has(extauthz.<name>)` false
    }
  }
  return out;
}

function parseJson(text: string): unknown {
  if (text === '') return undefined;
  try {
    return toCelValue(JSON.parse(text));
  } catch {
    return undefined;
  }
}

function evaluateString(expression: Expression, variables: Record<string, unknown>): string | undefined {
  try {
    const value = expression.evaluate(variables);
    return typeof value === 'string' ? value : undefined;
  } catch {
    return undefined;
  }
}

/** A computed header value: strings as they are, scalars as text, others JSON. */
function headerValueOf(value: unknown): string | undefined {
  if (value === null || value === undefined) return undefined;
  if (typeof value === 'string') return value;
  if (typeof value === 'bigint' || typeof value === 'number' || typeof value === 'boolean') return String(value);
  if (value instanceof Uint8Array) return Buffer.from(value).toString('latin1');
  return JSON.stringify(fromCelValue(value));
}

/** A computed body: strings and bytes as they are, anything else JSON-encoded. */
function bodyOf(value: unknown): Buffer {
  if (typeof value === 'string') return Buffer.from(value, 'utf8');
  if (value instanceof Uint8Array) return Buffer.from(value);
  return Buffer.from(JSON.stringify(fromCelValue(value) ?? null), 'utf8');
}
