// A password held so that it cannot be printed by accident: String(), JSON.stringify and
// util.inspect all show "(hidden)". Only wireJson (the body sent to Keycloak) and reveal() give
// the value, and nothing that reaches the terminal calls them.

export const HIDDEN = '(hidden)';

export class Secret {
  readonly #value: string;

  constructor(value: string) {
    this.#value = value;
  }

  reveal(): string {
    return this.#value;
  }

  toString(): string {
    return HIDDEN;
  }

  toJSON(): string {
    return HIDDEN;
  }

  [Symbol.for('nodejs.util.inspect.custom')](): string {
    return HIDDEN;
  }
}

/** The JSON sent to Keycloak: secrets in `value` are written out. */
export function wireJson(value: unknown): string {
  return JSON.stringify(value, function reveal(this: Record<string, unknown>, key: string, replaced: unknown) {
    // toJSON has already turned a Secret into "(hidden)"; the holder still has the Secret itself.
    const original = this[key];
    return original instanceof Secret ? original.reveal() : replaced;
  });
}

/** A form body (application/x-www-form-urlencoded) with secrets written out. */
export function wireForm(fields: Record<string, string | Secret>): string {
  const form = new URLSearchParams();
  for (const [name, value] of Object.entries(fields)) form.set(name, value instanceof Secret ? value.reveal() : value);
  return form.toString();
}

/** `text` with every occurrence of the secrets' values replaced by "(hidden)" (for text Keycloak sent back). */
export function redact(text: string, secrets: readonly Secret[]): string {
  let result = text;
  for (const secret of secrets) {
    const value = secret.reveal();
    if (value !== '') result = result.split(value).join(HIDDEN);
  }
  return result;
}

/** JSON for the terminal: every secret shows as "(hidden)". */
export function displayJson(value: unknown): string {
  return JSON.stringify(value);
}
