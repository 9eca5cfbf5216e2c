// Where an inbound credential is read from (spec document 2, "Credential locations"): a header
// with an optional prefix, a query parameter, a cookie or a CEL expression; by default the
// Authorization header with the scheme's prefix ("Bearer " for API keys and JWTs, "Basic " for
// basic authentication), the scheme matched case-insensitively as HTTP auth schemes are. The
// inbound policies read a PolicyExchange; backend authentication reads the client's token to
// exchange (oauthTokenExchange, crossAppAccess subject and actor tokens) through the same code.
import type { AuthorizationExtractionLocation } from '../../../api/types/credential-locations.ts';
import { compileExpression, ExpressionError } from '../../cel/expression.ts';
import type { CelVariables } from '../../telemetry/cel-context.ts';
import type { PolicyExchange } from '../exchange.ts';
import type { PolicyProblem } from '../types.ts';

/** What a credential is read from: the request's headers and query, and its CEL variables (a PolicyExchange is one). */
export interface CredentialSource {
  readonly forward: {
    readonly headers: Readonly<Record<string, string | string[] | number | undefined>>;
    readonly query: string;
  };
  cel(): CelVariables;
}

export interface CredentialLocation {
  /** The credential, or undefined when the request carries none (an expression that fails carries none). */
  read(source: CredentialSource): string | undefined;
  /** Removes the credential from the request as it goes upstream (header or query parameter). */
  remove(exchange: PolicyExchange): void;
}

export function compileCredentialLocation(
  location: AuthorizationExtractionLocation | undefined,
  scheme: 'Bearer' | 'Basic',
  path: string,
): CredentialLocation | PolicyProblem {
  if (!location) return headerLocation('authorization', `${scheme} `, true);
  if (location.header) return headerLocation(location.header.name.toLowerCase(), location.header.prefix, false);
  if (location.queryParameter) return queryLocation(location.queryParameter.name);
  if (location.cookie) return cookieLocation(location.cookie.name);
  if (location.expression !== undefined) {
    const expression = compileExpression(location.expression);
    if (expression instanceof ExpressionError)
      return { field: `${path}.expression`, message: `the CEL expression does not compile: ${expression.message}` };
    return {
      read: (exchange) => {
        try {
          const value = expression.evaluate(exchange.cel());
          if (typeof value === 'string' && value !== '') return value;
          if (value instanceof Uint8Array && value.length > 0) return Buffer.from(value).toString('utf8');
          return undefined;
        } catch {
          return undefined;
        }
      },
      remove: () => undefined,
    };
  }
  return { field: path, message: 'set one of header, queryParameter, cookie or expression' };
}

function headerValue(source: CredentialSource, name: string): string | undefined {
  const value = source.forward.headers[name];
  if (value === undefined) return undefined;
  return Array.isArray(value) ? value[0] : String(value);
}

function headerLocation(name: string, prefix: string | undefined, caseInsensitivePrefix: boolean): CredentialLocation {
  const lowerPrefix = prefix?.toLowerCase();
  return {
    read: (exchange) => {
      const value = headerValue(exchange, name);
      if (value === undefined) return undefined;
      if (prefix === undefined) return value.trim() || undefined;
      const head = value.slice(0, prefix.length);
      if (caseInsensitivePrefix ? head.toLowerCase() !== lowerPrefix : head !== prefix) return undefined;
      return value.slice(prefix.length).trim() || undefined;
    },
    remove: (exchange) => {
      delete exchange.forward.headers[name];
    },
  };
}

function queryLocation(name: string): CredentialLocation {
  return {
    read: (exchange) => {
      if (exchange.forward.query === '') return undefined;
      return new URLSearchParams(exchange.forward.query).get(name) || undefined;
    },
    remove: (exchange) => {
      if (exchange.forward.query === '') return;
      const params = new URLSearchParams(exchange.forward.query);
      params.delete(name);
      exchange.forward.query = params.toString();
    },
  };
}

function cookieLocation(name: string): CredentialLocation {
  return {
    read: (exchange) => {
      const header = headerValue(exchange, 'cookie');
      if (header === undefined) return undefined;
      for (const pair of header.split(';')) {
        const equals = pair.indexOf('=');
        if (equals === -1 || pair.slice(0, equals).trim() !== name) continue;
        let value = pair.slice(equals + 1).trim();
        if (value.length >= 2 && value.startsWith('"') && value.endsWith('"')) value = value.slice(1, -1);
        try {
          return decodeURIComponent(value) || undefined;
        } catch {
          return value || undefined;
        }
      }
      return undefined;
    },
    remove: () => undefined,
  };
}
