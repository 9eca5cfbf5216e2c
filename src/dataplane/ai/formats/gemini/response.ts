// Gemini generateContent responses (GenerateContentResponse of @google/genai) read into the chat
// form (the first candidate's parts, its finishReason and the usageMetadata) and written from it
// for a Gemini client. The stream reader and writer (stream.ts) read and write each chunk with the
// same part reader and writer.
import { argumentsObject } from '../form/tool-arguments.ts';
import type { ChatResponse, Part, StopReason, ToolCallPart } from '../form/types.ts';
import { isPlainObject, stringOr } from '../json.ts';
import { type JsonObject, TranslationError } from '../types.ts';
import { geminiUsage, usageFromGemini } from '../usage.ts';

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
      const toolCall: ToolCallPart = {
        type: 'tool_call',
        id: stringOr(call.id),
        name: call.name as string,
        arguments: call.args ?? {},
        argumentsPath: path,
        path,
      };
      // Gemini signs the thinking behind a call on the functionCall part and wants it back there.
      if (signature !== undefined) toolCall.signature = signature;
      parts.push(toolCall);
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

// The form's stop reasons as a finishReason. Gemini ends a turn that called functions with STOP.
const GEMINI_FINISH: Record<StopReason, string> = {
  end: 'STOP',
  stop_sequence: 'STOP',
  tool_calls: 'STOP',
  pause: 'STOP',
  max_tokens: 'MAX_TOKENS',
  context_window: 'MAX_TOKENS',
  content_filter: 'SAFETY',
  other: 'OTHER',
};

export function geminiFinishReason(reason: StopReason | undefined): string {
  return reason === undefined ? 'STOP' : GEMINI_FINISH[reason];
}

/** A content part of the form as a Gemini response part; undefined for one Gemini cannot show. */
export function geminiPart(part: Part): JsonObject | undefined {
  if (!('type' in part)) return undefined;
  switch (part.type) {
    case 'text':
      return { text: part.text };
    case 'reasoning':
      // Encrypted reasoning of another provider means nothing to a Gemini client.
      if (part.redacted !== undefined) return undefined;
      return part.signature === undefined
        ? { text: part.text, thought: true }
        : { text: part.text, thought: true, thoughtSignature: part.signature };
    case 'tool_call': {
      const call: JsonObject = { name: part.name, args: argumentsObject(part.arguments) };
      if (part.id !== undefined) call.id = part.id;
      return part.signature === undefined
        ? { functionCall: call }
        : { functionCall: call, thoughtSignature: part.signature };
    }
    default:
      return undefined;
  }
}

/** One GenerateContentResponse (a whole response, or a stream chunk) around a candidate. */
export function geminiResponseObject(
  candidate: JsonObject,
  id: string | undefined,
  model: string | undefined,
  usage: JsonObject | undefined,
): JsonObject {
  const out: JsonObject = { candidates: [candidate] };
  if (usage !== undefined) out.usageMetadata = usage;
  if (model !== undefined) out.modelVersion = model;
  if (id !== undefined) out.responseId = id;
  return out;
}

/**
 * The form's response as a GenerateContentResponse with one candidate: text, thoughts and
 * function calls as parts. `model`, when given, replaces the provider's model name.
 */
export function writeGeminiResponse(response: ChatResponse, options: { model?: string } = {}): JsonObject {
  const parts: JsonObject[] = [];
  for (const part of response.content) {
    const written = geminiPart(part);
    if (written !== undefined) parts.push(written);
  }
  const candidate = {
    content: { role: 'model', parts },
    finishReason: geminiFinishReason(response.stopReason),
    index: 0,
  };
  const usage = response.usage === undefined ? undefined : geminiUsage(response.usage);
  return geminiResponseObject(candidate, response.id, options.model ?? response.model, usage);
}
