// What an alpha provider's inline moderation (inline-moderation.ts) said about one request, as
// the LLM record keeps it: per side (input, output) its mode and the provider's results (flagged,
// the categories that fired, every category's score) or why there are none; and how the access
// log (`gw.ai.moderation`) and CEL (`llm.moderation`) show it. Kept apart from the moderation
// itself so that telemetry depends on nothing but this.
import type { ModerationVerdict } from './guards/moderation-results.ts';

export type ModerationSide = 'input' | 'output';

export const MODERATION_SIDES: readonly ModerationSide[] = ['input', 'output'];
export type ModerationMode = 'Score' | 'Block';

/** What gw knows of one side's moderation. */
export interface ModerationSideRecord {
  mode: ModerationMode;
  /** The provider's results; undefined when its answer had none for this side. */
  verdict?: ModerationVerdict;
  /** Why there are no results (the provider's moderation error, or none given). */
  missing?: string;
}

/** The moderation of one request (the LLM record's, for the access log and CEL). */
export type InlineModerationRecord = Partial<Record<ModerationSide, ModerationSideRecord>>;

/** The record as the access log writes it: `input(Block)=pass hate:0.010,violence:0.020; output(Score)=flagged(violence) ...`. */
export function inlineModerationText(record: InlineModerationRecord): string {
  return MODERATION_SIDES.flatMap((side) => {
    const each = record[side];
    if (each === undefined) return [];
    const head = `${side}(${each.mode})`;
    if (each.verdict === undefined) return [`${head}=unavailable: ${each.missing}`];
    const outcome = each.verdict.flagged ? `flagged(${each.verdict.categories.join(',')})` : 'pass';
    const scores = Object.entries(each.verdict.scores)
      .map(([name, score]) => `${name}:${score.toFixed(3)}`)
      .join(',');
    return [`${head}=${outcome}${scores === '' ? '' : ` ${scores}`}`];
  }).join('; ');
}

/** The record as CEL's `llm.moderation` gives it: per side, `flagged`, `categories` and `scores`. */
export function inlineModerationVariable(record: InlineModerationRecord): Record<string, unknown> {
  const variable: Record<string, unknown> = {};
  for (const side of MODERATION_SIDES) {
    const verdict = record[side]?.verdict;
    if (verdict !== undefined)
      variable[side] = { flagged: verdict.flagged, categories: verdict.categories, scores: verdict.scores };
  }
  return variable;
}
