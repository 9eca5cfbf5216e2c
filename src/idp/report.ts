// What the procedure tells its user as it goes: one line per object it looked at, saying whether
// it was created, updated, left unchanged, removed or skipped, and why where that helps.

// checked: read only (a sign-in, a document), nothing to change.
export type Status = 'created' | 'updated' | 'unchanged' | 'removed' | 'skipped' | 'checked';

export interface Outcome {
  step: string;
  /** What was looked at: "client scope mcp-gateway", "user alice"… */
  object: string;
  status: Status;
  detail?: string;
}

export interface Reporter {
  outcome(outcome: Outcome): void;
  /** Something worth knowing that changes nothing (a renewed admin token). */
  note(text: string): void;
  /** Something the user must know (anonymous registration opened up, an unexpected issuer). */
  warning(text: string): void;
}

export function formatOutcome(outcome: Outcome): string {
  const detail = outcome.detail ? ` (${outcome.detail})` : '';
  return `${outcome.status.padEnd(9)} ${outcome.step}: ${outcome.object}${detail}`;
}

/** A reporter that keeps the outcomes and passes every line on as text. */
export class CollectingReporter implements Reporter {
  readonly outcomes: Outcome[] = [];
  readonly #write: (line: string) => void;

  constructor(write: (line: string) => void) {
    this.#write = write;
  }

  outcome(outcome: Outcome): void {
    this.outcomes.push(outcome);
    this.#write(formatOutcome(outcome));
  }

  note(text: string): void {
    this.#write(`note: ${text}`);
  }

  warning(text: string): void {
    this.#write(`warning: ${text}`);
  }
}
