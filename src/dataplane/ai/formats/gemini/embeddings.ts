// OpenAI Embeddings requests as the Gemini API's batchEmbedContents (the delta family): one
// EmbedContentRequest per input text under `requests`, each naming the model (models/{id}) as the
// API requires, `dimensions` as each one's outputDimensionality. The answer's `embeddings[].values`
// become OpenAI's vectors, in order; usageMetadata.promptTokenCount, when the API reports it, the
// usage. Fields gw does not know go into every request of the batch (taskType, title).
import type { EmbeddingsRequest } from '../embeddings/request.ts';
import { readVector, writeEmbeddingsResponse } from '../embeddings/response.ts';
import { type ExchangeTranslation, inputUsage } from '../exchange-translation.ts';
import { isPlainObject, numberOr } from '../json.ts';
import { type JsonObject, TranslationError } from '../types.ts';
import { Warnings } from '../warnings.ts';

const GEMINI_API = { full: 'the Gemini API', short: 'Gemini' };

/** `model` is the bare model id (gemini-embedding-001), as the planner checked it. */
export function writeGeminiEmbeddings(request: EmbeddingsRequest, model: string): ExchangeTranslation {
  const warnings = new Warnings(GEMINI_API);
  if (request.user !== undefined) warnings.dropped('user', 'the Gemini API has no end-user id');
  const requests = request.texts.map((text) => {
    const entry: JsonObject = { ...request.extra, model: `models/${model}`, content: { parts: [{ text }] } };
    if (request.dimensions !== undefined) entry.outputDimensionality = request.dimensions;
    return entry;
  });
  const count = request.texts.length;
  return {
    ...warnings.result({ requests }),
    errorsFrom: 'gemini',
    readAnswer: (body) => {
      const embeddings = body.embeddings;
      if (!Array.isArray(embeddings) || embeddings.length !== count) {
        throw new TranslationError(`embeddings: expected ${count} embeddings`);
      }
      const vectors = embeddings.map((item, i) =>
        readVector(isPlainObject(item) ? item.values : undefined, `embeddings[${i}].values`),
      );
      const metadata = isPlainObject(body.usageMetadata) ? body.usageMetadata : undefined;
      const tokens = numberOr(metadata?.promptTokenCount);
      return {
        body: writeEmbeddingsResponse({ vectors, inputTokens: tokens }, { model, base64: request.base64 }),
        usage: inputUsage(tokens),
      };
    },
  };
}
