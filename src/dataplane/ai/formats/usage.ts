// Token usage in one shape for every format, and its conversions to and from each wire shape.
//
// inputTokens counts every input token, cached or not (OpenAI's prompt_tokens). Anthropic's
// input_tokens excludes cache reads and writes, so Messages usage is summed on the way in and
// split on the way out.
import { isPlainObject, numberOr, objectOr } from './json.ts';
import type { ApiFormat, JsonObject, ProviderChatFormat } from './types.ts';

export interface Usage {
  inputTokens: number;
  outputTokens: number;
  totalTokens: number;
  /** Input tokens read from the provider's prompt cache (part of inputTokens). */
  cachedInputTokens?: number;
  /** Input tokens written to the provider's prompt cache (part of inputTokens). */
  cacheCreationInputTokens?: number;
  /** Output tokens spent on reasoning (part of outputTokens). */
  reasoningTokens?: number;
}

function withOptional(usage: Usage, cached?: number, created?: number, reasoning?: number): Usage {
  if (cached !== undefined) usage.cachedInputTokens = cached;
  if (created !== undefined) usage.cacheCreationInputTokens = created;
  if (reasoning !== undefined) usage.reasoningTokens = reasoning;
  return usage;
}

/** The field names of OpenAI's `usage`, which Chat Completions and the Responses API spell apart. */
type OpenAiUsageNames = Record<'input' | 'output' | 'inputDetails' | 'outputDetails', string>;

const COMPLETIONS_NAMES: OpenAiUsageNames = {
  input: 'prompt_tokens',
  output: 'completion_tokens',
  inputDetails: 'prompt_tokens_details',
  outputDetails: 'completion_tokens_details',
};

const RESPONSES_NAMES: OpenAiUsageNames = {
  input: 'input_tokens',
  output: 'output_tokens',
  inputDetails: 'input_tokens_details',
  outputDetails: 'output_tokens_details',
};

/** OpenAI's `usage` (its input count includes cached tokens), with the given field names. */
function usageFromOpenAi(value: unknown, names: OpenAiUsageNames): Usage | undefined {
  if (!isPlainObject(value)) return undefined;
  const input = numberOr(value[names.input]);
  const output = numberOr(value[names.output]);
  if (input === undefined && output === undefined) return undefined;
  const inputDetails = objectOr(value[names.inputDetails]);
  const outputDetails = objectOr(value[names.outputDetails]);
  const usage = {
    inputTokens: input ?? 0,
    outputTokens: output ?? 0,
    totalTokens: numberOr(value.total_tokens) ?? (input ?? 0) + (output ?? 0),
  };
  return withOptional(
    usage,
    numberOr(inputDetails?.cached_tokens),
    numberOr(inputDetails?.cache_write_tokens),
    numberOr(outputDetails?.reasoning_tokens),
  );
}

/** Chat Completions `usage` (prompt_tokens, completion_tokens, their details). */
export function usageFromCompletions(value: unknown): Usage | undefined {
  return usageFromOpenAi(value, COMPLETIONS_NAMES);
}

/** Anthropic Messages `usage`: input_tokens plus the cache reads and writes Anthropic counts apart. */
export function usageFromMessages(value: unknown): Usage | undefined {
  if (!isPlainObject(value)) return undefined;
  const input = numberOr(value.input_tokens);
  const output = numberOr(value.output_tokens);
  if (input === undefined && output === undefined) return undefined;
  const cacheRead = numberOr(value.cache_read_input_tokens);
  const cacheCreation = numberOr(value.cache_creation_input_tokens);
  const inputTokens = (input ?? 0) + (cacheRead ?? 0) + (cacheCreation ?? 0);
  const usage = { inputTokens, outputTokens: output ?? 0, totalTokens: inputTokens + (output ?? 0) };
  const details = objectOr(value.output_tokens_details);
  return withOptional(usage, cacheRead, cacheCreation, numberOr(details?.thinking_tokens));
}

/**
 * Gemini `usageMetadata`: promptTokenCount includes the cached part (cachedContentTokenCount) and
 * the tool-use prompt is counted apart; candidatesTokenCount excludes thoughtsTokenCount, which gw
 * counts as output (reasoning).
 */
export function usageFromGemini(value: unknown): Usage | undefined {
  if (!isPlainObject(value)) return undefined;
  const prompt = numberOr(value.promptTokenCount);
  const candidates = numberOr(value.candidatesTokenCount);
  const thoughts = numberOr(value.thoughtsTokenCount);
  if (prompt === undefined && candidates === undefined && thoughts === undefined) return undefined;
  const inputTokens = (prompt ?? 0) + (numberOr(value.toolUsePromptTokenCount) ?? 0);
  const outputTokens = (candidates ?? 0) + (thoughts ?? 0);
  const usage = {
    inputTokens,
    outputTokens,
    totalTokens: numberOr(value.totalTokenCount) ?? inputTokens + outputTokens,
  };
  return withOptional(usage, numberOr(value.cachedContentTokenCount), undefined, thoughts);
}

/** The usage of a Responses API response object (from a body or a response.completed event). */
export function usageFromResponsesResponse(response: unknown): Usage | undefined {
  return isPlainObject(response) ? usageFromOpenAi(response.usage, RESPONSES_NAMES) : undefined;
}

