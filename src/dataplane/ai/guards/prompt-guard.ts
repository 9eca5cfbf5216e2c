// AIPromptGuard compiled once per endpoint and applied per exchange: its request guards to the
// client's request before it is planned (so a mask reaches whatever the provider receives,
// translated or not), its response guards to a whole (non-streamed) answer in the client's
// format before it is written, and with streaming: Enabled its response guards to a streamed
// answer as it passes (stream-guard.ts). Guards run in their list order, each on what the
// previous left; the first rejection stops the rest. Each kind compiles into a Guard (guard.ts)
// through GUARD_KINDS; a kind gw does not serve is refused by the enforcement registry before a
// configuration reaches the data plane, and here too, naming it. A guard service's failure
// follows the guard's failure mode: FailClosed (the default) refuses with 503, FailOpen passes.
import type { AIPromptGuard, CustomResponse } from '../../../api/types/ai.ts';
import type { ApiFormat, JsonObject } from '../formats/types.ts';
import type { ClientFormat } from '../providers/index.ts';
import { alphaModerationGuard } from './alpha-moderation-guard.ts';
import {
  type Guard,
  type GuardCall,
  type GuardCompileInput,
  type GuardCompiler,
  type GuardConfigProblem,
  GuardFailure,
  type GuardKind,
  type GuardVerdict,
  isGuardConfigProblem,
} from './guard.ts';
import { modelArmorGuard } from './model-armor-guard.ts';
import type { GuardOutcome } from './outcome.ts';
import { regexGuard } from './regex-guard.ts';
import { StreamGuard } from './stream-guard.ts';
import { collectTexts, type GuardSide, guardsRead, visitTexts } from './texts.ts';
import { webhookGuard } from './webhook-guard.ts';
import { zetaGuardrailsGuard } from './zeta-guardrails-guard.ts';

export const DEFAULT_REQUEST_REJECTION = 'The request was rejected due to inappropriate content';
export const DEFAULT_RESPONSE_REJECTION = 'The response was rejected due to inappropriate content';

/** The answer of a FailClosed guard that could not check (the reason goes to the log, not the client). */
export const GUARD_FAILURE_STATUS = 503;
export const guardFailureMessage = (side: GuardSide): string =>
  `The ${side} could not be checked by a prompt guard service, so it was refused; try again later.`;

/** The compiler of each guard kind gw serves; a kind missing here is refused where it is configured. */
const GUARD_KINDS: { readonly [K in GuardKind]?: GuardCompiler<never> } = {
  regex: regexGuard,
  cloudtwoModelArmor: modelArmorGuard,
  alphaModeration: alphaModerationGuard,
  webhook: webhookGuard,
  zetaGuardrails: zetaGuardrailsGuard,
};

export interface CompiledGuard {
  index: number;
  guard: Guard;
  rejection: { status: number; message: string };
}

/** What the guards of one side decided: the body to go on with, or the answer of a rejection. */
export type GuardResult =
  | { rejected?: undefined; body: JsonObject; outcomes: GuardOutcome[] }
  | { rejected: { status: number; message: string }; outcomes: GuardOutcome[] };

/** The request a side's guards check for: what guard services are told, and when to stop. */
export type GuardRequestContext = Omit<GuardCall, 'side' | 'texts'>;

export interface CompiledPromptGuards {
  readonly hasRequestGuards: boolean;
  readonly hasResponseGuards: boolean;
  /** Request guards over a client request of `format`. The input body is not modified. */
  guardRequest(
    body: JsonObject,
    format: ClientFormat,
    request: GuardRequestContext,
  ): GuardResult | Promise<GuardResult>;
  /** Response guards over an answer in the client's `format`. The input body is not modified. */
  guardResponse(
    body: JsonObject,
    format: ClientFormat,
    request: GuardRequestContext,
  ): GuardResult | Promise<GuardResult>;
  /**
   * The guard of one streamed answer in the client's `format`, for `request`: undefined unless
   * streaming is Enabled and a response guard reads streams (regex Reject guards, and guards that
   * call a service, in windows; regex Mask guards do not change streamed content).
   */
  streamGuard(format: ClientFormat, request: GuardRequestContext): StreamGuard | undefined;
}

/** Compiles `ai.promptGuard` (found at `path`), or the first field it cannot serve. */
export function compilePromptGuards(
  promptGuard: AIPromptGuard | undefined,
  path: string,
  input: GuardCompileInput,
): CompiledPromptGuards | GuardConfigProblem | undefined {
  if (promptGuard === undefined) return undefined;
  const request = compileSide(promptGuard.request ?? [], `${path}.request`, DEFAULT_REQUEST_REJECTION, input);
  if (!Array.isArray(request)) return request;
  const response = compileSide(promptGuard.response ?? [], `${path}.response`, DEFAULT_RESPONSE_REJECTION, input);
  if (!Array.isArray(response)) return response;
  if (request.length === 0 && response.length === 0) return undefined;
  const streaming = promptGuard.streaming === 'Enabled';
  return new PromptGuards(request, response, streaming);
}

function compileSide(
  guards: ReadonlyArray<{ response?: CustomResponse } & Record<string, unknown>>,
  path: string,
  defaultMessage: string,
  input: GuardCompileInput,
): CompiledGuard[] | GuardConfigProblem {
  const compiled: CompiledGuard[] = [];
  for (let index = 0; index < guards.length; index++) {
    const entry = guards[index]!;
    const at = `${path}[${index}]`;
    const kind = Object.keys(entry).find((key) => key !== 'response' && entry[key] !== undefined) ?? 'guard';
    const compiler = GUARD_KINDS[kind as GuardKind] as GuardCompiler<unknown> | undefined;
    if (compiler === undefined) return { path: `${at}.${kind}`, message: `${kind} guards are not served yet.` };
    const guard = compiler(entry[kind], `${at}.${kind}`, input);
    if (isGuardConfigProblem(guard)) return guard;
    if (guard.ownRejectionAnswer && entry.response !== undefined)
      return {
        path: `${at}.response`,
        message: `a ${kind} guard rejects with the status and message its service answers, so response would never be used; remove it.`,
      };
    compiled.push({
      index,
      guard,
      rejection: {
        status: entry.response?.statusCode ?? 403,
        message: entry.response?.message ?? defaultMessage,
      },
    });
  }
  return compiled;
}

