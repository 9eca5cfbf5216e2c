// The client's tokens a token exchange presents (subject and actor tokens): read where their
// AuthorizationExtractionLocation says — by the inbound policies' own extraction code
// (policies/auth/credential-location.ts), from the client's headers, the request's query, a
// cookie or a CEL expression over the request — and kept from the backend: a header or query
// parameter that carried one is removed from the upstream request (the client's Authorization
// always is). A cookie or an expression's source is left as it is.
import type { AuthorizationExtractionLocation } from '../../../../api/types/credential-locations.ts';
import { type CredentialSource, compileCredentialLocation } from '../../../policies/auth/credential-location.ts';
import { isProblem } from '../../../policies/types.ts';
import type { CelVariables } from '../../../telemetry/cel-context.ts';
import { AuthConfigError } from '../errors.ts';
import { takeHeader } from '../headers.ts';
import type { AuthIncoming } from '../kind.ts';
import type { AuthTarget } from '../location.ts';

export interface ClientTokenReader {
  /** The token, or undefined when the request carries none. */
  read(target: AuthTarget, incoming: AuthIncoming): string | undefined;
  /** Removes the token's header or query parameter from the upstream request. */
  remove(target: AuthTarget): void;
  /** Whether the token is read from (and removed from) the query: the upstream query must be at hand. */
  readonly inQuery: boolean;
}

/** The variables of a request whose caller gives none: an expression over them yields no token. */
const NO_VARIABLES = {} as CelVariables;

/** A reader of the token at `location` (default: the Authorization header's Bearer token). */
export function compileClientToken(
  location: AuthorizationExtractionLocation | undefined,
  field: string,
): ClientTokenReader | AuthConfigError {
  const compiled = compileCredentialLocation(location, 'Bearer', field);
  if (isProblem(compiled)) return new AuthConfigError(compiled.field, compiled.message);
  const header = location === undefined ? 'authorization' : location.header?.name.toLowerCase();
  const queryParameter = location?.queryParameter?.name;
  return {
    inQuery: queryParameter !== undefined,
    read: (target, incoming) => {
      const source: CredentialSource = {
        forward: { headers: incoming.headers, query: queryParameter === undefined ? '' : target.query.toString() },
        cel: () => incoming.variables?.() ?? NO_VARIABLES,
      };
      return compiled.read(source);
    },
    remove: (target) => {
      if (header !== undefined) takeHeader(target.headers, header);
      if (queryParameter !== undefined) target.query.delete(queryParameter);
    },
  };
}
