// Provider errors of every family in every client format (issue 20): one gw in front of one
// scripted stand-in per family (test/helpers/family-matrix.ts), which answers with the provider's
// own error shapes — OpenAI's {error:{message,type,param,code}}, Azure's {error:{code,message}},
// Anthropic's {type:error,error:{type,message}}, Google's {error:{code,message,status}}, Bedrock's
// x-amzn-errortype header and {message} — at the statuses each sends (400, 401/403, 404, 429 with
// retry-after where the provider sends one, 500, 503, 529). Every client format (Chat Completions,
// Messages, Responses, Gemini) gets the error in its own shape, with the provider's status and
// message, and the provider's retry-after. Streams: a provider's error event mid-stream (Bedrock:
// an exception frame) ends the client's stream with the client format's error event, carrying the
// provider's message and the status its type stands for; a stream cut short ends with gw's 502
// error event (a Responses stream's numbered after the last event it passed on).
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import {
  CLIENT_FORMATS,
  type ClientFormat,
  loggedPath,
  logLineAfter,
  matrixRoutesYaml,
  send,
  sseEvents,
  TARGET_RULES,
  TARGETS,
  type Target,
} from '../../helpers/family-matrix.ts';
import { freePort, gatewayYaml, startTestGateway, type TestGateway } from '../../helpers/gateway.ts';
import {
  type ScriptedProvider,
  type StreamError,
  startScriptedProvider,
  type WireFormat,
} from '../../helpers/scripted-provider.ts';

// biome-ignore lint/suspicious/noExplicitAny: answers are read field by field, each checked
type Json = Record<string, any>;

/** The family of an error body's shape: which client formats take it as their own. */
type Shape = 'openai' | 'anthropic' | 'google' | 'bedrock';

interface ProviderError {
  status: number;
  message: string;
  shape: Shape;
  body: unknown;
  headers?: Record<string, string>;
  /** The Retry-After the client is given (the provider's header, or Google's RetryInfo in seconds). */
  retryAfter?: string;
}

const openai = (status: number, message: string, type: string, code: string | null, headers?: Record<string, string>) =>
  ({
    status,
    message,
    shape: 'openai',
    body: { error: { message, type, param: null, code } },
    headers,
    retryAfter: headers?.['retry-after'],
  }) as const;
const azure = (status: number, code: string, message: string, headers?: Record<string, string>) =>
  ({
    status,
    message,
    shape: 'openai',
    body: { error: { code, message } },
    headers,
    retryAfter: headers?.['retry-after'],
  }) as const;
const anthropic = (status: number, type: string, message: string, headers?: Record<string, string>) =>
  ({
    status,
    message,
    shape: 'anthropic',
    body: { type: 'error', error: { type, message } },
    headers,
    retryAfter: headers?.['retry-after'],
  }) as const;
const google = (status: number, code: string, message: string, retryDelay?: string) =>
  ({
    status,
    message,
    shape: 'google',
    body: {
      error: {
        code: status,
        message,
        status: code,
        ...(retryDelay ? { details: [{ '@type': 'type.googleapis.com/google.rpc.RetryInfo', retryDelay }] } : {}),
      },
    },
    retryAfter: retryDelay === undefined ? undefined : String(Math.ceil(Number.parseFloat(retryDelay))),
  }) as const;
/** Bedrock's error: the exception in a header, the message in the body ({"Message"} from AWS's authorization layer). */
const bedrock = (status: number, exception: string, message: string, key = 'message') =>
  ({
    status,
    message,
    shape: 'bedrock',
    body: { [key]: message },
    headers: { 'x-amzn-errortype': `${exception}:http://internal.amazon.com/coral/com.amazon.bedrock/` },
  }) as const;

const RETRY = { 'retry-after': '7' };

