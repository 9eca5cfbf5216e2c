// A stand-in for the Gemini API (the "delta" provider family) on loopback, in its exact wire
// format: POST /v1beta/models/{model}:generateContent (JSON) and
// :streamGenerateContent?alt=sse (each SSE event a whole GenerateContentResponse chunk, no event
// names, usage in the last one), the key required in x-goog-api-key, Google's error body (also for
// a body with a field the API does not define, such as model). The
// shapes are typed with @google/genai's, and test/dataplane/gateway/delta-gemini.test.ts proves
// the stand-in with that SDK's own client before sending gw's traffic to it.
//
// Answers: a user turn whose last part is a functionResponse gets "result: <output>"; a request
// with function declarations whose last text mentions "weather" gets a functionCall of the first
// declared function ({"city":"Paris"}); anything else gets "echo: <last text>", streamed word by
// word.
//
// Thought signatures, as Gemini has them: each functionCall part it answers carries a
// thoughtSignature (thoughtSignatureOf); for a Gemini 3 model (gemini-3…) a request whose current
// turn (the model's steps after the last user text) has a functionCall part without that exact
// signature is refused with 400 INVALID_ARGUMENT, as Gemini 3 refuses it (Gemini 2.5 models do
// not check).
//
// With `vertex` it stands in for Vertex AI's Gemini models (the "epsilon" family) instead: the
// same bodies at /v1/projects/{project}/locations/{location}/publishers/google/models/{model}:…,
// an OAuth access token required as Authorization: Bearer (test/dataplane/gateway/epsilon-vertex.test.ts).
//
// countTokens and embeddings (batchEmbedContents; Vertex's predict and embedContent):
// google-model-methods.ts.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Content, GenerateContentResponse, Part } from '@google/genai';
import { type GoogleMethod, googleModelMethod } from './google-model-methods.ts';

export interface GeminiRequest {
  method: string;
  path: string;
  query: URLSearchParams;
  headers: IncomingMessage['headers'];
  body: Record<string, unknown>;
}

export interface GeminiMock {
  url: string;
  port: number;
  requests: GeminiRequest[];
  close(): Promise<void>;
}

const METHODS = 'generateContent|streamGenerateContent|batchEmbedContents|predict|embedContent|countTokens';
const GEMINI_API_ROUTE = new RegExp(`^/v1beta/models/([^/:]+):(${METHODS})$`);

/** Vertex AI's project, location and the access token it accepts (or a test of each token). */
export interface VertexStandIn {
  project: string;
  location: string;
  token: string | ((token: string) => boolean);
}

function acceptsBearer(vertex: VertexStandIn, authorization: string | undefined): boolean {
  if (authorization === undefined || !authorization.startsWith('Bearer ')) return false;
  const token = authorization.slice('Bearer '.length);
  return typeof vertex.token === 'string' ? token === vertex.token : vertex.token(token);
}

function vertexRoute(vertex: VertexStandIn): RegExp {
  const literal = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  return new RegExp(
    `^/v1/projects/${literal(vertex.project)}/locations/${literal(vertex.location)}/publishers/google/models/([^/:]+):(${METHODS})$`,
  );
}
const MAX_BODY = 1024 * 1024;

function googleError(res: ServerResponse, code: number, status: string, message: string): void {
  res.writeHead(code, { 'content-type': 'application/json; charset=UTF-8' });
  res.end(JSON.stringify({ error: { code, message, status } }));
}

/** The thoughtSignature the stand-in gives a function call (opaque to clients, checked when it comes back). */
export function thoughtSignatureOf(call: { name?: string; args?: unknown }): string {
  return Buffer.from(`gemini-thought:${call.name}:${JSON.stringify(call.args ?? {})}`).toString('base64');
}

/**
 * The first functionCall part of the current turn (the contents after the last user turn with
 * text) whose thoughtSignature is not the one the stand-in gave it, with its position; undefined
 * when every one is signed.
 */
function unsignedCall(body: Record<string, unknown>): { name: string; position: number } | undefined {
  const contents = (body.contents as Content[] | undefined) ?? [];
  let start = 0;
  contents.forEach((content, i) => {
    if (content.role === 'user' && content.parts?.some((part) => typeof part.text === 'string')) start = i + 1;
  });
  let position = 0;
  for (const content of contents.slice(start)) {
    for (const part of content.parts ?? []) {
      position++;
      const call = part.functionCall;
      if (call !== undefined && part.thoughtSignature !== thoughtSignatureOf(call)) {
        return { name: call.name ?? '', position };
      }
    }
  }
  return undefined;
}

function lastTurnParts(body: Record<string, unknown>): Part[] {
  const contents = body.contents as Content[] | undefined;
  return contents?.at(-1)?.parts ?? [];
}

/** The parts of the answer to this request (see the header). */
function answerParts(body: Record<string, unknown>): Part[] {
  const parts = lastTurnParts(body);
  const response = parts.find((part) => part.functionResponse !== undefined)?.functionResponse;
  if (response !== undefined)
    return [{ text: `result: ${JSON.stringify(response.response?.output ?? response.response)}` }];
  const text = parts.map((part) => part.text ?? '').join('');
  const tools = body.tools as { functionDeclarations?: { name: string }[] }[] | undefined;
  const declared = tools?.flatMap((tool) => tool.functionDeclarations ?? [])[0];
  if (declared !== undefined && /weather/i.test(text)) {
    const functionCall = { id: 'call-weather-1', name: declared.name, args: { city: 'Paris' } };
    return [{ functionCall, thoughtSignature: thoughtSignatureOf(functionCall) }];
  }
  return [{ text: `echo: ${text}` }];
}

