// Backend authentication crossAppAccess (spec document 2, CrossAppAccessAuth; the Identity
// Assertion JWT Authorization Grant draft, "ID-JAG"): the user's token (an ID token by default)
// is exchanged at the identity provider (RFC 8693, requested_token_type id-jag, audience = the
// resource authorization server's issuer, with the resources and scopes asked for) for an
// identity assertion, which the resource authorization server then exchanges (RFC 7523
// jwt-bearer, with the scopes; the resources are bound into the assertion already) for the
// backend's access token. Each token endpoint has its own client authentication. The access token
// is cached by the user's token: one pair of exchanges serves every request with the same one.
import type { CrossAppAccessAuth, CrossAppAccessEndpoint } from '../../../../api/types/backend-auth.ts';
import { BackendCredentialError } from '../credential-error.ts';
import { AuthConfigError } from '../errors.ts';
import { type CredentialKindCompiler, type CredentialKindContext, tokenStep } from '../kind.ts';
import { BEARER_LOCATION } from '../location.ts';
import { secretKey } from '../token-cache.ts';
import { compileClientAuth } from './client-auth.ts';
import { compileClientToken } from './client-token.ts';
import { compileExchangeCache } from './exchange-cache.ts';
import { ID_JAG_TOKEN_TYPE, jwtBearerForm, tokenExchangeForm, tokenTypeUrn } from './grants.ts';
import { compileTokenEndpoint, type TokenEndpoint } from './token-endpoint.ts';

const FIELD = 'crossAppAccess';
/** The metric label of its fetches (gw_backend_auth_token_fetches_total). */
export const CROSS_APP_ACCESS_METRIC_KIND = 'cross_app_access';

const NO_SUBJECT_TOKEN = new BackendCredentialError(
  401,
  'The request carries no token for crossAppAccess to exchange.',
  'crossAppAccess: the request has no subject token at crossAppAccess.subjectToken.source',
);

function compileEndpoint(
  spec: CrossAppAccessEndpoint | undefined,
  context: CredentialKindContext,
  field: string,
): { endpoint: TokenEndpoint; identity: readonly string[] } | AuthConfigError {
  if (spec === undefined) return new AuthConfigError(field, 'must be set');
  if (spec.clientAuth === undefined) return new AuthConfigError(`${field}.clientAuth`, 'must be set');
  const clientAuth = compileClientAuth(spec.clientAuth, context, `${field}.clientAuth`);
  if (clientAuth instanceof AuthConfigError) return clientAuth;
  const endpoint = compileTokenEndpoint(spec, clientAuth, context, field, FIELD);
  if (endpoint instanceof AuthConfigError) return endpoint;
  return { endpoint, identity: [endpoint.identity, ...clientAuth.identity] };
}

export const compileCrossAppAccess: CredentialKindCompiler<CrossAppAccessAuth> = (spec, context) => {
  if (typeof spec.audience !== 'string' || spec.audience === '')
    return new AuthConfigError(`${FIELD}.audience`, 'must be set to the resource authorization server it is for');
  const subject = compileClientToken(spec.subjectToken?.source, `${FIELD}.subjectToken.source`);
  if (subject instanceof AuthConfigError) return subject;
  const subjectTokenType = tokenTypeUrn(spec.subjectToken?.tokenType ?? 'IdToken');
  const identityProvider = compileEndpoint(spec.identityProvider, context, `${FIELD}.identityProvider`);
  if (identityProvider instanceof AuthConfigError) return identityProvider;
  const resourceServer = compileEndpoint(
    spec.resourceAuthorizationServer,
    context,
    `${FIELD}.resourceAuthorizationServer`,
  );
  if (resourceServer instanceof AuthConfigError) return resourceServer;
  const cache = compileExchangeCache(
    spec.cache,
    CROSS_APP_ACCESS_METRIC_KIND,
    context,
    [JSON.stringify(spec), ...identityProvider.identity, ...resourceServer.identity],
    FIELD,
  );
  if (cache instanceof AuthConfigError) return cache;
  // BackendAuth.location, else the Authorization header's Bearer token.
  const location = context.location ?? BEARER_LOCATION;

  const step = tokenStep(location, FIELD, (incoming, upstream) => {
    const subjectToken = subject.read(upstream, incoming);
    if (subjectToken === undefined) throw NO_SUBJECT_TOKEN;
    subject.remove(upstream);
    return cache.tokens.get(secretKey(subjectToken), async () => {
      const assertion = await identityProvider.endpoint.request(
        tokenExchangeForm({
          subjectToken,
          subjectTokenType,
          requestedTokenType: ID_JAG_TOKEN_TYPE,
          audiences: [spec.audience],
          resources: spec.resources,
          scopes: spec.scopes,
        }),
        { issuedTokenType: ID_JAG_TOKEN_TYPE },
      );
      const answer = await resourceServer.endpoint.request(
        jwtBearerForm(assertion.accessToken, { scopes: spec.scopes }),
      );
      return { value: answer.accessToken, expiresAtMs: cache.expiresAtMs(answer, subjectToken) };
    });
  });
  return { step, writesQuery: location.inQuery || subject.inQuery };
};
