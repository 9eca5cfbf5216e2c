// Gemini countTokens requests counted by Anthropic's count_tokens (the gamma family): the
// conversation is read as a generateContent request (a countTokens body holds `contents`, or a
// whole `generateContentRequest`) and written as a Messages request, of which count_tokens takes
// the fields that make up the prompt. The answer ({input_tokens}) goes back as {totalTokens}.
import { translateRequest } from '../adapters.ts';
import { isPlainObject, numberOr } from '../json.ts';
import type { JsonObject, RequestTranslation } from '../types.ts';

// MessageCountTokensParams of @anthropic-ai/sdk: what a Messages request's prompt is made of.
const COUNTED_FIELDS = ['model', 'messages', 'system', 'tools', 'tool_choice', 'thinking'];

export function translateGeminiCountTokens(body: JsonObject): RequestTranslation {
  const inner = isPlainObject(body.generateContentRequest) ? body.generateContentRequest : body;
  // The model of the path (which gw put in the body); generateContentRequest names it too.
  const request: JsonObject = { ...inner, model: body.model };
  delete request.stream;
  if (inner !== body) delete request.generateContentRequest;
  const translated = translateRequest('gemini', 'messages', request);
  const counted: JsonObject = {};
  for (const field of COUNTED_FIELDS) if (translated.body[field] !== undefined) counted[field] = translated.body[field];
  return translated.warnings === undefined ? { body: counted } : { body: counted, warnings: translated.warnings };
}

/** Anthropic's count_tokens answer as Gemini's CountTokensResponse; undefined when it is not one. */
export function geminiTokenCount(body: unknown): JsonObject | undefined {
  const input = isPlainObject(body) ? numberOr(body.input_tokens) : undefined;
  return input === undefined ? undefined : { totalTokens: input };
}
