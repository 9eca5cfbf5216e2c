// Backend authentication oauthTokenExchange (spec document 2, OAuthTokenExchange): the client's
// token is exchanged at an OAuth 2.0 token endpoint — an RFC 8693 token exchange (with an
// optional actor token, audiences, scopes, resources, requested token type) or an RFC 7523 JWT
// bearer grant — and the token obtained goes to the backend. Per request: the subject (and actor)
// token is read, may_act is checked when required, additionalParams are evaluated, and the token
// is taken from the cache or exchanged once for every request that needs the same one.
// docs/backend-auth.md, "oauthTokenExchange"; docs/decisions/0017-token-exchange.md.
import type { OAuthTokenExchange } from '../../../../api/types/backend-auth.ts';
import { compileExpression, type Expression, ExpressionError } from '../../../cel/expression.ts';
import { BackendCredentialError } from '../credential-error.ts';
import { AuthConfigError } from '../errors.ts';
import { type AuthIncoming, type CredentialKindCompiler, type CredentialKindContext, tokenStep } from '../kind.ts';
import { BEARER_LOCATION, type CredentialLocation, compileLocation } from '../location.ts';
import { secretKey } from '../token-cache.ts';
import { type ClientAuthentication, compileClientAuth } from './client-auth.ts';
import { type ClientTokenReader, compileClientToken } from './client-token.ts';
import { compileExchangeCache } from './exchange-cache.ts';
import { jwtBearerForm, RESERVED_PARAMS, tokenExchangeForm, tokenTypeUrn } from './grants.ts';
import { mayActRefusal } from './may-act.ts';
import { compileTokenEndpoint } from './token-endpoint.ts';

const FIELD = 'oauthTokenExchange';
/** The metric label of its fetches (gw_backend_auth_token_fetches_total). */
export const TOKEN_EXCHANGE_METRIC_KIND = 'oauth_token_exchange';
const MAX_ADDITIONAL_PARAMS = 64;
/** RFC 6749 appendix A: a parameter name is printable ASCII. */
const PARAM_NAME = /^[\x21-\x7e]{1,256}$/;

const NO_SUBJECT_TOKEN = new BackendCredentialError(
  401,
  'The request carries no token for oauthTokenExchange to exchange.',
  'oauthTokenExchange: the request has no subject token at oauthTokenExchange.subjectToken.source',
);
const NO_ACTOR_TOKEN = new BackendCredentialError(
  401,
  'The request carries no actor token for oauthTokenExchange.',
  'oauthTokenExchange: the request has no actor token at oauthTokenExchange.actorToken.source',
);

/** An additionalParams entry: the form parameter and the expression that computes its value. */
type AdditionalParam = readonly [name: string, expression: Expression];

function compileAdditionalParams(params: Record<string, string> | undefined): AdditionalParam[] | AuthConfigError {
  const entries = Object.entries(params ?? {});
  if (entries.length > MAX_ADDITIONAL_PARAMS)
    return new AuthConfigError(`${FIELD}.additionalParams`, `at most ${MAX_ADDITIONAL_PARAMS} parameters are allowed`);
  const compiled: AdditionalParam[] = [];
  for (const [name, source] of entries) {
    const field = `${FIELD}.additionalParams.${name}`;
    if (!PARAM_NAME.test(name)) return new AuthConfigError(field, 'a parameter name is printable ASCII without spaces');
    if (RESERVED_PARAMS.has(name.toLowerCase()))
      return new AuthConfigError(field, `"${name}" is a parameter gw sets itself; use the field that sets it`);
    const expression = compileExpression(source);
    if (expression instanceof ExpressionError)
      return new AuthConfigError(field, `the CEL expression does not compile: ${expression.message}`);
    compiled.push([name, expression]);
  }
  return compiled;
}

/**
 * The values of additionalParams for one request. An expression that fails or yields something
 * other than a string rejects the request (400): an exchange without a parameter the token
 * endpoint was configured to get could yield a token with other rights than intended.
 */
function evaluateParams(params: readonly AdditionalParam[], incoming: AuthIncoming): [string, string][] {
  if (params.length === 0) return [];
  const variables = incoming.variables?.();
  return params.map(([name, expression]) => {
    let value: unknown;
    try {
      if (variables === undefined) throw new Error('this request has no CEL variables');
      value = expression.evaluate(variables);
    } catch (error) {
      throw new BackendCredentialError(
        400,
        `The request does not give oauthTokenExchange parameter ${name}.`,
        `oauthTokenExchange.additionalParams.${name}: ${(error as Error).message}`,
      );
    }
    if (typeof value !== 'string')
      throw new BackendCredentialError(
        400,
        `The request does not give oauthTokenExchange parameter ${name}.`,
        `oauthTokenExchange.additionalParams.${name} yielded a ${value === null ? 'null' : typeof value}, not a string`,
      );
    return [name, value];
  });
}

