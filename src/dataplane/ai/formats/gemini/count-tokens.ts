// Gemini's countTokens and Anthropic's count_tokens, each served by the other:
// - a Gemini client's countTokens counted by Anthropic's count_tokens (the gamma family): the
//   conversation is read as a generateContent request (a countTokens body holds `contents`, or a
//   whole `generateContentRequest`) and written as a Messages request, of which count_tokens takes
//   the fields that make up the prompt. The answer ({input_tokens}) goes back as {totalTokens}.
// - an Anthropic client's count_tokens counted by Google's countTokens (delta, epsilon), written by
//   the generateContent request writer so that a conversation is counted as it would be sent: on
//   the Gemini API {contents} alone when that is all there is, else {generateContentRequest:
//   {model: "models/{id}", …}} so that the system instruction and the tools are counted too; on
//   Vertex AI contents, systemInstruction, tools and generationConfig side by side, the fields its
//   CountTokensRequest has (anything else the writer produced is dropped, warned). The answer's
//   totalTokens is Anthropic's input_tokens.
import { translateRequest } from '../adapters.ts';
import { type ExchangeTranslation, inputUsage, keptFields } from '../exchange-translation.ts';
import type { ChatRequest } from '../form/types.ts';
import { isPlainObject, numberOr } from '../json.ts';
import { type JsonObject, type RequestTranslation, TranslationError, type TranslationWarning } from '../types.ts';
import { writeGeminiRequest } from './request.ts';

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

const VERTEX_FIELDS: ReadonlySet<string> = new Set(['contents', 'systemInstruction', 'tools', 'generationConfig']);

export function writeGeminiCountTokens(request: ChatRequest, model: string, vertex: boolean): ExchangeTranslation {
  const written = writeGeminiRequest(request);
  const warnings: TranslationWarning[] = [...(written.warnings ?? [])];
  const generate = written.body;
  let body: JsonObject;
  if (vertex) {
    body = keptFields(generate, VERTEX_FIELDS, "Vertex AI's countTokens", warnings);
  } else if (Object.keys(generate).every((key) => key === 'contents')) {
    body = { contents: generate.contents };
  } else {
    body = { generateContentRequest: { model: `models/${model}`, ...generate } };
  }
  return {
    body,
    ...(warnings.length > 0 ? { warnings } : {}),
    errorsFrom: 'gemini',
    readAnswer: (answer) => {
      const total = numberOr(answer.totalTokens);
      if (total === undefined) throw new TranslationError('totalTokens: missing');
      return { body: { input_tokens: total }, usage: inputUsage(total) };
    },
  };
}
