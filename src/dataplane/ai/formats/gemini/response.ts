// Gemini generateContent responses (GenerateContentResponse of @google/genai) read into the chat
// form: the first candidate's parts, its finishReason and the usageMetadata. The provider side
// only; the stream reader (stream.ts) reads each chunk with the same part reader.
import type { ChatResponse, Part, StopReason } from '../form/types.ts';
import { isPlainObject, stringOr } from '../json.ts';
import { type JsonObject, TranslationError } from '../types.ts';
import { usageFromGemini } from '../usage.ts';

// FinishReason of @google/genai. Everything a safety or policy check ended is content_filter.
const FINISH_REASONS: Record<string, StopReason> = {
  STOP: 'end',
  MAX_TOKENS: 'max_tokens',
  SAFETY: 'content_filter',
  RECITATION: 'content_filter',
  LANGUAGE: 'content_filter',
  BLOCKLIST: 'content_filter',
  PROHIBITED_CONTENT: 'content_filter',
  SPII: 'content_filter',
  IMAGE_SAFETY: 'content_filter',
  IMAGE_PROHIBITED_CONTENT: 'content_filter',
  IMAGE_RECITATION: 'content_filter',
};

/**
 * A finishReason in the form. Gemini ends a turn that called functions with STOP: a response
 * whose parts include a function call stopped for `tool_calls`, as the other formats say.
 */
export function stopReasonOfGemini(finishReason: unknown, calledTools: boolean): StopReason | undefined {
  if (typeof finishReason !== 'string') return undefined;
  if (finishReason === 'STOP' && calledTools) return 'tool_calls';
  return FINISH_REASONS[finishReason] ?? 'other';
}

/** The first candidate of a response or stream chunk, when there is one. */
export function firstCandidate(body: JsonObject): JsonObject | undefined {
  const candidates = body.candidates;
  return Array.isArray(candidates) && isPlainObject(candidates[0]) ? candidates[0] : undefined;
}

/** A candidate's content parts in the form: text, thoughts (reasoning) and function calls. */
export function readCandidateParts(candidate: JsonObject | undefined): Part[] {
  const content = candidate?.content;
  if (!isPlainObject(content) || !Array.isArray(content.parts)) return [];
  const parts: Part[] = [];
  // A response's parts are never reported on: they carry no source path.
  const path = '';
  for (const part of content.parts) {
    if (!isPlainObject(part)) continue;
    const signature = stringOr(part.thoughtSignature);
    if (typeof part.text === 'string') {
      if (part.thought === true) {
        parts.push(
          signature === undefined
            ? { type: 'reasoning', text: part.text, path }
            : { type: 'reasoning', text: part.text, signature, path },
        );
      } else {
        parts.push({ type: 'text', text: part.text, path });
      }
    } else if (isPlainObject(part.functionCall) && typeof part.functionCall.name === 'string') {
      const call = part.functionCall;
      parts.push({
        type: 'tool_call',
        id: stringOr(call.id),
        name: call.name as string,
        arguments: call.args ?? {},
        argumentsPath: path,
        path,
      });
    }
  }
  return parts;
}

export function readGeminiResponse(body: JsonObject): ChatResponse {
  if (!isPlainObject(body) || (body.candidates === undefined && body.promptFeedback === undefined)) {
    throw new TranslationError('the provider response is not a Gemini response (no candidates)');
  }
  const candidate = firstCandidate(body);
  const content = readCandidateParts(candidate);
  const calledTools = content.some((part) => 'type' in part && part.type === 'tool_call');
  // A prompt Gemini blocked has no candidates, only promptFeedback.blockReason.
  const blocked = candidate === undefined && isPlainObject(body.promptFeedback) && body.promptFeedback.blockReason;
  return {
    id: stringOr(body.responseId),
    model: stringOr(body.modelVersion),
    content,
    stopReason: blocked ? 'content_filter' : stopReasonOfGemini(candidate?.finishReason, calledTools),
    usage: usageFromGemini(body.usageMetadata),
  };
}
