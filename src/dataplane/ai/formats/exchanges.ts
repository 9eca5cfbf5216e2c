// The requests gw answers by one whole exchange with another vendor's API (exchange-translation.ts),
// composed like adapters.ts composes the chat formats: the client's side reads the request (OpenAI
// Embeddings, Anthropic count_tokens through the Messages reader and the chat form), the provider's
// side writes it and reads the answer back.
import { writeBedrockEmbeddings } from './bedrock-invoke/embeddings.ts';
import { writeConverseCountTokens } from './converse/count-tokens.ts';
import { readEmbeddingsRequest } from './embeddings/request.ts';
import type { ExchangeTranslation } from './exchange-translation.ts';
import { writeGeminiCountTokens } from './gemini/count-tokens.ts';
import { writeGeminiEmbeddings } from './gemini/embeddings.ts';
import { readMessagesRequest } from './messages/request.ts';
import type { JsonObject } from './types.ts';
import { writeVertexEmbedContent, writeVertexEmbeddings } from './vertex/embeddings.ts';

/**
 * The embeddings APIs gw writes: the Gemini API's batchEmbedContents, Vertex AI's predict and
 * embedContent, Bedrock InvokeModel.
 */
export type EmbeddingsApi = 'gemini' | 'vertex-predict' | 'vertex-embed-content' | 'bedrock-invoke';

/** The token-counting APIs gw writes: Google's countTokens (the Gemini API, Vertex AI) and Bedrock's CountTokens. */
export type CountTokensApi = 'gemini' | 'vertex' | 'converse';

/**
 * An OpenAI Embeddings request for `api` and `model` (a bare model id). Throws TranslationError
 * for a body that cannot be sent (400); a string says the model is not one gw translates for (400).
 */
export function translateEmbeddings(api: EmbeddingsApi, body: JsonObject, model: string): ExchangeTranslation | string {
  const request = readEmbeddingsRequest(body);
  switch (api) {
    case 'gemini':
      return writeGeminiEmbeddings(request, model);
    case 'vertex-predict':
      return writeVertexEmbeddings(request, model);
    case 'vertex-embed-content':
      return writeVertexEmbedContent(request, model);
    case 'bedrock-invoke':
      return writeBedrockEmbeddings(request, model);
  }
}

/** An Anthropic count_tokens request for `api` and `model`. Throws TranslationError for a body that cannot be sent (400). */
export function translateCountTokens(api: CountTokensApi, body: JsonObject, model: string): ExchangeTranslation {
  const request = readMessagesRequest(body);
  return api === 'converse'
    ? writeConverseCountTokens(request)
    : writeGeminiCountTokens(request, model, api === 'vertex');
}
