// AIPromptGuard compiled once per endpoint and applied per exchange: its request guards to the
// client's request before it is planned (so a mask reaches whatever the provider receives,
// translated or not), its response guards to a whole (non-streamed) answer in the client's
// format before it is written, and with streaming: Enabled its Reject response guards to a
// streamed answer as it passes (stream-guard.ts). Guards run in their list order, each on what the previous left;
// the first rejection stops the rest. Only regex guards are served (the other kinds are refused
// by the enforcement registry before a configuration reaches the data plane; a configuration
// that has one anyway is refused here too, naming it).
import type { AIPromptGuard, CustomResponse, Regex } from '../../../api/types/ai.ts';
import type { ApiFormat, JsonObject } from '../formats/types.ts';
import type { ClientFormat } from '../providers/index.ts';
import type { GuardOutcome } from './outcome.ts';
import { type CompiledRegexGuard, compileRegexGuard, RegexGuardConfigError } from './regex-guard.ts';
import { StreamGuard } from './stream-guard.ts';
import { type GuardSide, guardsRead, visitTexts } from './texts.ts';

export const DEFAULT_REQUEST_REJECTION = 'The request was rejected due to inappropriate content';
export const DEFAULT_RESPONSE_REJECTION = 'The response was rejected due to inappropriate content';

interface CompiledGuard {
  index: number;
  regex: CompiledRegexGuard;
  rejection: { status: number; message: string };
}

/** What the guards of one side decided: the body to go on with, or the answer of a rejection. */
export type GuardResult =
  | { rejected?: undefined; body: JsonObject; outcomes: GuardOutcome[] }
  | { rejected: { status: number; message: string }; outcomes: GuardOutcome[] };

export interface CompiledPromptGuards {
  readonly hasRequestGuards: boolean;
  readonly hasResponseGuards: boolean;
  /** Request guards over a client request of `format`. The input body is not modified. */
  guardRequest(body: JsonObject, format: ClientFormat): GuardResult;
  /** Response guards over an answer in the client's `format`. The input body is not modified. */
  guardResponse(body: JsonObject, format: ClientFormat): GuardResult;
  /**
   * The guard of one streamed answer in the client's `format`: undefined unless streaming is
   * Enabled and a response guard rejects (Mask does not change streamed content).
   */
  streamGuard(format: ClientFormat): StreamGuard | undefined;
}

/** A guard that cannot be compiled: the field under the provider's policies and why. */
export interface PromptGuardConfigError {
  path: string;
  message: string;
}

/** Compiles `ai.promptGuard` (found at `path`), or the first field it cannot serve. */
export function compilePromptGuards(
  promptGuard: AIPromptGuard | undefined,
  path: string,
): CompiledPromptGuards | PromptGuardConfigError | undefined {
  if (promptGuard === undefined) return undefined;
  const request = compileSide(promptGuard.request ?? [], `${path}.request`, DEFAULT_REQUEST_REJECTION);
  if (!Array.isArray(request)) return request;
  const response = compileSide(promptGuard.response ?? [], `${path}.response`, DEFAULT_RESPONSE_REJECTION);
  if (!Array.isArray(response)) return response;
  if (request.length === 0 && response.length === 0) return undefined;
  return new PromptGuards(request, response, promptGuard.streaming === 'Enabled');
}

function compileSide(
  guards: ReadonlyArray<{ regex?: Regex; response?: CustomResponse } & Record<string, unknown>>,
  path: string,
  defaultMessage: string,
): CompiledGuard[] | PromptGuardConfigError {
  const compiled: CompiledGuard[] = [];
  for (let index = 0; index < guards.length; index++) {
    const guard = guards[index]!;
    const at = `${path}[${index}]`;
    if (guard.regex === undefined) {
      const kind = Object.keys(guard).find((key) => key !== 'response') ?? 'guard';
      return { path: `${at}.${kind}`, message: `${kind} guards are not served yet; only regex guards are.` };
    }
    const regex = compileRegexGuard(guard.regex, `${at}.regex`);
    if (regex instanceof RegexGuardConfigError) return { path: regex.field, message: regex.message };
    compiled.push({
      index,
      regex,
      rejection: {
        status: guard.response?.statusCode ?? 403,
        message: guard.response?.message ?? defaultMessage,
      },
    });
  }
  return compiled;
}

class PromptGuards implements CompiledPromptGuards {
  readonly #request: CompiledGuard[];
  readonly #response: CompiledGuard[];
  readonly hasRequestGuards: boolean;
  readonly hasResponseGuards: boolean;

  readonly #streamRejects: CompiledGuard[];

  constructor(request: CompiledGuard[], response: CompiledGuard[], streaming: boolean) {
    this.#request = request;
    this.#response = response;
    this.#streamRejects = streaming ? response.filter((guard) => guard.regex.action === 'Reject') : [];
    this.hasRequestGuards = request.length > 0;
    this.hasResponseGuards = response.length > 0;
  }

  guardRequest(body: JsonObject, format: ClientFormat): GuardResult {
    return runGuards(this.#request, body, format, 'request');
  }

  guardResponse(body: JsonObject, format: ClientFormat): GuardResult {
    return runGuards(this.#response, body, format, 'response');
  }

  streamGuard(format: ClientFormat): StreamGuard | undefined {
    if (this.#streamRejects.length === 0 || !guardsRead(format, 'response')) return undefined;
    return new StreamGuard(this.#streamRejects, format as ApiFormat);
  }
}

function runGuards(guards: CompiledGuard[], body: JsonObject, format: ClientFormat, side: GuardSide): GuardResult {
  const outcomes: GuardOutcome[] = [];
  if (guards.length === 0 || !guardsRead(format, side)) return { body, outcomes };
  let current = body;
  for (const guard of guards) {
    const started = performance.now();
    // First a reading walk: most texts hold nothing, and the body is copied only when one does.
    const replacements: Array<string | undefined> = [];
    const matched = new Set<string>();
    let rejectedBy: string | undefined;
    visitTexts(current, format, side, (text) => {
      if (rejectedBy !== undefined) return undefined;
      const verdict = guard.regex.scan(text);
      if (verdict.kind === 'reject') rejectedBy = verdict.name;
      else if (verdict.kind === 'mask') {
        for (const name of verdict.names) matched.add(name);
        replacements.push(verdict.text);
        return undefined;
      }
      replacements.push(undefined);
      return undefined;
    });
    const outcome: GuardOutcome = { side, index: guard.index, kind: 'regex', action: 'pass', ms: 0 };
    if (rejectedBy !== undefined) {
      outcome.action = 'reject';
      outcome.matched = [rejectedBy];
      outcome.ms = performance.now() - started;
      outcomes.push(outcome);
      return { rejected: guard.rejection, outcomes };
    }
    if (matched.size > 0) {
      // The masking walk visits the same texts in the same order, on a copy.
      const masked = structuredClone(current);
      let slot = 0;
      visitTexts(masked, format, side, () => replacements[slot++]);
      current = masked;
      outcome.action = 'mask';
      outcome.matched = [...matched];
    }
    outcome.ms = performance.now() - started;
    outcomes.push(outcome);
  }
  return { body: current, outcomes };
}
