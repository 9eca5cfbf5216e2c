// The rerank API as Cohere defines it (POST /v1/rerank, /v2/rerank): a request names a model, a
// query and the documents to order ({model, query, documents, top_n?, ...}); the answer lists
// them by relevance ({id?, results: [{index, relevance_score, document?}], meta?}). gw forwards it
// to providers that speak it without translating; what it reads is the request's shape (to refuse
// a body that is not a rerank request), the answer's usage, and it words its own errors as
// Cohere's API does ({"message": ...}).
import { boundedMessage } from './errors.ts';
import { isPlainObject, numberOr, objectOr } from './json.ts';
import type { JsonObject } from './types.ts';
import type { Usage } from './usage.ts';

/** Why a JSON body is not a rerank request, or undefined. */
export function rerankRequestProblem(body: JsonObject): string | undefined {
  if (typeof body.query !== 'string') return 'it has no "query" string';
  if (!Array.isArray(body.documents)) return 'it has no "documents" array';
  return undefined;
}

/**
 * The token usage of a rerank answer: Cohere's `meta.tokens` (input and output tokens), else its
 * `meta.billed_units` (input_tokens, output_tokens, or total_tokens as Voyage-compatible servers
 * report), else an OpenAI-style `usage` (prompt_tokens / total_tokens, as Jina and vLLM send).
 * Search units (`meta.billed_units.search_units`) are a price unit, not tokens: they are not usage.
 */
export function rerankUsage(answer: unknown): Usage | undefined {
  if (!isPlainObject(answer)) return undefined;
  const meta = objectOr(answer.meta);
  const counted = tokenCounts(objectOr(meta?.tokens)) ?? tokenCounts(objectOr(meta?.billed_units));
  if (counted !== undefined) return counted;
  const usage = objectOr(answer.usage);
  if (usage === undefined) return undefined;
  const input = numberOr(usage.prompt_tokens) ?? numberOr(usage.input_tokens) ?? numberOr(usage.total_tokens);
  if (input === undefined) return undefined;
  return { inputTokens: input, outputTokens: 0, totalTokens: numberOr(usage.total_tokens) ?? input };
}

/** {input_tokens, output_tokens} or {total_tokens} as usage (Cohere reports them as numbers, maybe fractional). */
function tokenCounts(counts: JsonObject | undefined): Usage | undefined {
  if (counts === undefined) return undefined;
  const input = numberOr(counts.input_tokens);
  const output = numberOr(counts.output_tokens);
  if (input === undefined && output === undefined) {
    const total = numberOr(counts.total_tokens);
    return total === undefined ? undefined : { inputTokens: total, outputTokens: 0, totalTokens: total };
  }
  const inputTokens = Math.round(input ?? 0);
  const outputTokens = Math.round(output ?? 0);
  return { inputTokens, outputTokens, totalTokens: inputTokens + outputTokens };
}

/** An error of gw's own to a rerank client, in Cohere's shape: `{"message": ...}`. */
export function rerankErrorBody(message: string): { contentType: string; body: string } {
  return { contentType: 'application/json', body: JSON.stringify({ message: boundedMessage(message) }) };
}
