// A mock of the Anthropic Messages API (the "gamma" provider family): messages (plain and
// streamed), token counting and the model listing, with Anthropic's error format, key and version
// headers.
import type { IncomingHttpHeaders } from 'node:http';
import { countTokensReply, messagesReply, usage, type WireMessage } from './anthropic-messages.ts';
import { countWords, isObject, sequentialIds } from './deterministic.ts';
import {
  type AnswerContext,
  bearerKey,
  jsonOfSize,
  type MockServer,
  type MockServerOptions,
  type ProviderDialect,
  type ProviderError,
  type Reply,
  startMockServer,
} from './mock-server.ts';

export interface AnthropicMockOptions extends MockServerOptions {
  /** The models served; any other model gets 404 not_found_error. Unset: every model is accepted. */
  models?: string[];
}

/** The model named in the fixed-mode answer. */
export const FIXED_ANTHROPIC_MODEL = 'claude-mock-1';
/** The size of the fixed-mode message body. */
export const FIXED_MESSAGE_BYTES = 1024;

const ERROR_DEFAULTS: Record<number, { type: string; message: string }> = {
  400: { type: 'invalid_request_error', message: 'The request is malformed or invalid.' },
  401: { type: 'authentication_error', message: 'invalid x-api-key' },
  402: { type: 'billing_error', message: 'There is a billing issue with this account.' },
  403: { type: 'permission_error', message: 'This API key may not use this resource.' },
  404: { type: 'not_found_error', message: 'Not found.' },
  413: { type: 'request_too_large', message: 'Request exceeds the maximum allowed number of bytes.' },
  429: { type: 'rate_limit_error', message: 'Number of requests has exceeded your rate limit.' },
  500: { type: 'api_error', message: 'Internal server error.' },
  504: { type: 'timeout_error', message: 'The request timed out.' },
  529: { type: 'overloaded_error', message: 'Overloaded' },
};

export function startAnthropicMock(options: AnthropicMockOptions = {}): Promise<MockServer> {
  return startMockServer(anthropicDialect(options), options);
}

/** The body every message request gets in fixed mode: FIXED_MESSAGE_BYTES of `message` JSON. */
function fixedMessage(): Uint8Array {
  return jsonOfSize(
    (filler): WireMessage => ({
      id: 'msg_fixed',
      type: 'message',
      role: 'assistant',
      model: FIXED_ANTHROPIC_MODEL,
      content: [{ type: 'text', text: filler }],
      stop_reason: 'end_turn',
      stop_sequence: null,
      stop_details: null,
      container: null,
      diagnostics: null,
      usage: usage(12, countWords(filler)),
    }),
    FIXED_MESSAGE_BYTES,
    'The quick brown fox jumps over the lazy dog. ',
  );
}

export function anthropicDialect(options: AnthropicMockOptions): ProviderDialect {
  const ids = sequentialIds();
  const requestIds = sequentialIds();
  const served = options.models;

  const errorReply = (error: ProviderError): Reply => {
    const defaults = ERROR_DEFAULTS[error.status] ?? {
      type: error.status >= 500 ? 'api_error' : 'invalid_request_error',
      message: `Request failed with status ${error.status}.`,
    };
    const requestId = requestIds('req_');
    return {
      kind: 'json',
      status: error.status,
      headers: { 'request-id': requestId, ...error.headers },
      body: {
        type: 'error',
        error: { type: error.type ?? defaults.type, message: error.message ?? defaults.message },
        request_id: requestId,
      },
    };
  };

  const context: AnswerContext = {
    id: ids,
    error: errorReply,
    unknownModel: (model) =>
      served === undefined || served.includes(model)
        ? undefined
        : errorReply({ status: 404, message: `model: ${model}` }),
  };

  return {
    replyHeaders: () => ({ 'request-id': requestIds('req_') }),
    errorReply,
    checkHeaders: checkKeyAndVersion,
    fixedAnswer: () => ({ method: 'POST', path: '/v1/messages', body: fixedMessage() }),
    answer(request, parsed) {
      const route = `${request.method} ${request.path}`;
      if (route === 'GET /v1/models') return modelList(options.models ?? [FIXED_ANTHROPIC_MODEL]);
      const answer =
        route === 'POST /v1/messages'
          ? messagesReply
          : route === 'POST /v1/messages/count_tokens'
            ? countTokensReply
            : undefined;
      if (answer === undefined) return errorReply({ status: 404, message: 'Not found.' });
      if (!parsed.json || !isObject(parsed.value)) {
        return errorReply({ status: 400, message: 'The request body is not a valid JSON object.' });
      }
      return answer(parsed.value, context);
    },
  };
}

/** Anthropic's model listing (GET /v1/models): one page of every model, newest first. */
function modelList(models: readonly string[]): Reply {
  const data = models.map((id) => ({ type: 'model', id, display_name: id, created_at: '2025-01-01T00:00:00Z' }));
  return {
    kind: 'json',
    status: 200,
    body: { data, has_more: false, first_id: data[0]?.id ?? null, last_id: data.at(-1)?.id ?? null },
  };
}

/**
 * The key comes as `x-api-key` or as `Authorization: Bearer`; without one (or with the wrong one)
 * the answer is 401 authentication_error. Every request must name an `anthropic-version`.
 */
function checkKeyAndVersion(headers: IncomingHttpHeaders, requiredKey: string | undefined): ProviderError | undefined {
  const headerKey = headers['x-api-key'];
  const key = (typeof headerKey === 'string' ? headerKey : '') || bearerKey(headers);
  if (key === '') return { status: 401, message: 'x-api-key header is required' };
  if (requiredKey !== undefined && key !== requiredKey) return { status: 401, message: 'invalid x-api-key' };
  if (!headers['anthropic-version']) return { status: 400, message: 'anthropic-version: header is required' };
  return undefined;
}
