// A stand-in for Anthropic's Claude models on Vertex AI (the "epsilon" family's rawPredict) on
// loopback, in its wire format:
//   POST /v1/projects/{project}/locations/{location}/publishers/anthropic/models/{model}:rawPredict
//   POST …/models/{model}:streamRawPredict  (the Messages event stream, as SSE)
//   POST …/models/count-tokens:rawPredict    ({ input_tokens }; the model in the body)
// The body is a Messages request without `model` (the path names it) and with `anthropic_version`;
// an access token is required as Authorization: Bearer. The platform's errors (authentication,
// an unknown model or route, quota) are in Google's shape ({"error":{"code","message","status"}}),
// the model's (a field missing) in Anthropic's ({"type":"error","error":{"type","message"}}).
// Answers are the Anthropic mock's (anthropic-messages.ts: "echo: <last text>", tools, usage),
// with Vertex's msg_vrtx_ ids. Stricter than Vertex where that proves a client's request: a
// `model` in a rawPredict body, or a `stream` that disagrees with the method, is refused.
// test/dataplane/gateway/epsilon-vertex-anthropic.test.ts proves it with @anthropic-ai/vertex-sdk.
import type { IncomingHttpHeaders } from 'node:http';
import { countTokensReply, messagesReply } from './anthropic-messages.ts';
import { isObject, sequentialIds } from './deterministic.ts';
import {
  type AnswerContext,
  bearerKey,
  type MockServer,
  type ProviderDialect,
  type ProviderError,
  type Reply,
  startMockServer,
} from './mock-server.ts';

export interface VertexAnthropicOptions {
  project: string;
  location: string;
  /** The access token accepted (or a test of each token). */
  token: string | ((token: string) => boolean);
  /** The Claude models served (path ids); others get Google's 404. Unset: every model. */
  models?: string[];
}

// Google's canonical status names (google.rpc.Code) for the HTTP statuses the platform answers.
const GOOGLE_STATUS: Record<number, string> = {
  400: 'INVALID_ARGUMENT',
  401: 'UNAUTHENTICATED',
  403: 'PERMISSION_DENIED',
  404: 'NOT_FOUND',
  429: 'RESOURCE_EXHAUSTED',
  500: 'INTERNAL',
  503: 'UNAVAILABLE',
  504: 'DEADLINE_EXCEEDED',
};

const UNAUTHENTICATED =
  'Request had invalid authentication credentials. Expected OAuth 2 access token, login cookie or other valid authentication credential.';

const ANTHROPIC_TYPES: Record<number, string> = {
  400: 'invalid_request_error',
  404: 'not_found_error',
  429: 'rate_limit_error',
  529: 'overloaded_error',
};

/** An error of the platform, in Google's shape. */
function googleError(error: ProviderError): Reply {
  const status = GOOGLE_STATUS[error.status] ?? (error.status >= 500 ? 'INTERNAL' : 'FAILED_PRECONDITION');
  const message = error.message ?? `Request failed with status ${error.status}.`;
  return {
    kind: 'json',
    status: error.status,
    headers: error.headers,
    body: { error: { code: error.status, message, status } },
  };
}

/** An error of the model, in Anthropic's shape. */
function anthropicError(error: ProviderError): Reply {
  const type =
    error.type ?? ANTHROPIC_TYPES[error.status] ?? (error.status >= 500 ? 'api_error' : 'invalid_request_error');
  const message = error.message ?? `Request failed with status ${error.status}.`;
  return {
    kind: 'json',
    status: error.status,
    headers: error.headers,
    body: { type: 'error', error: { type, message } },
  };
}

function literal(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

export function startVertexAnthropicMock(options: VertexAnthropicOptions): Promise<MockServer> {
  return startMockServer(vertexAnthropicDialect(options));
}

function vertexAnthropicDialect(options: VertexAnthropicOptions): ProviderDialect {
  const base = `/v1/projects/${options.project}/locations/${options.location}/publishers/anthropic/models`;
  const route = new RegExp(`^${literal(base)}/([^/:]+):(rawPredict|streamRawPredict)$`);
  const ids = sequentialIds();
  const context: AnswerContext = {
    // Vertex's message ids: msg_vrtx_…
    id: (prefix) => ids(prefix === 'msg_' ? 'msg_vrtx_' : prefix),
    error: anthropicError,
    unknownModel: (model) =>
      options.models === undefined || options.models.includes(model)
        ? undefined
        : googleError({ status: 404, message: `Publisher Model \`${base.slice(4)}/${model}\` was not found.` }),
  };
  const accepts = (token: string): boolean =>
    token !== '' && (typeof options.token === 'string' ? token === options.token : options.token(token));
  const fixedModel = options.models?.[0] ?? 'claude-sonnet-4-5@20250929';

  return {
    replyHeaders: () => ({}),
    errorReply: googleError,
    checkHeaders: (headers: IncomingHttpHeaders) =>
      accepts(bearerKey(headers)) ? undefined : { status: 401, message: UNAUTHENTICATED },
    fixedAnswer: () => ({
      method: 'POST',
      path: `${base}/${fixedModel}:rawPredict`,
      body: Buffer.from(
        JSON.stringify({
          id: 'msg_vrtx_fixed',
          type: 'message',
          role: 'assistant',
          model: fixedModel,
          content: [{ type: 'text', text: 'fixed' }],
          stop_reason: 'end_turn',
          stop_sequence: null,
          usage: { input_tokens: 1, output_tokens: 1 },
        }),
      ),
    }),
    answer(request, parsed) {
      const match = request.method === 'POST' ? route.exec(request.path) : null;
      if (match === null)
        return googleError({ status: 404, message: `The requested URL ${request.path} was not found.` });
      if (!parsed.json || !isObject(parsed.value)) {
        return googleError({ status: 400, message: 'Invalid JSON payload received.' });
      }
      const body = parsed.value;
      if (typeof body.anthropic_version !== 'string' || body.anthropic_version === '') {
        return anthropicError({ status: 400, message: 'anthropic_version: Field required' });
      }
      const model = decodeURIComponent(match[1]!);
      const method = match[2]!;
      if (model === 'count-tokens') {
        return method === 'rawPredict'
          ? countTokensReply(body, context)
          : googleError({ status: 404, message: 'count-tokens is served by rawPredict.' });
      }
      if (body.model !== undefined) {
        return anthropicError({ status: 400, message: 'model: Extra inputs are not permitted (the path names it)' });
      }
      if ((body.stream === true) !== (method === 'streamRawPredict')) {
        return googleError({ status: 400, message: `${method} does not serve stream: ${String(body.stream)}.` });
      }
      return messagesReply({ ...body, model }, context);
    },
  };
}
