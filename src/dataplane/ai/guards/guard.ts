// The seam every prompt guard kind plugs into (regex, webhook, alphaModeration, zetaGuardrails,
// cloudtwoModelArmor): a kind compiles its configuration into a Guard, and a Guard checks the
// texts of one side of an exchange — the request's messages or the answer — and says pass, mask
// (a replacement per text) or reject. prompt-guard.ts runs a side's guards in order, each on
// what the previous left; it never needs to know the kind. A guard that calls a service answers
// with a promise; one that does not (regex) answers at once, and the exchange stays synchronous.
import type { IncomingHttpHeaders } from 'node:http';
import type { FieldNamespaces } from '../../../contract/dataplane-config.ts';
import type { BackendCompileContext } from '../../backends/backend.ts';
import type { CelVariables } from '../../telemetry/cel-context.ts';
import type { GuardSide } from './outcome.ts';

/** One text a guard reads, with the role of the message it belongs to (`system`, `user`, `assistant`, `tool`...). */
export interface GuardText {
  readonly role: string;
  readonly text: string;
}

/** What one guard decided about the texts of one side. */
export type GuardVerdict =
  | { action: 'pass'; reason?: string }
  | {
      action: 'mask';
      /** The replacement of each text, by its place in GuardCall.texts; undefined keeps it. */
      replacements: ReadonlyArray<string | undefined>;
      /** What was masked (entity or category names), for the access log. */
      matched?: string[];
      reason?: string;
    }
  | {
      action: 'reject';
      /** What fired (entity, category or filter names), for the access log. */
      matched?: string[];
      reason?: string;
      /**
       * The answer the guard service chose (a webhook's reject status and body); without it the
       * guard's CustomResponse (or its default) answers.
       */
      answer?: { status: number; message: string };
    };

/** What a guard checks: one side's texts, and the request they belong to. */
export interface GuardCall {
  readonly side: GuardSide;
  readonly texts: readonly GuardText[];
  /** The client's request headers (a webhook forwards the ones it is told to). */
  readonly headers: IncomingHttpHeaders;
  /** The request's CEL variables (a webhook's computed headers). */
  readonly variables: CelVariables;
  /** Aborted when the client goes away: a guard service call stops with it. */
  readonly signal: AbortSignal;
}

export interface Guard {
  /** The guard kind, as the API names it (`regex`, `webhook`...): the access log's and telemetry's. */
  readonly kind: GuardKind;
  /**
   * What a failed check does (a guard service that cannot be reached, times out or answers what
   * gw cannot read): FailClosed refuses the request or response, FailOpen lets it through.
   */
  readonly failureMode: 'FailClosed' | 'FailOpen';
  /**
   * Whether its rejections always carry the service's own status and message (a webhook's): the
   * entry's CustomResponse would never answer, so setting one is refused rather than ignored.
   */
  readonly ownRejectionAnswer?: boolean;
  /** Checks the texts; a promise for a guard that calls a service. Throws (or rejects) GuardFailure when it cannot. */
  check(call: GuardCall): GuardVerdict | Promise<GuardVerdict>;
  /**
   * Checks a window of a streamed answer's text at once, for guards that can (regex, Reject
   * only): what fired, or undefined. Guards without it are asked through `check` (windowed).
   */
  scanStream?(window: string): string | undefined;
  /** Set when the guard does not read streamed answers at all (a regex Mask guard: Mask does not change streams). */
  readonly skipsStreams?: true;
  /**
   * The longest text one of scanStream's matches spans, when bounded: how much of a stream's
   * earlier text it needs to see again with new text (unset: stream-guard.ts's OVERLAP).
   */
  streamReach?: number;
}

export type GuardKind = 'regex' | 'webhook' | 'alphaModeration' | 'zetaGuardrails' | 'cloudtwoModelArmor';

/**
 * A check that could not be made: why, for the log and the access log (never sent to the client,
 * which gets the failure mode's answer), and `type`, what kind of failure in a few values for
 * metrics and traces (OpenTelemetry's error.type: `timeout`, `unreachable`, an HTTP status...).
 */
export class GuardFailure extends Error {
  readonly type: string;
  constructor(message: string, type = 'guard_failure') {
    super(message);
    this.type = type;
  }
}

/** Where a guard is compiled: the provider's namespace and the configuration (secrets, backends, pools). */
export interface GuardCompileInput {
  readonly namespace: string;
  readonly namespaces?: FieldNamespaces | undefined;
  readonly context: BackendCompileContext;
}

/** A guard configuration that cannot be served: the field (under the provider's policies) and why. */
export interface GuardConfigProblem {
  path: string;
  message: string;
}

/** Compiles one kind's configuration found at `path` (`ai.promptGuard.request[0].webhook`). */
export type GuardCompiler<T> = (config: T, path: string, input: GuardCompileInput) => Guard | GuardConfigProblem;

export function isGuardConfigProblem(value: Guard | GuardConfigProblem): value is GuardConfigProblem {
  return 'path' in value && 'message' in value && !('check' in value);
}