const OPENAI_ERRORS: ProviderError[] = [
  openai(400, "Invalid value for 'temperature': must be at most 2.", 'invalid_request_error', 'invalid_value'),
  openai(401, 'Incorrect API key provided.', 'invalid_request_error', 'invalid_api_key'),
  openai(
    404,
    'The model `gpt-9` does not exist or you do not have access to it.',
    'invalid_request_error',
    'model_not_found',
  ),
  openai(429, 'Rate limit reached for requests.', 'requests', 'rate_limit_exceeded', RETRY),
  openai(500, 'The server had an error while processing your request.', 'server_error', null),
  openai(503, 'The engine is currently overloaded, please try again later.', 'server_error', null),
];

const AZURE_ERRORS: ProviderError[] = [
  azure(400, 'BadRequest', 'Invalid value for messages[0].role.'),
  azure(401, '401', 'Access denied due to invalid subscription key or wrong API endpoint.'),
  azure(404, 'DeploymentNotFound', 'The API deployment for this resource does not exist.'),
  azure(429, '429', 'Requests to the ChatCompletions_Create Operation have exceeded the rate limit.', RETRY),
  azure(500, 'InternalServerError', 'The server had an error while processing your request.'),
  azure(503, 'ServiceUnavailable', 'The service is temporarily unable to process your request.'),
];

const ANTHROPIC_ERRORS: ProviderError[] = [
  anthropic(400, 'invalid_request_error', 'max_tokens: Field required'),
  anthropic(401, 'authentication_error', 'invalid x-api-key'),
  anthropic(404, 'not_found_error', 'model: claude-9'),
  anthropic(429, 'rate_limit_error', 'Number of request tokens has exceeded your per-minute rate limit.', RETRY),
  anthropic(500, 'api_error', 'Internal server error'),
  anthropic(529, 'overloaded_error', 'Overloaded'),
];

const GOOGLE_ERRORS: ProviderError[] = [
  google(400, 'INVALID_ARGUMENT', 'Invalid JSON payload received.'),
  google(401, 'UNAUTHENTICATED', 'Request had invalid authentication credentials.'),
  google(404, 'NOT_FOUND', 'models/gemini-9 is not found for API version v1beta.'),
  google(429, 'RESOURCE_EXHAUSTED', 'Resource has been exhausted (e.g. check quota).', '6.5s'),
  google(500, 'INTERNAL', 'An internal error has occurred.'),
  google(503, 'UNAVAILABLE', 'The model is overloaded. Please try again later.'),
];

const BEDROCK_ERRORS: ProviderError[] = [
  bedrock(400, 'ValidationException', 'The provided model identifier is invalid.'),
  bedrock(403, 'AccessDeniedException', 'You do not have access to the model with the specified model ID.'),
  bedrock(403, 'AccessDeniedException', 'User is not authorized to perform: bedrock:InvokeModel', 'Message'),
  bedrock(404, 'ResourceNotFoundException', 'Model not found.'),
  bedrock(429, 'ThrottlingException', 'Too many requests, please wait before trying again.'),
  bedrock(500, 'InternalServerException', 'The request processing has failed because of an unknown error.'),
  bedrock(503, 'ServiceUnavailableException', 'The service is unavailable. Please try again later.'),
];

const AZURE_TARGETS = new Set(['betaalpha', 'beta-alpha', 'beta-omega', 'model-foundry-model']);

/** The errors a target's provider answers with, for the wire format it is sent. */
function errorsOf(target: Target, wire: WireFormat): ProviderError[] {
  switch (wire) {
    case 'completions':
    case 'responses':
      return AZURE_TARGETS.has(target.name) ? AZURE_ERRORS : OPENAI_ERRORS;
    case 'messages':
      // Vertex answers its own (Google's) errors in front of Anthropic's models, quota first.
      return target.name === 'epsilon-claude' ? [...ANTHROPIC_ERRORS, GOOGLE_ERRORS[3]!] : ANTHROPIC_ERRORS;
    case 'gemini':
      return GOOGLE_ERRORS;
    case 'converse':
      return BEDROCK_ERRORS;
  }
}

