// Why gw could not obtain the credential a request to a backend needs: a token endpoint that is
// down or refuses gw, STS refusing a role, a session name an expression made invalid. The proxy
// answers it in the client's format (docs/backend-auth.md, "When a credential cannot be had");
// the message is written for the client and never carries a secret, a token or an endpoint's
// answer — those go to the log, without secrets, through `detail`.

export class BackendCredentialError extends Error {
  override name = 'BackendCredentialError';
  /** 401 when the client's own token was refused by the token endpoint, 400 for a request a CEL
   * expression made invalid, else 502: gw could not get a credential. */
  readonly status: number;
  /** For the log: what failed (endpoint, status, OAuth error code); never a secret. */
  readonly detail: string;
  constructor(status: number, message: string, detail = message) {
    super(message);
    this.status = status;
    this.detail = detail;
  }

  /** The access log's `error`: the message, and the detail when it says more. */
  get logText(): string {
    return this.detail === this.message ? this.message : `${this.message} ${this.detail}`;
  }
}

/** The credential error a failure of `kind` becomes: unknown failures are gw's own (502). */
export function credentialFailure(error: unknown, kind: string): BackendCredentialError {
  if (error instanceof BackendCredentialError) return error;
  const detail = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
  return new BackendCredentialError(502, `gw could not obtain ${kind} credentials for the backend.`, detail);
}