/**
 * Converse usage as gw's: Bedrock's inputTokens leaves out the tokens read from and written to the
 * prompt cache (totalTokens counts them apart), where gw's input counts every input token.
 */
export function usageFromConverse(value: unknown): Usage | undefined {
  if (!isPlainObject(value)) return undefined;
  const input = numberOr(value.inputTokens);
  const output = numberOr(value.outputTokens);
  if (input === undefined && output === undefined) return undefined;
  const cacheRead = numberOr(value.cacheReadInputTokens);
  const cacheWrite = numberOr(value.cacheWriteInputTokens);
  const inputTokens = (input ?? 0) + (cacheRead ?? 0) + (cacheWrite ?? 0);
  const usage: Usage = { inputTokens, outputTokens: output ?? 0, totalTokens: inputTokens + (output ?? 0) };
  if (cacheRead !== undefined) usage.cachedInputTokens = cacheRead;
  if (cacheWrite !== undefined) usage.cacheCreationInputTokens = cacheWrite;
  return usage;
}

/** The usage a non-streaming response body reports, in gw's shape; undefined when it has none. */
export function usageFromResponse(format: ApiFormat | ProviderChatFormat, body: unknown): Usage | undefined {
  if (!isPlainObject(body)) return undefined;
  switch (format) {
    case 'completions':
      return usageFromCompletions(body.usage);
    case 'messages':
      return usageFromMessages(body.usage);
    case 'converse':
      return usageFromConverse(body.usage);
    case 'responses':
      return usageFromOpenAi(body.usage, RESPONSES_NAMES);
    case 'embeddings': {
      const usage = objectOr(body.usage);
      const input = numberOr(usage?.prompt_tokens);
      if (input === undefined) return undefined;
      return { inputTokens: input, outputTokens: 0, totalTokens: numberOr(usage?.total_tokens) ?? input };
    }
    case 'gemini':
      return usageFromGemini(body.usageMetadata);
    case 'count_tokens': {
      const input = numberOr(body.input_tokens);
      return input === undefined ? undefined : { inputTokens: input, outputTokens: 0, totalTokens: input };
    }
    case 'gemini_count_tokens': {
      const input = numberOr(body.totalTokens);
      return input === undefined ? undefined : { inputTokens: input, outputTokens: 0, totalTokens: input };
    }
  }
}

/** gw's usage as Chat Completions `usage`. */
export function completionsUsage(usage: Usage): JsonObject {
  const promptDetails: JsonObject = { cached_tokens: usage.cachedInputTokens ?? 0 };
  if (usage.cacheCreationInputTokens !== undefined) promptDetails.cache_write_tokens = usage.cacheCreationInputTokens;
  const out: JsonObject = {
    prompt_tokens: usage.inputTokens,
    completion_tokens: usage.outputTokens,
    total_tokens: usage.totalTokens,
    prompt_tokens_details: promptDetails,
  };
  if (usage.reasoningTokens !== undefined) out.completion_tokens_details = { reasoning_tokens: usage.reasoningTokens };
  return out;
}

/** gw's usage as Anthropic Messages `usage` (input_tokens without the cached part). */
export function messagesUsage(usage: Usage): JsonObject {
  const cacheRead = usage.cachedInputTokens ?? 0;
  const cacheCreation = usage.cacheCreationInputTokens ?? 0;
  const out: JsonObject = {
    input_tokens: Math.max(0, usage.inputTokens - cacheRead - cacheCreation),
    output_tokens: usage.outputTokens,
    cache_creation_input_tokens: cacheCreation,
    cache_read_input_tokens: cacheRead,
  };
  if (usage.reasoningTokens !== undefined) out.output_tokens_details = { thinking_tokens: usage.reasoningTokens };
  return out;
}

/** gw's usage as Responses API `usage` (its input count includes cached tokens, as gw's does). */
export function responsesUsage(usage: Usage): JsonObject {
  const inputDetails: JsonObject = { cached_tokens: usage.cachedInputTokens ?? 0 };
  if (usage.cacheCreationInputTokens !== undefined) inputDetails.cache_write_tokens = usage.cacheCreationInputTokens;
  return {
    input_tokens: usage.inputTokens,
    input_tokens_details: inputDetails,
    output_tokens: usage.outputTokens,
    output_tokens_details: { reasoning_tokens: usage.reasoningTokens ?? 0 },
    total_tokens: usage.totalTokens,
  };
}

/**
 * gw's usage as Gemini usageMetadata. promptTokenCount counts every input token (the cached
 * content included, as gw's does); candidatesTokenCount leaves out the thoughts, counted apart.
 */
export function geminiUsage(usage: Usage): JsonObject {
  const thoughts = usage.reasoningTokens;
  const out: JsonObject = {
    promptTokenCount: usage.inputTokens,
    candidatesTokenCount: Math.max(0, usage.outputTokens - (thoughts ?? 0)),
    totalTokenCount: usage.totalTokens,
  };
  if (usage.cachedInputTokens !== undefined) out.cachedContentTokenCount = usage.cachedInputTokens;
  if (thoughts !== undefined) out.thoughtsTokenCount = thoughts;
  return out;
}