// Each client format's error type for a status (OpenAI's: its type; Anthropic's: its type;
// Google's: the google.rpc code name).
const OPENAI_TYPE = (status: number) =>
  status === 429 ? 'requests' : status >= 500 ? 'server_error' : 'invalid_request_error';
const ANTHROPIC_TYPE: Record<number, string> = {
  400: 'invalid_request_error',
  401: 'authentication_error',
  403: 'permission_error',
  404: 'not_found_error',
  429: 'rate_limit_error',
  500: 'api_error',
  502: 'api_error',
  503: 'api_error',
  529: 'overloaded_error',
};
const GOOGLE_STATUS: Record<number, string> = {
  400: 'INVALID_ARGUMENT',
  401: 'UNAUTHENTICATED',
  403: 'PERMISSION_DENIED',
  404: 'NOT_FOUND',
  429: 'RESOURCE_EXHAUSTED',
  500: 'INTERNAL',
  502: 'INTERNAL',
  503: 'UNAVAILABLE',
  529: 'UNAVAILABLE',
};

const CLIENT_SHAPE: Record<ClientFormat, Shape> = {
  completions: 'openai',
  responses: 'openai',
  messages: 'anthropic',
  gemini: 'google',
};

/** An error body in the client's format with `message`, for `status` (its own-shaped provider body passes as it is). */
function assertClientError(format: ClientFormat, status: number, message: string, body: Json): void {
  const text = JSON.stringify(body);
  switch (CLIENT_SHAPE[format]) {
    case 'openai':
      assert.equal(body.error?.message, message, text);
      assert.equal(body.error.type, OPENAI_TYPE(status), text);
      return;
    case 'anthropic':
      assert.deepEqual(body, { type: 'error', error: { type: ANTHROPIC_TYPE[status], message } });
      return;
    case 'google':
      assert.equal(body.error?.message, message, text);
      assert.equal(body.error.code, status, text);
      assert.equal(body.error.status, GOOGLE_STATUS[status], text);
      return;
  }
}

interface Matrix {
  gw: TestGateway;
  provider: ScriptedProvider;
  base: string;
}

/** For a suite: gw in front of the stand-in with every target, started before its tests and stopped after. */
function matrixForSuite(): Matrix {
  const matrix = {} as Matrix;
  before(async () => {
    matrix.provider = await startScriptedProvider();
    const port = await freePort();
    matrix.gw = await startTestGateway({
      'gateway.yaml': [
        gatewayYaml(port),
        ...TARGETS.map((target) => target.yaml(matrix.provider.port)),
        matrixRoutesYaml(TARGET_RULES),
      ].join(''),
    });
    matrix.base = `http://127.0.0.1:${port}`;
  });
  after(async () => {
    await matrix.gw?.stop();
    await matrix.provider?.close();
  });
  return matrix;
}

describe('provider errors of every family, in every client format', () => {
  const matrix = matrixForSuite();

  for (const target of TARGETS) {
    for (const format of CLIENT_FORMATS) {
      const wire = target.wire(format);
      it(`${target.name} ← ${format}: the ${wire} provider's errors`, async () => {
        for (const error of errorsOf(target, wire)) {
          matrix.provider.next({ kind: 'error', status: error.status, headers: error.headers, body: error.body });
          const from = matrix.gw.accessLog.length;
          const response = await send(matrix.base, target, format, false);
          const text = await response.text();
          const what = `${error.status} ${error.shape}: ${text}`;
          assert.equal(response.status, error.status, what);
          assert.match(String(response.headers.get('content-type')), /^application\/json/, what);
          assert.equal(response.headers.get('retry-after'), error.retryAfter ?? null, what);
          const body = JSON.parse(text) as Json;
          if (error.shape === CLIENT_SHAPE[format] && error.shape !== 'openai') {
            // Anthropic's and Google's own errors reach their clients as they are.
            assert.deepEqual(body, error.body, what);
          } else if (error.shape === 'openai' && CLIENT_SHAPE[format] === 'openai') {
            // OpenAI's and Azure's errors reach OpenAI clients as they are (their code kept).
            assert.deepEqual(body, error.body, what);
          } else {
            assertClientError(format, error.status, error.message, body);
          }
          const log = await logLineAfter(matrix.gw, from, loggedPath(target, format, false));
          assert.equal(log['http.response.status_code'], error.status, what);
          assert.equal(log['gen_ai.provider.name'], target.vendor, what);
          assert.equal(log.error, `upstream status ${error.status}`, what);
        }
      });
    }
  }
});

