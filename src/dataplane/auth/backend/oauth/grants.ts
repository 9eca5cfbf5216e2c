// The token requests gw sends to an OAuth 2.0 token endpoint: an RFC 8693 token exchange or an
// RFC 7523 JWT bearer grant, form-encoded. Token type names of the API (OAuthTokenType) become
// the URNs of RFC 8693 section 3 and of the Identity Assertion JWT Authorization Grant draft
// (ID-JAG); any other value is an absolute URI and is sent as it is.

export const GRANT_TOKEN_EXCHANGE = 'urn:ietf:params:oauth:grant-type:token-exchange';
export const GRANT_JWT_BEARER = 'urn:ietf:params:oauth:grant-type:jwt-bearer';

const TOKEN_TYPE_URNS: Readonly<Record<string, string>> = {
  AccessToken: 'urn:ietf:params:oauth:token-type:access_token',
  Jwt: 'urn:ietf:params:oauth:token-type:jwt',
  IdToken: 'urn:ietf:params:oauth:token-type:id_token',
  IdJag: 'urn:ietf:params:oauth:token-type:id-jag',
};

/** The URN of a token type name, or the value itself (a custom absolute URI). */
export function tokenTypeUrn(type: string): string {
  return Object.hasOwn(TOKEN_TYPE_URNS, type) ? TOKEN_TYPE_URNS[type]! : type;
}

/** The token type of an ID-JAG (what the identity provider issues in a Cross App Access exchange). */
export const ID_JAG_TOKEN_TYPE = TOKEN_TYPE_URNS.IdJag!;

/**
 * Parameters gw sets itself; additionalParams may not name them (one would be sent twice, and a
 * token endpoint may read either).
 */
export const RESERVED_PARAMS: ReadonlySet<string> = new Set([
  'grant_type',
  'subject_token',
  'subject_token_type',
  'actor_token',
  'actor_token_type',
  'assertion',
  'audience',
  'resource',
  'scope',
  'requested_token_type',
  'client_id',
  'client_secret',
  'client_assertion',
  'client_assertion_type',
]);

/** What a token request asks for, beside the token it presents. */
export interface TokenRequestTarget {
  audiences?: readonly string[] | undefined;
  scopes?: readonly string[] | undefined;
  resources?: readonly string[] | undefined;
  /** [name, value] pairs computed per request (additionalParams). */
  extra?: readonly (readonly [string, string])[] | undefined;
}

function appendTarget(form: URLSearchParams, target: TokenRequestTarget): URLSearchParams {
  for (const audience of target.audiences ?? []) form.append('audience', audience);
  // RFC 6749 section 3.3: one parameter, space-delimited.
  if (target.scopes !== undefined && target.scopes.length > 0) form.append('scope', target.scopes.join(' '));
  for (const resource of target.resources ?? []) form.append('resource', resource);
  for (const [name, value] of target.extra ?? []) form.append(name, value);
  return form;
}

export interface TokenExchangeRequest extends TokenRequestTarget {
  subjectToken: string;
  /** A URN (tokenTypeUrn). */
  subjectTokenType: string;
  actor?: { token: string; type: string } | undefined;
  /** A URN; omitted when unset (RFC 8693 makes it optional). */
  requestedTokenType?: string | undefined;
}

/** The form of an RFC 8693 token exchange (section 2.1). */
export function tokenExchangeForm(request: TokenExchangeRequest): URLSearchParams {
  const form = new URLSearchParams();
  form.append('grant_type', GRANT_TOKEN_EXCHANGE);
  form.append('subject_token', request.subjectToken);
  form.append('subject_token_type', request.subjectTokenType);
  if (request.actor !== undefined) {
    form.append('actor_token', request.actor.token);
    form.append('actor_token_type', request.actor.type);
  }
  if (request.requestedTokenType !== undefined) form.append('requested_token_type', request.requestedTokenType);
  return appendTarget(form, request);
}

/** The form of an RFC 7523 JWT bearer authorization grant (section 2.1): the token is the assertion. */
export function jwtBearerForm(assertion: string, target: TokenRequestTarget): URLSearchParams {
  const form = new URLSearchParams();
  form.append('grant_type', GRANT_JWT_BEARER);
  form.append('assertion', assertion);
  return appendTarget(form, target);
}
