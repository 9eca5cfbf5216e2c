// The Gemini stand-in's model methods besides generateContent (gemini-mock.ts routes them here), in
// Google's wire formats as @google/genai sends and reads them:
// - Gemini API :batchEmbedContents {requests: [{model: "models/{id}", content, outputDimensionality}]}
//   → {embeddings: [{values}], usageMetadata};
// - Vertex AI :predict {instances: [{content}], parameters: {outputDimensionality}}
//   → {predictions: [{embeddings: {values, statistics: {token_count, truncated}}}], metadata};
// - Vertex AI :embedContent {content, embedContentConfig: {outputDimensionality}}
//   → {embedding: {values}, usageMetadata: {promptTokenCount}, truncated};
// - :countTokens, {contents} (or, on the Gemini API, {generateContentRequest: {model, contents,
//   systemInstruction, tools}}; on Vertex AI the latter's fields at the top) → {totalTokens}.
// Vectors are mockEmbedding(text, size) (8 values unless asked); a token is a whitespace-separated
// word of a text part, a system instruction's included, and each declared function counts one.
import type { Content, ContentEmbedding, CountTokensResponse, EmbedContentResponse, Part } from '@google/genai';
import { countWords, DEFAULT_EMBEDDING_DIMENSIONS, isObject, mockEmbedding } from './deterministic.ts';

export type GoogleMethod = 'batchEmbedContents' | 'predict' | 'embedContent' | 'countTokens';

export interface MethodAnswer {
  status: number;
  /** A Google error's status name, for an error answer. */
  error?: string;
  body: unknown;
}

function invalid(message: string): MethodAnswer {
  return { status: 400, error: 'INVALID_ARGUMENT', body: message };
}

function textWords(content: unknown): number {
  const parts = isObject(content) && Array.isArray(content.parts) ? (content.parts as Part[]) : [];
  return parts.reduce((sum, part) => sum + (typeof part.text === 'string' ? countWords(part.text) : 0), 0);
}

function size(value: unknown): number | string {
  if (value === undefined) return DEFAULT_EMBEDDING_DIMENSIONS;
  return typeof value === 'number' && Number.isInteger(value) && value > 0 && value <= 3072
    ? value
    : 'outputDimensionality must be an integer from 1 to 3072';
}

function batchEmbed(model: string, body: Record<string, unknown>): MethodAnswer {
  const requests = body.requests;
  if (!Array.isArray(requests) || requests.length === 0)
    return invalid('* BatchEmbedContentsRequest.requests: required');
  const embeddings: ContentEmbedding[] = [];
  let tokens = 0;
  for (const [i, request] of requests.entries()) {
    if (!isObject(request) || request.model !== `models/${model}`) {
      return invalid(`* BatchEmbedContentsRequest.requests[${i}].model: must be models/${model}`);
    }
    const parts = isObject(request.content) && Array.isArray(request.content.parts) ? request.content.parts : [];
    const text = (parts as Part[]).map((part) => part.text ?? '').join('');
    if (text === '') return invalid(`* BatchEmbedContentsRequest.requests[${i}].content: no text`);
    const dimensions = size(request.outputDimensionality);
    if (typeof dimensions === 'string') return invalid(dimensions);
    embeddings.push({ values: mockEmbedding(text, dimensions) });
    tokens += countWords(text);
  }
  const answer: EmbedContentResponse = {
    embeddings,
    usageMetadata: { promptTokenCount: tokens, totalTokenCount: tokens },
  };
  return { status: 200, body: answer };
}

function predict(body: Record<string, unknown>): MethodAnswer {
  const instances = body.instances;
  if (!Array.isArray(instances) || instances.length === 0) return invalid('instances: required');
  const parameters = isObject(body.parameters) ? body.parameters : {};
  const dimensions = size(parameters.outputDimensionality);
  if (typeof dimensions === 'string') return invalid(dimensions);
  const predictions: unknown[] = [];
  let characters = 0;
  for (const [i, instance] of instances.entries()) {
    if (!isObject(instance) || typeof instance.content !== 'string' || instance.content === '') {
      return invalid(`instances[${i}].content: a text is required`);
    }
    characters += instance.content.length;
    predictions.push({
      embeddings: {
        values: mockEmbedding(instance.content, dimensions),
        statistics: { token_count: countWords(instance.content), truncated: false },
      },
    });
  }
  return { status: 200, body: { predictions, metadata: { billableCharacterCount: characters } } };
}

function embedContent(body: Record<string, unknown>): MethodAnswer {
  const known = new Set(['content', 'embedContentConfig']);
  const unknown = Object.keys(body).find((key) => !known.has(key));
  if (unknown !== undefined) return invalid(`Unknown name ${JSON.stringify(unknown)}`);
  const parts = isObject(body.content) && Array.isArray(body.content.parts) ? (body.content.parts as Part[]) : [];
  const text = parts.map((part) => part.text ?? '').join('');
  if (text === '') return invalid('content: a text is required');
  const config = isObject(body.embedContentConfig) ? body.embedContentConfig : {};
  const dimensions = size(config.outputDimensionality);
  if (typeof dimensions === 'string') return invalid(dimensions);
  return {
    status: 200,
    body: {
      embedding: { values: mockEmbedding(text, dimensions) },
      usageMetadata: { promptTokenCount: countWords(text) },
      truncated: false,
    },
  };
}

function countTokens(body: Record<string, unknown>, vertex: boolean): MethodAnswer {
  const generate = body.generateContentRequest;
  if (generate !== undefined && (vertex || body.contents !== undefined)) {
    return invalid(
      vertex ? 'Unknown name "generateContentRequest"' : 'contents and generateContentRequest are exclusive',
    );
  }
  const request = isObject(generate) ? generate : body;
  if (!vertex && generate === undefined && Object.keys(body).some((key) => key !== 'contents')) {
    return invalid(`Unknown name ${JSON.stringify(Object.keys(body).find((key) => key !== 'contents'))}`);
  }
  const contents = request.contents as Content[] | undefined;
  if (!Array.isArray(contents) || contents.length === 0) return invalid('* CountTokensRequest.contents: required');
  const tools = Array.isArray(request.tools) ? (request.tools as { functionDeclarations?: unknown[] }[]) : [];
  const total =
    contents.reduce((sum, content) => sum + textWords(content), 0) +
    textWords(request.systemInstruction) +
    tools.reduce((sum, tool) => sum + (tool.functionDeclarations?.length ?? 0), 0);
  const answer: CountTokensResponse = { totalTokens: total };
  return { status: 200, body: answer };
}

/** The answer of one model method; `vertex` picks Vertex AI's shapes over the Gemini API's. */
export function googleModelMethod(
  method: GoogleMethod,
  model: string,
  body: Record<string, unknown>,
  vertex: boolean,
): MethodAnswer {
  if (method === 'countTokens') return countTokens(body, vertex);
  if (method === 'predict') return vertex ? predict(body) : { status: 404, error: 'NOT_FOUND', body: 'predict' };
  if (method === 'embedContent') {
    return vertex ? embedContent(body) : { status: 404, error: 'NOT_FOUND', body: 'this stand-in embeds by batch' };
  }
  return vertex ? { status: 404, error: 'NOT_FOUND', body: 'batchEmbedContents' } : batchEmbed(model, body);
}
