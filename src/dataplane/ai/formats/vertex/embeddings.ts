// OpenAI Embeddings requests as Vertex AI takes them (the epsilon family), two ways, as
// @google/genai tells the models apart:
// - predict, for the text embedding models (text-embedding-005, text-multilingual-embedding-002,
//   gemini-embedding-001): one instance per input text ({content}), `dimensions` as
//   parameters.outputDimensionality; the answer's predictions[].embeddings.values become OpenAI's
//   vectors, in order, the sum of their statistics.token_count the usage. Fields gw does not know
//   go into every instance (task_type, title).
// - embedContent, for the other Gemini embedding models: one text per request ({content: {role,
//   parts}}), `dimensions` as embedContentConfig.outputDimensionality; the answer's
//   embedding.values is the vector, usageMetadata.promptTokenCount the usage. Fields gw does not
//   know go into embedContentConfig (taskType, title, autoTruncate).
import type { EmbeddingsRequest } from '../embeddings/request.ts';
import { readVector, writeEmbeddingsResponse } from '../embeddings/response.ts';
import { type ExchangeTranslation, inputUsage } from '../exchange-translation.ts';
import { isPlainObject, numberOr } from '../json.ts';
import { type JsonObject, TranslationError } from '../types.ts';
import { Warnings } from '../warnings.ts';

const VERTEX_PREDICT = { full: "Vertex AI's predict", short: 'Vertex AI' };

export function writeVertexEmbeddings(request: EmbeddingsRequest, model: string): ExchangeTranslation {
  const warnings = new Warnings(VERTEX_PREDICT);
  if (request.user !== undefined) warnings.dropped('user', 'Vertex AI has no end-user id');
  const out: JsonObject = { instances: request.texts.map((content) => ({ ...request.extra, content })) };
  if (request.dimensions !== undefined) out.parameters = { outputDimensionality: request.dimensions };
  const count = request.texts.length;
  return {
    ...warnings.result(out),
    errorsFrom: 'gemini',
    readAnswer: (body) => {
      const predictions = body.predictions;
      if (!Array.isArray(predictions) || predictions.length !== count) {
        throw new TranslationError(`predictions: expected ${count} predictions`);
      }
      let tokens: number | undefined = 0;
      const vectors = predictions.map((prediction, i) => {
        const embeddings =
          isPlainObject(prediction) && isPlainObject(prediction.embeddings) ? prediction.embeddings : {};
        const statistics = isPlainObject(embeddings.statistics) ? embeddings.statistics : undefined;
        const counted = numberOr(statistics?.token_count);
        tokens = counted === undefined || tokens === undefined ? undefined : tokens + counted;
        return readVector(embeddings.values, `predictions[${i}].embeddings.values`);
      });
      return {
        body: writeEmbeddingsResponse({ vectors, inputTokens: tokens }, { model, base64: request.base64 }),
        usage: inputUsage(tokens),
      };
    },
  };
}

const VERTEX_EMBED_CONTENT = { full: "Vertex AI's embedContent", short: 'Vertex AI' };

export function writeVertexEmbedContent(request: EmbeddingsRequest, model: string): ExchangeTranslation {
  const warnings = new Warnings(VERTEX_EMBED_CONTENT);
  if (request.user !== undefined) warnings.dropped('user', 'Vertex AI has no end-user id');
  if (request.texts.length !== 1) {
    throw new TranslationError(
      `input: Vertex AI embeds one text per request with ${model} (embedContent); send ${request.texts.length} requests`,
    );
  }
  const out: JsonObject = { content: { role: 'user', parts: [{ text: request.texts[0] }] } };
  const config: JsonObject = { ...request.extra };
  if (request.dimensions !== undefined) config.outputDimensionality = request.dimensions;
  if (Object.keys(config).length > 0) out.embedContentConfig = config;
  return {
    ...warnings.result(out),
    errorsFrom: 'gemini',
    readAnswer: (body) => {
      const embedding = isPlainObject(body.embedding) ? body.embedding : {};
      const vector = readVector(embedding.values, 'embedding.values');
      const metadata = isPlainObject(body.usageMetadata) ? body.usageMetadata : undefined;
      const tokens = numberOr(metadata?.promptTokenCount);
      return {
        body: writeEmbeddingsResponse({ vectors: [vector], inputTokens: tokens }, { model, base64: request.base64 }),
        usage: inputUsage(tokens),
      };
    },
  };
}
