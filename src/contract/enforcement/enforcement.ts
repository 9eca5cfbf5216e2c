// What the data plane does with one field of the API at one place (places.ts): it is either
// enforced — a named module applies it — or refused, with the reason a user reads in the status
// of the object that carries it. There is no third answer: a field gw accepts and ignores is the
// defect this registry exists to prevent (issue 16). registry.ts holds the declarations.

export type Enforcement = Enforced | Refused;

export interface Enforced {
  readonly kind: 'enforced';
  /**
   * The module that applies the field, repo-relative ('src/dataplane/policies/auth/api-key.ts').
   * Omitted: the nearest enclosing field's module (a place's top-level fields always name one).
   */
  readonly by?: string;
  /** What a user should know about how it is applied (shown in docs/enforcement.md). */
  readonly note?: string;
  /** Values of an enum field (or of the enums in a list or map) that are refused: value -> reason. */
  readonly refusedValues?: Readonly<Record<string, string>>;
}

export interface Refused {
  readonly kind: 'refused';
  /** Why, and what to do instead; written for the user who set the field. */
  readonly reason: string;
}

export function enforced(
  by?: string,
  options: { note?: string; refusedValues?: Record<string, string> } = {},
): Enforced {
  return Object.freeze({ kind: 'enforced', ...(by !== undefined && { by }), ...options });
}

export function refused(reason: string): Refused {
  return Object.freeze({ kind: 'refused', reason });
}
