// Shared vocabulary of the format translators. Bodies are decoded JSON: the translators read only
// the fields they know and treat everything else as opaque values to carry over.

/**
 * The API a request or response body speaks (the `route type` of an AI backend). `count_tokens`
 * is Anthropic's token count; `gemini` Gemini generateContent (and streamGenerateContent);
 * `gemini_count_tokens` Gemini countTokens.
 */
export type ApiFormat =
  | 'completions'
  | 'messages'
  | 'responses'
  | 'embeddings'
  | 'count_tokens'
  | 'gemini'
  | 'gemini_count_tokens';

/** The chat formats gw translates between, as client and as provider: OpenAI Chat Completions and Anthropic Messages. */
export type ChatFormat = 'completions' | 'messages';

/**
 * The chat formats a client may speak to a translating provider: the above, the OpenAI Responses
 * API and Gemini generateContent.
 */
export type ClientChatFormat = ChatFormat | 'responses' | 'gemini';

/**
 * The chat formats gw writes requests in and reads answers of: the above two, the Responses API (a
 * server that speaks only it), Gemini generateContent (the delta family) and Bedrock Converse
 * (zeta), which gw does not accept from clients.
 */
export type ProviderChatFormat = ChatFormat | 'responses' | 'gemini' | 'converse';

/** A decoded JSON object (a request or response body, or a part of one). */
export type JsonObject = Record<string, unknown>;

/** A field of the source body that the target format cannot express, or one that was changed. */
export interface TranslationWarning {
  /** Where in the source body, such as `frequency_penalty` or `messages[2].content[1]`. */
  path: string;
  message: string;
}

/** A translated request body; `warnings` is present only when something was dropped or changed. */
export interface RequestTranslation {
  body: JsonObject;
  warnings?: TranslationWarning[];
}

/**
 * A body that cannot be translated because it is not the shape its format requires (messages
 * that are not an array, a tool message without tool_call_id, a response without choices).
 * For a client's request the proxy answers 400; for a provider's response, 502.
 */
export class TranslationError extends Error {
  override name = 'TranslationError';
}