class PromptGuards implements CompiledPromptGuards {
  readonly #request: CompiledGuard[];
  readonly #response: CompiledGuard[];
  readonly #streamGuards: CompiledGuard[];
  readonly hasRequestGuards: boolean;
  readonly hasResponseGuards: boolean;

  constructor(request: CompiledGuard[], response: CompiledGuard[], streaming: boolean) {
    this.#request = request;
    this.#response = response;
    // Regex Reject guards scan each event, guards that call a service check windows; a regex Mask
    // guard does not read streams (Mask does not change them).
    this.#streamGuards = streaming ? response.filter((each) => each.guard.skipsStreams !== true) : [];
    this.hasRequestGuards = request.length > 0;
    this.hasResponseGuards = response.length > 0;
  }

  guardRequest(body: JsonObject, format: ClientFormat, request: GuardRequestContext) {
    return runGuards(this.#request, body, format, 'request', request);
  }

  guardResponse(body: JsonObject, format: ClientFormat, request: GuardRequestContext) {
    return runGuards(this.#response, body, format, 'response', request);
  }

  streamGuard(format: ClientFormat, request: GuardRequestContext): StreamGuard | undefined {
    if (this.#streamGuards.length === 0 || !guardsRead(format, 'response')) return undefined;
    return new StreamGuard(this.#streamGuards, format as ApiFormat, request, {
      status: GUARD_FAILURE_STATUS,
      message: guardFailureMessage('response'),
    });
  }
}

/**
 * Runs `guards` in order over the texts of `body`. Synchronous while every guard answers at once
 * (regex); from the first guard that answers with a promise on, the rest follow it.
 */
function runGuards(
  guards: readonly CompiledGuard[],
  body: JsonObject,
  format: ClientFormat,
  side: GuardSide,
  request: GuardRequestContext,
): GuardResult | Promise<GuardResult> {
  const outcomes: GuardOutcome[] = [];
  if (guards.length === 0 || !guardsRead(format, side)) return { body, outcomes };
  const from = (start: number, current: JsonObject): GuardResult | Promise<GuardResult> => {
    for (let i = start; i < guards.length; i++) {
      const each = guards[i]!;
      const texts = collectTexts(current, format, side);
      const started = performance.now();
      let verdict: GuardVerdict | Promise<GuardVerdict>;
      try {
        verdict = each.guard.check({ ...request, side, texts });
      } catch (error) {
        verdict = Promise.reject(error);
      }
      if (verdict instanceof Promise) {
        return verdict.then(
          (answer) => {
            const next = settleVerdict(each, answer, current, format, side, started, outcomes);
            return next.rejected !== undefined ? next.result : from(i + 1, next.body);
          },
          (error: unknown) => {
            const failed = settleFailure(each, error, side, started, outcomes);
            return failed !== undefined ? { rejected: failed, outcomes } : from(i + 1, current);
          },
        );
      }
      const next = settleVerdict(each, verdict, current, format, side, started, outcomes);
      if (next.rejected !== undefined) return next.result;
      current = next.body;
    }
    return { body: current, outcomes };
  };
  return from(0, body);
}

type Settled = { rejected: true; result: GuardResult } | { rejected?: undefined; body: JsonObject };

function settleVerdict(
  each: CompiledGuard,
  verdict: GuardVerdict,
  current: JsonObject,
  format: ClientFormat,
  side: GuardSide,
  started: number,
  outcomes: GuardOutcome[],
): Settled {
  const outcome: GuardOutcome = {
    side,
    index: each.index,
    kind: each.guard.kind,
    action: verdict.action,
    ms: 0,
    startedAt: started,
  };
  if (verdict.reason !== undefined) outcome.reason = verdict.reason;
  if (verdict.action !== 'pass' && verdict.matched !== undefined && verdict.matched.length > 0)
    outcome.matched = verdict.matched;
  let body = current;
  if (verdict.action === 'mask') {
    // The masking walk visits the same texts in the same order as collectTexts, on a copy.
    const { replacements } = verdict;
    body = structuredClone(current);
    let slot = 0;
    visitTexts(body, format, side, () => replacements[slot++]);
  }
  outcome.ms = performance.now() - started;
  outcomes.push(outcome);
  if (verdict.action === 'reject')
    return { rejected: true, result: { rejected: verdict.answer ?? each.rejection, outcomes } };
  return { body };
}

/** A guard that could not check: its outcome, and the rejection when it fails closed. */
function settleFailure(
  each: CompiledGuard,
  error: unknown,
  side: GuardSide,
  started: number,
  outcomes: GuardOutcome[],
): { status: number; message: string } | undefined {
  const reason = error instanceof GuardFailure ? error.message : 'the guard failed unexpectedly';
  const closed = each.guard.failureMode === 'FailClosed';
  outcomes.push({
    side,
    index: each.index,
    kind: each.guard.kind,
    action: closed ? 'reject' : 'pass',
    error: reason,
    errorType: error instanceof GuardFailure ? error.type : '_OTHER',
    ms: performance.now() - started,
    startedAt: started,
  });
  return closed ? { status: GUARD_FAILURE_STATUS, message: guardFailureMessage(side) } : undefined;
}