/** The error event each wire format's provider ends a failed stream with, and the status its type stands for. */
const STREAM_ERRORS: Record<WireFormat, StreamError & { status: number }> = {
  completions: { type: 'server_error', code: 500, message: 'The server had an error mid-stream.', status: 500 },
  responses: { type: 'server_error', code: 500, message: 'The server had an error mid-stream.', status: 500 },
  messages: { type: 'overloaded_error', code: 529, message: 'Overloaded', status: 529 },
  gemini: { type: 'UNAVAILABLE', code: 503, message: 'The model is overloaded.', status: 503 },
  converse: { type: 'throttlingException', code: 429, message: 'Too many tokens, please wait.', status: 429 },
};

const TRUNCATED = 'The provider stream ended before the response was complete.';

/** The last event of a client's stream: its format's error event, with `message` and `status`. */
function assertStreamError(format: ClientFormat, text: string, message: string, status: number): void {
  const events = sseEvents(text).filter((event) => event.data !== '[DONE]');
  const last = events.at(-1);
  assert.ok(last, 'the stream has an error event');
  const payload = JSON.parse(last.data) as Json;
  const what = `${format} ${status}: ${text}`;
  switch (format) {
    case 'completions':
      assert.equal(last.event, undefined, what);
      assert.equal(payload.error?.message, message, what);
      assert.equal(payload.error.type, OPENAI_TYPE(status), what);
      return;
    case 'responses': {
      assert.equal(last.event, 'error', what);
      assert.equal(payload.type, 'error', what);
      assert.equal(payload.error?.message, message, what);
      assert.equal(payload.error.type, OPENAI_TYPE(status), what);
      // Numbered after every event before it, as the API numbers a stream's events.
      const numbers = events.map((event) => (JSON.parse(event.data) as Json).sequence_number);
      assert.deepEqual(
        numbers,
        numbers.map((_, index) => index),
        what,
      );
      return;
    }
    case 'messages':
      assert.equal(last.event, 'error', what);
      assert.deepEqual(payload, { type: 'error', error: { type: ANTHROPIC_TYPE[status], message } }, what);
      return;
    case 'gemini':
      assert.equal(last.event, undefined, what);
      assert.deepEqual(payload.error, { code: status, message, status: GOOGLE_STATUS[status] }, what);
      return;
  }
}

describe('provider stream errors of every family, in every client format', () => {
  const matrix = matrixForSuite();

  for (const target of TARGETS) {
    for (const format of CLIENT_FORMATS) {
      const wire = target.wire(format);
      it(`${target.name} ← ${format}: the ${wire} provider's error event, and a stream cut short`, async () => {
        const error = STREAM_ERRORS[wire];
        matrix.provider.next({ kind: 'stream-error', error });
        let response = await send(matrix.base, target, format, true);
        assert.equal(response.status, 200);
        assertStreamError(format, await response.text(), error.message, error.status);

        matrix.provider.next({ kind: 'cut' });
        response = await send(matrix.base, target, format, true);
        assert.equal(response.status, 200);
        assertStreamError(format, await response.text(), TRUNCATED, 502);
      });
    }
  }
});
