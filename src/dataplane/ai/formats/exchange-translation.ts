// A request gw serves by one whole exchange with another vendor's API where no chat adapter
// applies: an OpenAI Embeddings request answered by Gemini's batchEmbedContents, Vertex AI's
// predict or a Bedrock embedding model; an Anthropic count_tokens request answered by Gemini's
// countTokens or Bedrock's CountTokens. Never streamed: the answer is read whole and rewritten.
import type { JsonObject, ProviderChatFormat, RequestTranslation, TranslationWarning } from './types.ts';
import type { Usage } from './usage.ts';

/** The client's answer written from the provider's, and the tokens it reports (for telemetry). */
export interface TranslatedAnswer {
  body: JsonObject;
  usage: Usage | undefined;
}

/** A header of the provider's answer by its lower-case name (Bedrock reports some counts there). */
export type AnswerHeader = (name: string) => string | undefined;

export interface ExchangeTranslation extends RequestTranslation {
  /** Whose error bodies the provider sends, for translateErrorBody: Google's or Bedrock's. */
  errorsFrom: ProviderChatFormat;
  /** The provider's 2xx JSON answer as the client's; throws TranslationError for one not of its API (502). */
  readAnswer(body: JsonObject, header: AnswerHeader): TranslatedAnswer;
}

/** Usage of a request that only reads input (embeddings, token counts). */
export function inputUsage(tokens: number | undefined): Usage | undefined {
  return tokens === undefined ? undefined : { inputTokens: tokens, outputTokens: 0, totalTokens: tokens };
}

/**
 * The fields of a body written for another operation (generateContent, Converse) that `api` takes;
 * each other one is left out and warned about.
 */
export function keptFields(
  body: JsonObject,
  fields: ReadonlySet<string>,
  api: string,
  warnings: TranslationWarning[],
): JsonObject {
  const kept: JsonObject = {};
  for (const key in body) {
    if (fields.has(key)) kept[key] = body[key];
    else warnings.push({ path: key, message: `${api} has no such field; dropped` });
  }
  return kept;
}
