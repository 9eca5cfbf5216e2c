// What one prompt guard did to one request or response: kept on the request's LLM record for
// the access log (`gw.ai.guards`), the guard metrics and the guard spans (telemetry/).

/** Which side of the exchange a guard inspects. */
export type GuardSide = 'request' | 'response';

export type GuardAction = 'pass' | 'mask' | 'reject';

export interface GuardOutcome {
  side: GuardSide;
  /** The guard's place in its list: promptGuard.request[i] / response[i]. */
  index: number;
  /** The guard kind, as the API names it (`regex`, `webhook`, `alphaModeration`...). */
  kind: string;
  action: GuardAction;
  /** The matches that fired: builtin entity names (`CREDIT_CARD`) and configured match names. */
  matched?: string[];
  /** Why, as the guard service said it (a webhook's reason). */
  reason?: string;
  /** Why the guard could not check (a service that failed); the action is then its failure mode's. */
  error?: string;
  /** What kind of failure `error` is, in a few values (GuardFailure.type; `_OTHER` for an unexpected one). */
  errorType?: string;
  /** Time the guard took, in milliseconds. */
  ms: number;
  /**
   * performance.now() when the check began (where its trace span starts); absent for a streamed
   * answer's guard, whose checks are spread over the stream.
   */
  startedAt?: number;
  /** How many windows of a streamed answer the guard checked (guards that call a service). */
  checks?: number;
}

/**
 * The outcomes as the access log writes them: `request[0].regex=mask(SSN) 0.012ms;
 * response[0].regex=pass 0.004ms`; a guard that checked a stream in windows says how many
 * (`response[1].webhook=pass 3 windows 41.250ms`).
 */
export function guardOutcomesText(outcomes: readonly GuardOutcome[]): string {
  return outcomes
    .map((outcome) => {
      const matched = outcome.matched && outcome.matched.length > 0 ? `(${outcome.matched.join(',')})` : '';
      const failed = outcome.error === undefined ? '' : ` failed: ${outcome.error}`;
      const windows = outcome.checks === undefined ? '' : ` ${outcome.checks} window${outcome.checks === 1 ? '' : 's'}`;
      return `${outcome.side}[${outcome.index}].${outcome.kind}=${outcome.action}${matched}${failed}${windows} ${outcome.ms.toFixed(3)}ms`;
    })
    .join('; ');
}
