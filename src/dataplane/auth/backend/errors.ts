// A backend auth configuration the data plane cannot use. The message names the field and the
// Secret, never a credential.

export class AuthConfigError extends Error {
  override name = 'AuthConfigError';
  /** Path inside the BackendAuth: `secretRef.key`, `credentials[2].location.cookie.name`, `jwtSign`. */
  readonly field: string;
  constructor(field: string, message: string) {
    super(`${field}: ${message}`);
    this.field = field;
  }
}
