// A mock of the OpenAI API (the "alpha" provider family): chat completions, responses,
// embeddings and models, with OpenAI's error format and Bearer authentication.
import type { IncomingHttpHeaders } from 'node:http';
import type { ChatCompletion } from 'openai/resources/chat/completions';
import type { Model } from 'openai/resources/models';
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
import { chatCompletionReply, chatUsage, SYSTEM_FINGERPRINT } from './openai-chat.ts';
import { embeddingsReply } from './openai-embeddings.ts';
import { responseReply } from './openai-responses.ts';

export interface OpenAiMockOptions extends MockServerOptions {
  /**
   * The models served: GET /v1/models lists them and any other model gets 404 model_not_found.
   * Unset: every model is accepted and DEFAULT_OPENAI_MODELS are listed.
   */
  models?: string[];
}

export const DEFAULT_OPENAI_MODELS = ['gpt-4o-mini', 'gpt-4o', 'text-embedding-3-small'];
/** The model named in the fixed-mode answer. */
export const FIXED_OPENAI_MODEL = 'gpt-4o-mini';
/** The size of the fixed-mode chat.completion body. */
export const FIXED_ANSWER_BYTES = 1024;
const MODEL_CREATED = 1_700_000_000;

const ERROR_DEFAULTS: Record<number, { message: string; type: string; code: string | null }> = {
  400: { message: 'Invalid request.', type: 'invalid_request_error', code: null },
  401: { message: 'Incorrect API key provided.', type: 'invalid_request_error', code: 'invalid_api_key' },
  403: { message: 'You are not allowed to access this resource.', type: 'invalid_request_error', code: null },
  404: {
    message: 'The model does not exist or you do not have access to it.',
    type: 'invalid_request_error',
    code: 'model_not_found',
  },
  413: { message: 'Request body too large.', type: 'invalid_request_error', code: null },
  429: { message: 'Rate limit reached for requests.', type: 'requests', code: 'rate_limit_exceeded' },
  500: {
    message: 'The server had an error while processing your request.',
    type: 'server_error',
    code: null,
  },
  503: { message: 'The engine is currently overloaded, please try again later.', type: 'server_error', code: null },
};

export function startOpenAiMock(options: OpenAiMockOptions = {}): Promise<MockServer> {
  return startMockServer(openAiDialect(options), options);
}

/** The body every chat completion gets in fixed mode: FIXED_ANSWER_BYTES of `chat.completion` JSON. */
function fixedChatCompletion(): Uint8Array {
  const created = MODEL_CREATED;
  return jsonOfSize(
    (filler): ChatCompletion => ({
      id: 'chatcmpl-fixed',
      object: 'chat.completion',
      created,
      model: FIXED_OPENAI_MODEL,
      choices: [
        {
          index: 0,
          message: { role: 'assistant', content: filler, refusal: null, annotations: [] },
          logprobs: null,
          finish_reason: 'stop',
        },
      ],
      usage: chatUsage(12, countWords(filler)),
      service_tier: 'default',
      system_fingerprint: SYSTEM_FINGERPRINT,
    }),
    FIXED_ANSWER_BYTES,
    'The quick brown fox jumps over the lazy dog. ',
  );
}

/** What makes a mock speak the OpenAI API; the Azure OpenAI stand-in answers with it too. */
export function openAiDialect(options: OpenAiMockOptions): ProviderDialect {
  const ids = sequentialIds();
  const requestIds = sequentialIds();
  const served = options.models;

  const errorReply = (error: ProviderError): Reply => {
    const defaults = ERROR_DEFAULTS[error.status] ?? {
      message: `Request failed with status ${error.status}.`,
      type: error.status >= 500 ? 'server_error' : 'invalid_request_error',
      code: null,
    };
    return {
      kind: 'json',
      status: error.status,
      headers: error.headers,
      body: {
        error: {
          message: error.message ?? defaults.message,
          type: error.type ?? defaults.type,
          param: error.param ?? null,
          code: error.code === undefined ? defaults.code : error.code,
        },
      },
    };
  };

  const modelNotFound = (model: string): Reply =>
    errorReply({
      status: 404,
      message: `The model \`${model}\` does not exist or you do not have access to it.`,
      code: 'model_not_found',
    });

  const context: AnswerContext = {
    id: ids,
    error: errorReply,
    unknownModel: (model) => (served === undefined || served.includes(model) ? undefined : modelNotFound(model)),
  };

  const modelObject = (id: string): Model => ({ id, object: 'model', created: MODEL_CREATED, owned_by: 'mock' });

  return {
    replyHeaders: () => ({ 'x-request-id': requestIds('req_'), 'openai-processing-ms': '1' }),
    errorReply,
    checkHeaders: checkBearer,
    fixedAnswer: () => ({ method: 'POST', path: '/v1/chat/completions', body: fixedChatCompletion() }),
    answer(request, parsed) {
      const { method, path } = request;
      const route = `${method} ${path}`;
      if (route === 'GET /v1/models') {
        return {
          kind: 'json',
          status: 200,
          body: { object: 'list', data: (served ?? DEFAULT_OPENAI_MODELS).map(modelObject) },
        };
      }
      if (method === 'GET' && path.startsWith('/v1/models/')) {
        const id = decodeURIComponent(path.slice('/v1/models/'.length));
        const known = (served ?? DEFAULT_OPENAI_MODELS).includes(id);
        return known ? { kind: 'json', status: 200, body: modelObject(id) } : modelNotFound(id);
      }
      const answer =
        route === 'POST /v1/chat/completions'
          ? chatCompletionReply
          : route === 'POST /v1/responses'
            ? responseReply
            : route === 'POST /v1/embeddings'
              ? embeddingsReply
              : undefined;
      if (answer === undefined)
        return errorReply({ status: 404, message: `Invalid URL (${method} ${path})`, code: null });
      if (!parsed.json || !isObject(parsed.value)) {
        return errorReply({
          status: 400,
          message: 'We could not parse the JSON body of your request. The API expects a JSON object.',
        });
      }
      return answer(parsed.value, context);
    },
  };
}

/** OpenAI takes the key as `Authorization: Bearer <key>`; without one, or with the wrong one, it answers 401. */
function checkBearer(headers: IncomingHttpHeaders, requiredKey: string | undefined): ProviderError | undefined {
  const key = bearerKey(headers);
  if (key === '') {
    return {
      status: 401,
      message: "You didn't provide an API key. Send it in an Authorization header: Authorization: Bearer YOUR_KEY.",
      code: null,
    };
  }
  if (requiredKey !== undefined && key !== requiredKey) {
    return { status: 401, message: `Incorrect API key provided: ${maskKey(key)}.`, code: 'invalid_api_key' };
  }
  return undefined;
}

function maskKey(key: string): string {
  return key.length <= 8 ? '*'.repeat(key.length) : `${key.slice(0, 3)}${'*'.repeat(key.length - 7)}${key.slice(-4)}`;
}
