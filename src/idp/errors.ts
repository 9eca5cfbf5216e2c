// A failure of the procedure: it names the step, the call (method and URL) and Keycloak's status
// (or that no answer came), and the procedure stops there.

export class SetupError extends Error {
  /** The step of the procedure, as reported ("client scope", "users"…). */
  readonly step: string;
  /** "METHOD URL" of the call that failed. */
  readonly call: string;
  /** Keycloak's HTTP status; undefined when no answer came. */
  readonly status: number | undefined;
  readonly detail: string;
  /** What the failure left half-made (a client scope without all its mappers), when it did. */
  halfMade: string | undefined;

  constructor(step: string, call: string, status: number | undefined, detail: string) {
    const answered = status === undefined ? 'got no answer' : `answered ${status}`;
    super(`step "${step}": ${call} ${answered}: ${detail}`);
    this.step = step;
    this.call = call;
    this.status = status;
    this.detail = detail;
    this.halfMade = undefined;
  }
}
