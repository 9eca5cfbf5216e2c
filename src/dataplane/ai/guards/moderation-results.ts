// OpenAI's moderation results as gw reads them: the answer of the moderations API
// (`{"results": [...]}`, one result per input text) and the `moderation` object of a moderated
// completion or response (inline moderation), whose results have the same shape. A result says
// whether it is `flagged`, which `categories` fired (name → boolean) and each category's score
// (`category_scores`: name → 0..1). gw keeps the names of the flagged categories (the access log's
// and the guard's `matched`) and the highest score of each category across the results.

/** OpenAI's default moderation model (agentgateway's default too). */
export const DEFAULT_MODERATION_MODEL = 'omni-moderation-latest';

/** What a set of moderation results says, as gw keeps it. */
export interface ModerationVerdict {
  flagged: boolean;
  /** The categories that fired in any flagged result, in the order first seen. */
  categories: string[];
  /** The highest score of each category across the results. */
  scores: Record<string, number>;
}

/**
 * Reads a list of moderation results; undefined when it is not one (not an array, or a result
 * without a boolean `flagged`): the caller cannot tell whether the texts were flagged.
 */
export function readModerationResults(results: unknown): ModerationVerdict | undefined {
  if (!Array.isArray(results)) return undefined;
  const verdict: ModerationVerdict = { flagged: false, categories: [], scores: {} };
  for (const result of results) {
    if (!isObject(result) || typeof result.flagged !== 'boolean') return undefined;
    if (isObject(result.category_scores))
      for (const [name, score] of Object.entries(result.category_scores))
        if (typeof score === 'number') verdict.scores[name] = Math.max(verdict.scores[name] ?? 0, score);
    if (!result.flagged) continue;
    verdict.flagged = true;
    if (isObject(result.categories))
      for (const [name, fired] of Object.entries(result.categories))
        if (fired === true && !verdict.categories.includes(name)) verdict.categories.push(name);
  }
  return verdict;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
