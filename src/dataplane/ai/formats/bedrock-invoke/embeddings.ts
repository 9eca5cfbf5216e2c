// OpenAI Embeddings requests as Bedrock InvokeModel bodies of the embedding models gw knows (the
// zeta family), chosen by the model id (a cross-region profile such as us.cohere.embed-v4:0 or an
// ARN ends in the same id):
// - Amazon Titan Text Embeddings V2 (amazon.titan-embed-text-v2:0): {inputText, dimensions,
//   normalize: true} → {embedding, inputTextTokenCount}; one text per request.
// - Amazon Titan Text Embeddings G1 (amazon.titan-embed-text-v1, amazon.titan-embed-g1-text-02):
//   {inputText} → the same answer; a fixed size, so no `dimensions`.
// - Cohere Embed (cohere.embed-english-v3, cohere.embed-multilingual-v3, cohere.embed-v4:0):
//   {texts, input_type: "search_document"} (+ output_dimension on v4) → {embeddings: [[…]]} or
//   {embeddings: {float: [[…]]}}; Bedrock counts the input in the X-Amzn-Bedrock-Input-Token-Count
//   header.
// OpenAI's vectors are unit length; Titan V2 is asked for the same (normalize), Cohere's are too.
// Fields gw does not know go into the body as they are (a client's own input_type, truncate).
import type { EmbeddingsRequest } from '../embeddings/request.ts';
import { readVector, writeEmbeddingsResponse } from '../embeddings/response.ts';
import { type ExchangeTranslation, inputUsage } from '../exchange-translation.ts';
import { isPlainObject, numberOr } from '../json.ts';
import { type JsonObject, TranslationError } from '../types.ts';
import { Warnings, withCarriedOver } from '../warnings.ts';

const BEDROCK = { full: 'Bedrock InvokeModel', short: 'Bedrock' };

type BedrockEmbedder = 'titan-v2' | 'titan-v1' | 'cohere' | 'cohere-v4';

/** Which of the embedding models gw translates for a model id, if any. */
function embedderOf(modelId: string): BedrockEmbedder | undefined {
  if (/(^|[./:])amazon\.titan-embed-text-v2/.test(modelId)) return 'titan-v2';
  if (/(^|[./:])amazon\.titan-embed-(text-v1|g1-text-02)/.test(modelId)) return 'titan-v1';
  if (/(^|[./:])cohere\.embed-v4/.test(modelId)) return 'cohere-v4';
  if (/(^|[./:])cohere\.embed-/.test(modelId)) return 'cohere';
  return undefined;
}

export const BEDROCK_EMBEDDING_MODELS =
  'Amazon Titan Text Embeddings (amazon.titan-embed-text-v2:0, amazon.titan-embed-text-v1) and Cohere Embed (cohere.embed-*)';

/**
 * The InvokeModel body for `modelId`; a string says the model is not one gw can translate for
 * (the client is answered 400). Throws TranslationError for a request the model cannot take.
 */
export function writeBedrockEmbeddings(request: EmbeddingsRequest, modelId: string): ExchangeTranslation | string {
  const embedder = embedderOf(modelId);
  if (embedder === undefined) {
    return `gw translates Embeddings requests to Bedrock for ${BEDROCK_EMBEDDING_MODELS} only; ${JSON.stringify(modelId)} is not one of them.`;
  }
  const warnings = new Warnings(BEDROCK);
  if (request.user !== undefined) warnings.dropped('user', 'Bedrock has no end-user id');
  if (embedder === 'cohere' || embedder === 'cohere-v4') return cohere(request, modelId, embedder, warnings);
  if (request.texts.length !== 1) {
    throw new TranslationError(`input: ${modelId} embeds one text per request; send ${request.texts.length} requests`);
  }
  const out: JsonObject = { inputText: request.texts[0] };
  if (request.dimensions !== undefined) {
    if (embedder === 'titan-v1') throw new TranslationError(`dimensions: ${modelId} has a fixed size; remove it`);
    out.dimensions = request.dimensions;
  }
  if (embedder === 'titan-v2' && !('normalize' in request.extra)) out.normalize = true;
  return {
    ...warnings.result(withCarriedOver(out, request.extra, warnings)),
    errorsFrom: 'converse',
    readAnswer: (body) => {
      const vector = readVector(body.embedding, 'embedding');
      const tokens = numberOr(body.inputTextTokenCount);
      return {
        body: writeEmbeddingsResponse({ vectors: [vector], inputTokens: tokens }, answerOptions(request, modelId)),
        usage: inputUsage(tokens),
      };
    },
  };
}

function cohere(
  request: EmbeddingsRequest,
  modelId: string,
  embedder: 'cohere' | 'cohere-v4',
  warnings: Warnings,
): ExchangeTranslation {
  const out: JsonObject = { texts: request.texts };
  // Cohere requires the kind of input; an OpenAI request embeds documents unless the client says otherwise.
  if (!('input_type' in request.extra)) out.input_type = 'search_document';
  if (request.dimensions !== undefined) {
    if (embedder !== 'cohere-v4') {
      throw new TranslationError(`dimensions: ${modelId} has a fixed size (cohere.embed-v4 takes one); remove it`);
    }
    out.output_dimension = request.dimensions;
  }
  const count = request.texts.length;
  return {
    ...warnings.result(withCarriedOver(out, request.extra, warnings)),
    errorsFrom: 'converse',
    readAnswer: (body, header) => {
      // Floats only: a list, or by type when the request named embedding_types.
      const embeddings = isPlainObject(body.embeddings) ? body.embeddings.float : body.embeddings;
      if (!Array.isArray(embeddings) || embeddings.length !== count) {
        throw new TranslationError(`embeddings: expected ${count} float embeddings`);
      }
      const vectors = embeddings.map((vector, i) => readVector(vector, `embeddings[${i}]`));
      const counted = header('x-amzn-bedrock-input-token-count');
      const tokens = counted !== undefined && /^\d{1,15}$/.test(counted) ? Number(counted) : undefined;
      return {
        body: writeEmbeddingsResponse({ vectors, inputTokens: tokens }, answerOptions(request, modelId)),
        usage: inputUsage(tokens),
      };
    },
  };
}

function answerOptions(request: EmbeddingsRequest, modelId: string): { model: string; base64: boolean } {
  return { model: modelId, base64: request.base64 };
}
