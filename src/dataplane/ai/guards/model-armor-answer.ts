// Reads an answer of Google Cloud Model Armor's sanitizeUserPrompt / sanitizeModelResponse (its
// REST form: a SanitizationResult in proto JSON, camelCase) into what a guard acts on: the filters
// that matched and block, or the text Sensitive Data Protection de-identified, or nothing.
// Google's overall filterMatchState and each filter's own matchState are both read, and a match in
// either blocks (agentgateway reads only the per-filter states; Google's samples only the overall
// one). invocationResult FAILURE, or PARTIAL unless the template ignores partial failures, is a
// check that could not be made (decision 0029).
import { isPlainObject } from '../../../util/values.ts';
import { GuardFailure } from './guard.ts';

const MATCH_FOUND = 'MATCH_FOUND';

/** What one sanitize call found. */
export interface ModelArmorReading {
  /** The filters whose match refuses the text: `rai:dangerous`, `pi_and_jailbreak`, `sdp:US_SOCIAL_SECURITY_NUMBER`... */
  blocking: string[];
  /**
   * The text as Sensitive Data Protection de-identified it (the template's de-identify template
   * replaced what it found), when that is the filter that matched; with `blocking` empty, a mask.
   */
  deidentified?: { text: string; infoTypes: string[] };
}

type Json = Record<string, unknown>;

const object = (value: unknown): Json | undefined => (isPlainObject(value) ? (value as Json) : undefined);
const matched = (result: Json | undefined): boolean => result?.matchState === MATCH_FOUND;
const strings = (value: unknown): string[] =>
  Array.isArray(value) ? value.filter((each): each is string => typeof each === 'string' && each !== '') : [];

/** Reads `answer` (the parsed JSON of a 2xx answer of `service`); throws GuardFailure when it says no check was made. */
export function readSanitizeAnswer(answer: unknown, service: string): ModelArmorReading {
  const result = object(object(answer)?.sanitizationResult);
  if (result === undefined) throw new GuardFailure(`${service} answered without a sanitizationResult`);
  const filterResults = result.filterResults ?? {};
  if (!isPlainObject(filterResults))
    throw new GuardFailure(`${service} answered with filterResults that is not a map of filter results`);
  const reading: ModelArmorReading = { blocking: [] };
  for (const [filter, entry] of Object.entries(filterResults as Json)) readFilter(filter, object(entry), reading);
  if (result.filterMatchState === MATCH_FOUND && reading.blocking.length === 0 && reading.deidentified === undefined)
    reading.blocking.push('filterMatchState');
  const found = reading.blocking.length > 0 || reading.deidentified !== undefined;
  const invocation = result.invocationResult;
  const metadata = object(result.sanitizationMetadata);
  const errorCode = metadata?.errorCode === undefined ? '' : `, error code ${String(metadata.errorCode)}`;
  // A match stands even when other filters did not run: the text is refused either way.
  if (!found && invocation === 'FAILURE')
    throw new GuardFailure(`${service} ran none of its filters (invocationResult FAILURE${errorCode})`);
  if (!found && invocation === 'PARTIAL' && metadata?.ignorePartialInvocationFailures !== true)
    throw new GuardFailure(
      `${service} did not run all of its filters (invocationResult PARTIAL${errorCode}); the template does not ignore partial failures`,
    );
  return reading;
}

/** One entry of filterResults (a FilterResult: one of its *FilterResult fields is set). */
function readFilter(filter: string, entry: Json | undefined, reading: ModelArmorReading): void {
  if (entry === undefined) return;
  for (const [field, value] of Object.entries(entry)) {
    const result = object(value);
    if (result === undefined) continue;
    if (field === 'sdpFilterResult') {
      readSdp(filter, result, reading);
      continue;
    }
    if (!matched(result)) continue;
    // Responsible AI names its categories (dangerous, harassment, hate_speech, sexually_explicit).
    const categories = Object.entries(object(result.raiFilterTypeResults) ?? {})
      .filter(([, typeResult]) => matched(object(typeResult)))
      .map(([category]) => `${filter}:${category}`);
    reading.blocking.push(...(categories.length > 0 ? categories : [filter]));
  }
}

/**
 * Sensitive Data Protection: an inspect match (the basic configuration, or an advanced one
 * without a de-identify template) blocks; a de-identify match carries the de-identified text.
 */
function readSdp(filter: string, sdp: Json, reading: ModelArmorReading): void {
  const inspect = object(sdp.inspectResult);
  if (matched(inspect)) {
    const infoTypes = (Array.isArray(inspect?.findings) ? inspect.findings : [])
      .map((finding) => object(finding)?.infoType)
      .filter((type): type is string => typeof type === 'string' && type !== '');
    reading.blocking.push(
      ...(infoTypes.length > 0 ? [...new Set(infoTypes)].map((type) => `${filter}:${type}`) : [filter]),
    );
  }
  const deidentify = object(sdp.deidentifyResult);
  if (!matched(deidentify)) return;
  const text = object(deidentify?.data)?.text;
  const infoTypes = strings(deidentify?.infoTypes);
  // Without text (a byte item) there is nothing to mask with: the match blocks.
  if (typeof text !== 'string') reading.blocking.push(filter);
  else reading.deidentified = { text, infoTypes: infoTypes.map((type) => `${filter}:${type}`) };
}