function usage(body: Record<string, unknown>, parts: Part[]): GenerateContentResponse['usageMetadata'] {
  const prompt = JSON.stringify(body.contents ?? []).split(/\s+/).length;
  const output = parts
    .map((part) => (part.text ?? JSON.stringify(part.functionCall)).split(/\s+/).length)
    .reduce((a, b) => a + b, 0);
  return { promptTokenCount: prompt, candidatesTokenCount: output, totalTokenCount: prompt + output };
}

function chunk(model: string, parts: Part[], last: GenerateContentResponse['usageMetadata'] | undefined): object {
  const candidate: Record<string, unknown> = { content: { role: 'model', parts }, index: 0 };
  const out: Record<string, unknown> = { candidates: [candidate], modelVersion: model, responseId: 'resp-gemini-1' };
  if (last !== undefined) {
    candidate.finishReason = 'STOP';
    out.usageMetadata = last;
  }
  return out;
}

export async function startGeminiMock(options: { apiKey: string } | { vertex: VertexStandIn }): Promise<GeminiMock> {
  const requests: GeminiRequest[] = [];
  const vertex = 'vertex' in options ? options.vertex : undefined;
  const ROUTE = vertex === undefined ? GEMINI_API_ROUTE : vertexRoute(vertex);
  const authorized = (headers: IncomingMessage['headers']): boolean =>
    vertex === undefined
      ? headers['x-goog-api-key'] === (options as { apiKey: string }).apiKey
      : acceptsBearer(vertex, headers.authorization);
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (data: Buffer) => {
      size += data.length;
      if (size <= MAX_BODY) chunks.push(data);
    });
    req.on('end', () => {
      const url = new URL(req.url ?? '/', 'http://localhost');
      let body: Record<string, unknown> = {};
      try {
        body = JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}');
      } catch {
        googleError(res, 400, 'INVALID_ARGUMENT', 'Invalid JSON payload received.');
        return;
      }
      requests.push({
        method: req.method ?? '',
        path: url.pathname,
        query: url.searchParams,
        headers: req.headers,
        body,
      });
      if (!authorized(req.headers)) {
        if (vertex === undefined) {
          googleError(res, 401, 'UNAUTHENTICATED', 'API key not valid. Please pass a valid API key.');
        } else {
          googleError(res, 401, 'UNAUTHENTICATED', 'Request had invalid authentication credentials.');
        }
        return;
      }
      const route = ROUTE.exec(url.pathname);
      if (req.method !== 'POST' || route === null) {
        googleError(res, 404, 'NOT_FOUND', `Not found: ${url.pathname}`);
        return;
      }
      // Gemini refuses fields its request does not define (a model or stream in the body).
      for (const field of ['model', 'stream']) {
        if (field in body) {
          googleError(
            res,
            400,
            'INVALID_ARGUMENT',
            `Invalid JSON payload received. Unknown name "${field}": Cannot find field.`,
          );
          return;
        }
      }
      if (route[2] !== 'generateContent' && route[2] !== 'streamGenerateContent') {
        const method = googleModelMethod(route[2] as GoogleMethod, decodeURIComponent(route[1]!), body, !!vertex);
        if (method.error !== undefined) googleError(res, method.status, method.error, String(method.body));
        else {
          res.writeHead(method.status, { 'content-type': 'application/json; charset=UTF-8' });
          res.end(JSON.stringify(method.body));
        }
        return;
      }
      if (!Array.isArray(body.contents) || body.contents.length === 0) {
        googleError(res, 400, 'INVALID_ARGUMENT', '* GenerateContentRequest.contents: contents is not specified');
        return;
      }
      const model = decodeURIComponent(route[1]!);
      const unsigned = model.startsWith('gemini-3') ? unsignedCall(body) : undefined;
      if (unsigned !== undefined) {
        googleError(
          res,
          400,
          'INVALID_ARGUMENT',
          `Function call is missing a thought_signature in functionCall parts. Function call \`${unsigned.name}\`, position ${unsigned.position}.`,
        );
        return;
      }
      const parts = answerParts(body);
      const counted = usage(body, parts);
      if (route[2] === 'generateContent') {
        res.writeHead(200, { 'content-type': 'application/json; charset=UTF-8' });
        res.end(JSON.stringify(chunk(model, parts, counted)));
        return;
      }
      if (url.searchParams.get('alt') !== 'sse') {
        googleError(res, 400, 'INVALID_ARGUMENT', 'this stand-in serves streams as alt=sse only');
        return;
      }
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      const pieces: Part[][] =
        parts[0]?.text === undefined ? [parts] : parts[0].text.split(/(?<= )/).map((word) => [{ text: word }]);
      pieces.forEach((piece, i) => {
        const last = i === pieces.length - 1 ? counted : undefined;
        res.write(`data: ${JSON.stringify(chunk(model, piece, last))}\r\n\r\n`);
      });
      res.end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