/** Where the obtained token goes: oauthTokenExchange.location, else BackendAuth.location, else Bearer. */
function compileTarget(spec: OAuthTokenExchange, context: CredentialKindContext): CredentialLocation | AuthConfigError {
  if (spec.location === undefined) return context.location ?? BEARER_LOCATION;
  if (context.location !== undefined)
    return new AuthConfigError(`${FIELD}.location`, 'set either location or oauthTokenExchange.location, not both');
  return compileLocation(spec.location, `${FIELD}.location`);
}

export const compileOAuthTokenExchange: CredentialKindCompiler<OAuthTokenExchange> = (spec, context) => {
  const grantType = spec.grantType ?? 'TokenExchange';
  if (grantType !== 'TokenExchange' && grantType !== 'JwtBearer')
    return new AuthConfigError(`${FIELD}.grantType`, `"${grantType}" is not TokenExchange or JwtBearer`);
  if (grantType === 'JwtBearer') {
    if (spec.actorToken !== undefined)
      return new AuthConfigError(`${FIELD}.actorToken`, 'is used only when grantType is TokenExchange');
    if (spec.requestedTokenType !== undefined)
      return new AuthConfigError(
        `${FIELD}.requestedTokenType`,
        'is a token exchange (RFC 8693) parameter; a JwtBearer grant has none. Remove it, or use grantType TokenExchange',
      );
  }
  const subject = compileClientToken(spec.subjectToken?.source, `${FIELD}.subjectToken.source`);
  if (subject instanceof AuthConfigError) return subject;
  const subjectTokenType = tokenTypeUrn(spec.subjectToken?.tokenType ?? 'AccessToken');
  let actor: { reader: ClientTokenReader; type: string; mayAct: boolean } | undefined;
  if (spec.actorToken !== undefined) {
    if (spec.actorToken.source === undefined)
      return new AuthConfigError(`${FIELD}.actorToken.source`, 'must be set: an actor token has no default place');
    const reader = compileClientToken(spec.actorToken.source, `${FIELD}.actorToken.source`);
    if (reader instanceof AuthConfigError) return reader;
    actor = {
      reader,
      type: tokenTypeUrn(spec.actorToken.tokenType ?? 'AccessToken'),
      mayAct: spec.actorToken.mayAct === 'Required',
    };
  }
  const requestedTokenType = spec.requestedTokenType === undefined ? undefined : tokenTypeUrn(spec.requestedTokenType);
  const params = compileAdditionalParams(spec.additionalParams);
  if (params instanceof AuthConfigError) return params;

  let clientAuth: ClientAuthentication | undefined;
  if (spec.clientAuth !== undefined) {
    const compiled = compileClientAuth(spec.clientAuth, context, `${FIELD}.clientAuth`);
    if (compiled instanceof AuthConfigError) return compiled;
    clientAuth = compiled;
  }
  const endpoint = compileTokenEndpoint(spec, clientAuth, context, FIELD, FIELD);
  if (endpoint instanceof AuthConfigError) return endpoint;
  const location = compileTarget(spec, context);
  if (location instanceof AuthConfigError) return location;
  const cache = compileExchangeCache(
    spec.cache,
    TOKEN_EXCHANGE_METRIC_KIND,
    context,
    [JSON.stringify(spec), endpoint.identity, ...(clientAuth?.identity ?? [])],
    FIELD,
  );
  if (cache instanceof AuthConfigError) return cache;

  const target = {
    audiences: spec.audiences,
    scopes: spec.scopes,
    resources: spec.resources,
  };
  const step = tokenStep(location, FIELD, (incoming, upstream) => {
    const subjectToken = subject.read(upstream, incoming);
    if (subjectToken === undefined) throw NO_SUBJECT_TOKEN;
    let actorToken: string | undefined;
    if (actor !== undefined) {
      actorToken = actor.reader.read(upstream, incoming);
      if (actorToken === undefined) throw NO_ACTOR_TOKEN;
      if (actor.mayAct) {
        const refusal = mayActRefusal(subjectToken, actorToken);
        if (refusal !== undefined)
          throw new BackendCredentialError(
            403,
            'The subject token does not allow this actor to act for it (may_act).',
            `oauthTokenExchange.actorToken.mayAct: ${refusal}`,
          );
      }
    }
    const extra = evaluateParams(params, incoming);
    // The client's tokens stay with gw: the backend gets the exchanged one.
    subject.remove(upstream);
    actor?.reader.remove(upstream);
    const key = secretKey(subjectToken, actorToken ?? '', ...extra.flat());
    return cache.tokens.get(key, async () => {
      const form =
        grantType === 'JwtBearer'
          ? jwtBearerForm(subjectToken, { ...target, extra })
          : tokenExchangeForm({
              ...target,
              extra,
              subjectToken,
              subjectTokenType,
              actor: actorToken === undefined ? undefined : { token: actorToken, type: actor!.type },
              requestedTokenType,
            });
      const answer = await endpoint.request(form, { issuedTokenType: requestedTokenType });
      return { value: answer.accessToken, expiresAtMs: cache.expiresAtMs(answer, subjectToken) };
    });
  });
  return {
    step,
    writesQuery: location.inQuery || subject.inQuery || (actor?.reader.inQuery ?? false),
  };
};
