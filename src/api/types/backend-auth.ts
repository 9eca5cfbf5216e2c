// Spec document 2, "Backend authentication": the credentials the data plane adds to requests
// it sends to a backend (static keys, cloud credentials, OAuth exchanges, signed JWTs).
import { array, enumOf, integer, map, named, object, refine, required, string } from '../schema/build.ts';
import { atMostOneOf, exactlyOneOf, onlyWhen, requiredTogether, requiredWhen } from '../schema/rules.ts';
import type { Infer } from '../schema/schema.ts';
import { authKindLabel } from '../vendors.ts';
import { CELExpression, Duration, JSONValue, ShortString } from './common.ts';
import { AuthorizationExtractionLocation, AuthorizationLocation } from './credential-locations.ts';
import {
  endpointReferenceFields,
  endpointReferenceRule,
  LocalSecretKeyRef,
  LocalSecretObjectRef,
} from './references.ts';

// ---- Fields several auth types share -------------------------------------------------------

const inlineKey = string({
  maxLength: 2048,
  description: 'The credential written inline. The least secure choice; prefer secretRef.',
});

const keySecretRef = refine(LocalSecretKeyRef, {
  description:
    'Secret holding the credential, read from key Authorization unless key is set. A "Bearer " prefix is stripped only from the default key.',
});

const bearerLocation = refine(AuthorizationLocation, {
  description: 'Where the credential is written on the request. Unset: the Authorization header with prefix "Bearer ".',
});

/** A list of 1-64 free-form strings sent to a token endpoint (scopes, resources). */
const tokenRequestList = array(string(), { minItems: 1, maxItems: 64 });

const tokenEndpointPath = string({
  maxLength: 1024,
  pattern: '^/',
  default: '/',
  description: 'Path of the token endpoint on the referenced backend.',
});

// ---- Static credentials ----------------------------------------------------------------------

export const BackendAuthPassthrough = named(
  {
    name: 'BackendAuthPassthrough',
    description:
      "Forwards the client's own token, already validated by an inbound auth policy, to the backend; has no fields.",
    source: 'gw',
    notes:
      'Fields not shown in the spec; gw makes it an empty object, as agentgateway does: its presence forwards the client token that another policy (JWT, API key, basic auth) validated, which that policy may have stripped. Without such a policy it has no effect.',
  },
  object({}),
);
export type BackendAuthPassthrough = Infer<typeof BackendAuthPassthrough>;

export const BackendAuthCredential = named(
  {
    name: 'BackendAuthCredential',
    description: 'One credential read from a Secret and where it is written on the request.',
    source: '2',
  },
  object({
    location: required(
      refine(AuthorizationLocation, { description: 'Where this credential is written on the request.' }),
    ),
    secretRef: required(
      refine(LocalSecretKeyRef, {
        description: 'Secret holding the credential, read from key Authorization unless key is set.',
      }),
    ),
  }),
);
export type BackendAuthCredential = Infer<typeof BackendAuthCredential>;

// ---- cloudone (AWS) ----------------------------------------------------------------------------

export const CloudoneSessionTag = named(
  {
    name: 'CloudoneSessionTag',
    description: 'An AWS session tag set on the assumed-role session: a fixed value or a CEL expression.',
    source: '2',
    notes: 'A request whose expression yields an invalid tag value is rejected.',
  },
  object(
    {
      key: required(string({ minLength: 1, maxLength: 128, description: 'Name of the session tag.' })),
      value: string({ maxLength: 256, description: 'A fixed tag value.' }),
      expression: refine(CELExpression, { description: 'CEL over the request that yields the tag value.' }),
    },
    { rules: [exactlyOneOf(['value', 'expression'])] },
  ),
);
export type CloudoneSessionTag = Infer<typeof CloudoneSessionTag>;

export const CloudoneAssumeRole = named(
  {
    name: 'CloudoneAssumeRole',
    description: 'An AWS IAM role assumed through STS before signing.',
    source: '2',
    notes:
      'The role is assumed with the ambient credentials. With no session name, one is generated at random; a request whose sessionNameExpression yields an invalid name is rejected.',
  },
  object(
    {
      roleId: required(
        string({
          minLength: 1,
          pattern: '^arn:[a-z][a-z0-9-]*:iam::[0-9]{12}:role/.+$',
          description: 'Resource name of the role to assume, including its 12-digit account.',
        }),
      ),
      sessionName: string({
        minLength: 2,
        maxLength: 64,
        pattern: '^[A-Za-z0-9_+=,.@-]+$',
        description: 'Fixed role session name: word characters and + = , . @ -.',
      }),
      sessionNameExpression: refine(CELExpression, {
        description: 'CEL over the request that yields the session name.',
      }),
      tags: array(CloudoneSessionTag, {
        maxItems: 50,
        listType: 'map',
        listMapKeys: ['key'],
        description: 'Session tags passed when assuming the role.',
      }),
    },
    { rules: [atMostOneOf(['sessionName', 'sessionNameExpression'])] },
  ),
);
export type CloudoneAssumeRole = Infer<typeof CloudoneAssumeRole>;

export const CloudoneAuth = named(
  {
    name: 'CloudoneAuth',
    description:
      'AWS (cloudone) credentials: SigV4 request signing with keys from a Secret or the environment, optionally through an assumed role.',
    source: '2',
    notes:
      'Empty ({}) signs with ambient credentials. secretRef and assumeRole are exclusive (a gw rule): assumeRole always starts from ambient credentials, so a Secret beside it would be silently ignored.',
  },
  object(
    {
      secretRef: refine(LocalSecretObjectRef, {
        description: 'Secret with keys accessKey and secretKey, and optionally sessionToken.',
      }),
      assumeRole: CloudoneAssumeRole,
      serviceName: refine(ShortString, { description: 'Service name used in request signing.' }),
      region: refine(ShortString, {
        description: 'Signing region. Unset: from the typed backend when it has one, else the ambient region.',
      }),
    },
    {
      rules: [
        {
          rule: '!(has(self.secretRef) && has(self.assumeRole))',
          message: 'secretRef and assumeRole may not both be set: assumeRole uses the ambient credentials',
        },
      ],
    },
  ),
);
export type CloudoneAuth = Infer<typeof CloudoneAuth>;

// ---- beta (Azure) ------------------------------------------------------------------------------

export const BetaManagedIdentity = named(
  {
    name: 'BetaManagedIdentity',
    description:
      'An Azure managed identity; set at most one of clientId, objectId and resourceId (none: the system-assigned identity).',
    source: '2',
  },
  object({
    clientId: required(string({ description: 'Client (application) ID of a user-assigned managed identity.' })),
    objectId: required(string({ description: 'Object (principal) ID of a user-assigned managed identity.' })),
    resourceId: required(string({ description: 'Azure resource ID of a user-assigned managed identity.' })),
  }),
);
export type BetaManagedIdentity = Infer<typeof BetaManagedIdentity>;

export const BetaWorkloadIdentity = named(
  {
    name: 'BetaWorkloadIdentity',
    description: 'Azure workload identity federation from the pod service account token.',
    source: 'gw',
    notes:
      'Fields not shown in the spec; gw makes it an empty object, as agentgateway does: the federated token and environment projected into the pod say everything needed.',
  },
  object({}),
);
export type BetaWorkloadIdentity = Infer<typeof BetaWorkloadIdentity>;

export const BetaAuth = named(
  {
    name: 'BetaAuth',
    description: 'Azure (beta) credentials: a Secret, a managed identity, workload identity, or the environment.',
    source: '2',
    notes: 'With none of the three set, the method is detected from the environment (workload identity in a cluster).',
  },
  object(
    {
      secretRef: refine(LocalSecretObjectRef, { description: 'Secret with keys clientID, tenantID and clientSecret.' }),
      managedIdentity: BetaManagedIdentity,
      workloadIdentity: BetaWorkloadIdentity,
    },
    { rules: [atMostOneOf(['secretRef', 'managedIdentity', 'workloadIdentity'])] },
  ),
);
export type BetaAuth = Infer<typeof BetaAuth>;

// ---- cloudtwo (Google Cloud) -------------------------------------------------------------------

export const CloudtwoAuth = named(
  {
    name: 'CloudtwoAuth',
    description:
      'Google Cloud (cloudtwo) credentials: an access token or an ID token (for an audience), from a Secret or the environment.',
    source: '2',
  },
  object(
    {
      type: enumOf(['AccessToken', 'IdToken'], {
        description: 'Kind of token minted: AccessToken for most services, IdToken for serverless runtimes.',
      }),
      secretRef: refine(LocalSecretKeyRef, {
        description:
          'Secret with the credentials JSON, key credentials.json unless key is set. Unset: ambient credentials.',
      }),
      audience: refine(ShortString, {
        description: 'Audience of the ID token. Unset: derived from the backend hostname.',
      }),
    },
    { rules: [onlyWhen('audience', "has(self.type) && self.type == 'IdToken'", 'when type is IdToken')] },
  ),
);
export type CloudtwoAuth = Infer<typeof CloudtwoAuth>;

// ---- OAuth -------------------------------------------------------------------------------------

export const OAuthTokenType = named(
  {
    name: 'OAuthTokenType',
    description:
      'Token type: AccessToken, Jwt, IdToken or IdJag (the RFC 8693 token type URNs), or any absolute URI, sent as is.',
    source: '2',
    notes:
      "AccessToken, Jwt, IdToken and IdJag stand for the RFC 8693 token type URNs; any other value must be an absolute URI and is sent unchanged. The length bound is gw's.",
  },
  string({
    minLength: 1,
    maxLength: 1024,
    pattern: '^(AccessToken|Jwt|IdToken|IdJag|[A-Za-z][A-Za-z0-9+.-]*:[^\\s#]+)$',
  }),
);
export type OAuthTokenType = Infer<typeof OAuthTokenType>;

export const JwtSigningAlg = named(
  { name: 'JwtSigningAlg', description: 'JWS signing algorithm, such as RS256 or ES256.', source: '2' },
  enumOf(['RS256', 'RS384', 'RS512', 'PS256', 'ES256', 'ES384']),
);
export type JwtSigningAlg = Infer<typeof JwtSigningAlg>;

/** Where a token exchange reads the client's token; shared by the OAuth and cross-app subject tokens. */
const clientTokenSource = refine(AuthorizationExtractionLocation, {
  description:
    'Where the token is read from the client request. Unset: the Authorization header with prefix "Bearer ".',
});

export const OAuthTokenSpec = named(
  {
    name: 'OAuthTokenSpec',
    description: 'The subject token of a token exchange: where it comes from and its type.',
    source: '2',
  },
  object({
    source: clientTokenSource,
    tokenType: refine(OAuthTokenType, { default: 'AccessToken' }),
  }),
);
export type OAuthTokenSpec = Infer<typeof OAuthTokenSpec>;

export const OAuthActorToken = named(
  {
    name: 'OAuthActorToken',
    description: 'The actor token of a token exchange (who acts for the subject): where it comes from and its type.',
    source: '2',
  },
  object({
    source: required(
      refine(AuthorizationExtractionLocation, { description: 'Where the actor token is read; there is no default.' }),
    ),
    tokenType: refine(OAuthTokenType, { default: 'AccessToken' }),
    mayAct: enumOf(['Required'], {
      description:
        "Required: the subject token's may_act claim must authorize this actor. Unset: may_act is not checked.",
    }),
  }),
);
export type OAuthActorToken = Infer<typeof OAuthActorToken>;

export const OAuthPrivateKeyJWT = named(
  {
    name: 'OAuthPrivateKeyJWT',
    description: 'Client authentication with a JWT signed by a private key (private_key_jwt).',
    source: '2',
    notes:
      'If the leaf certificate does not match signingKeyRef, gw only logs a warning; the token endpoint will reject the assertion.',
  },
  object(
    {
      signingKeyRef: required(
        refine(LocalSecretKeyRef, { description: 'PEM RSA or EC private key; key signingKey unless key is set.' }),
      ),
      certificateRef: refine(LocalSecretKeyRef, {
        description: 'PEM certificate chain, leaf first; key certificate unless key is set.',
      }),
      certificateHeader: enumOf(['x5c', 'x5t#S256'], {
        description: 'JWS header that carries the certificate (chain or SHA-256 thumbprint).',
      }),
      alg: refine(JwtSigningAlg, { default: 'RS256' }),
      kid: string({ description: 'Key ID put in the JWS header.' }),
      assertionAudience: required(
        string({ minLength: 1, description: 'Audience of the client assertion, usually the token endpoint URL.' }),
      ),
    },
    { rules: [requiredTogether('certificateRef', 'certificateHeader')] },
  ),
);
export type OAuthPrivateKeyJWT = Infer<typeof OAuthPrivateKeyJWT>;

const isPrivateKeyJwt = "has(self.method) && self.method == 'PrivateKeyJwt'";

export const OAuthClientAuth = named(
  {
    name: 'OAuthClientAuth',
    description: 'How gw authenticates itself to the token endpoint.',
    source: '2',
    notes:
      'gw also rejects privateKeyJwt unless method is PrivateKeyJwt, and secretRef with method PrivateKeyJwt, since neither would be used.',
  },
  object(
    {
      clientId: required(string({ minLength: 1, description: 'Client ID gw presents to the token endpoint.' })),
      secretRef: refine(LocalSecretKeyRef, {
        description:
          'Secret with the client secret, key clientSecret unless key is set. Unset: only client_id is sent, which only ClientSecretPost allows.',
      }),
      privateKeyJwt: OAuthPrivateKeyJWT,
      method: enumOf(['ClientSecretBasic', 'ClientSecretPost', 'PrivateKeyJwt'], {
        default: 'ClientSecretBasic',
        description:
          'How the client authenticates: the secret in HTTP Basic auth, the secret in the form body, or a signed JWT (privateKeyJwt).',
      }),
    },
    {
      rules: [
        requiredWhen('privateKeyJwt', isPrivateKeyJwt, 'when method is PrivateKeyJwt'),
        onlyWhen('privateKeyJwt', isPrivateKeyJwt, 'when method is PrivateKeyJwt'),
        requiredWhen(
          'secretRef',
          "!has(self.method) || self.method == 'ClientSecretBasic'",
          'when method is ClientSecretBasic (only ClientSecretPost may send the client ID alone)',
        ),
        onlyWhen('secretRef', `!(${isPrivateKeyJwt})`, 'when method is ClientSecretBasic or ClientSecretPost'),
      ],
    },
  ),
);
export type OAuthClientAuth = Infer<typeof OAuthClientAuth>;

export const OAuthInMemoryTokenCache = named(
  {
    name: 'OAuthInMemoryTokenCache',
    description: 'A cache of exchanged tokens held in the proxy memory.',
    source: 'gw',
    notes: 'The spec gives these fields under OAuthTokenCache.inMemory without naming the type; gw names it.',
  },
  object({
    maxEntries: integer({ minimum: 0, default: 8192, description: 'Most tokens kept; 0 disables the cache.' }),
    defaultTtl: refine(Duration, {
      default: '300s',
      description: 'How long a token is kept when the token endpoint gives no expires_in.',
    }),
  }),
);
export type OAuthInMemoryTokenCache = Infer<typeof OAuthInMemoryTokenCache>;

export const OAuthTokenCache = named(
  { name: 'OAuthTokenCache', description: 'Caching of exchanged tokens.', source: '2' },
  object({ inMemory: OAuthInMemoryTokenCache }),
);
export type OAuthTokenCache = Infer<typeof OAuthTokenCache>;

export const OAuthTokenExchange = named(
  {
    name: 'OAuthTokenExchange',
    description:
      'Exchanges a token at an OAuth 2.0 token endpoint (RFC 8693 token exchange or an RFC 7523 JWT grant) and sends the result to the backend.',
    source: '2',
    notes: 'TokenExchange follows RFC 8693, JwtBearer RFC 7523.',
  },
  object(
    {
      ...endpointReferenceFields,
      path: tokenEndpointPath,
      grantType: enumOf(['TokenExchange', 'JwtBearer'], {
        default: 'TokenExchange',
        description: 'Grant requested: RFC 8693 token exchange, or an RFC 7523 JWT bearer assertion.',
      }),
      subjectToken: refine(OAuthTokenSpec, {
        description:
          'The token exchanged (the assertion for JwtBearer). Unset: the Authorization Bearer token, type AccessToken.',
      }),
      actorToken: refine(OAuthActorToken, { description: 'Delegation actor token (TokenExchange only).' }),
      audiences: array(ShortString, {
        minItems: 1,
        maxItems: 64,
        description: 'Audiences requested for the new token.',
      }),
      scopes: refine(tokenRequestList, { description: 'Scopes requested for the new token.' }),
      resources: refine(tokenRequestList, { description: 'Resource URIs the new token is for (RFC 8707).' }),
      requestedTokenType: enumOf(['AccessToken', 'Jwt', 'IdToken', 'IdJag'], {
        description: 'Token type asked for; unlike subject and actor token types, custom URIs are not allowed.',
      }),
      additionalParams: map(CELExpression, {
        maxProperties: 64,
        description: 'Extra form parameters; each value is CEL over the client request.',
      }),
      clientAuth: refine(OAuthClientAuth, {
        description: 'Client authentication at the token endpoint. Unset: none is sent.',
      }),
      location: refine(AuthorizationLocation, {
        description: 'Where the obtained token is written. Unset: the Authorization header with prefix "Bearer ".',
      }),
      cache: OAuthTokenCache,
    },
    {
      rules: [
        endpointReferenceRule,
        onlyWhen(
          'actorToken',
          "!has(self.grantType) || self.grantType == 'TokenExchange'",
          'when grantType is TokenExchange',
        ),
      ],
    },
  ),
);
export type OAuthTokenExchange = Infer<typeof OAuthTokenExchange>;

// ---- Cross App Access --------------------------------------------------------------------------

export const CrossAppAccessEndpoint = named(
  {
    name: 'CrossAppAccessEndpoint',
    description: 'A token endpoint used by Cross App Access, and how gw authenticates to it.',
    source: '2',
  },
  object(
    {
      ...endpointReferenceFields,
      path: tokenEndpointPath,
      clientAuth: required(OAuthClientAuth),
    },
    { rules: [endpointReferenceRule] },
  ),
);
export type CrossAppAccessEndpoint = Infer<typeof CrossAppAccessEndpoint>;

export const CrossAppAccessSubjectToken = named(
  {
    name: 'CrossAppAccessSubjectToken',
    description: 'Where the user token exchanged by Cross App Access comes from, and its type.',
    source: '2',
  },
  object({
    source: clientTokenSource,
    tokenType: refine(OAuthTokenType, { default: 'IdToken' }),
  }),
);
export type CrossAppAccessSubjectToken = Infer<typeof CrossAppAccessSubjectToken>;

export const CrossAppAccessAuth = named(
  {
    name: 'CrossAppAccessAuth',
    description:
      'Cross App Access: obtains an identity assertion (ID-JAG) for the user and exchanges it for a token of the backend.',
    source: '2',
    notes:
      'Two exchanges: the client token for an ID-JAG at the identity provider (RFC 8693), then the ID-JAG for an access token at the resource authorization server (RFC 7523).',
  },
  object({
    identityProvider: required(
      refine(CrossAppAccessEndpoint, { description: 'Token endpoint of the identity provider (ID-JAG exchange).' }),
    ),
    resourceAuthorizationServer: required(
      refine(CrossAppAccessEndpoint, {
        description: 'Token endpoint of the resource authorization server (jwt-bearer exchange).',
      }),
    ),
    audience: required(
      refine(ShortString, { description: 'The resource authorization server the ID-JAG is bound to.' }),
    ),
    resources: refine(tokenRequestList, { description: 'Resource URIs the backend token is for.' }),
    scopes: refine(tokenRequestList, { description: 'Scopes requested for the backend token.' }),
    subjectToken: refine(CrossAppAccessSubjectToken, {
      description: 'The client token exchanged. Unset: the Authorization Bearer token, type IdToken.',
    }),
    cache: OAuthTokenCache,
  }),
);
export type CrossAppAccessAuth = Infer<typeof CrossAppAccessAuth>;

// ---- Signed JWT --------------------------------------------------------------------------------

export const JwtSignAuth = named(
  {
    name: 'JwtSignAuth',
    description: 'Signs a fresh JWT for every request sent to the backend.',
    source: '2',
    notes: 'A short-lived JWT is signed for every request; iat, exp and nbf are set by the signer (exp = now + ttl).',
  },
  object({
    signingKeyRef: required(
      refine(LocalSecretObjectRef, { description: 'Secret whose key signingKey holds a PEM RSA or EC private key.' }),
    ),
    alg: refine(JwtSigningAlg, { default: 'RS256' }),
    kid: string({ description: 'Key ID put in the JWS header.' }),
    claims: map(JSONValue, {
      description: 'Fixed claims put in every token (iss, sub, aud...); any JSON value.',
      rules: [
        {
          rule: "!['iat', 'exp', 'nbf'].exists(k, k in self)",
          message: 'iat, exp and nbf are set by the signer and may not be given in claims',
        },
      ],
    }),
    ttl: refine(Duration, { default: '300s', description: 'Token lifetime, used for exp.' }),
    location: bearerLocation,
  }),
);
export type JwtSignAuth = Infer<typeof JwtSignAuth>;

// ---- BackendAuth -------------------------------------------------------------------------------

// The fields ModelBackendAuth shares with BackendAuth.
const modelAuthFields = {
  key: inlineKey,
  secretRef: keySecretRef,
  passthrough: BackendAuthPassthrough,
  cloudone: CloudoneAuth,
  beta: BetaAuth,
  cloudtwo: CloudtwoAuth,
  oauthTokenExchange: OAuthTokenExchange,
};

const trailingFields = {
  location: bearerLocation,
  credentials: array(BackendAuthCredential, {
    minItems: 1,
    maxItems: 8,
    listType: 'atomic',
    description: 'Additional credentials, each written to its own location; may be combined with any of the above.',
  }),
};

export const BackendAuth = named(
  {
    name: 'BackendAuth',
    description: 'Credentials gw adds to requests sent to the backend; at most one primary kind.',
    source: '2',
  },
  object(
    {
      ...modelAuthFields,
      crossAppAccess: CrossAppAccessAuth,
      jwtSign: JwtSignAuth,
      ...trailingFields,
    },
    {
      rules: [
        atMostOneOf(
          [
            'key',
            'secretRef',
            'passthrough',
            'cloudone',
            'beta',
            'cloudtwo',
            'oauthTokenExchange',
            'crossAppAccess',
            'jwtSign',
          ],
          authKindLabel,
        ),
      ],
    },
  ),
);
export type BackendAuth = Infer<typeof BackendAuth>;

export const ModelBackendAuth = named(
  {
    name: 'ModelBackendAuth',
    description: 'Credentials gw adds to requests sent to the provider of a GwModel.',
    source: '2',
  },
  object(
    { ...modelAuthFields, ...trailingFields },
    {
      rules: [
        atMostOneOf(
          ['key', 'secretRef', 'passthrough', 'cloudone', 'beta', 'cloudtwo', 'oauthTokenExchange'],
          authKindLabel,
        ),
      ],
    },
  ),
);
export type ModelBackendAuth = Infer<typeof ModelBackendAuth>;

// ---- Guard-service auth ------------------------------------------------------------------------

export const AlphaModerationAuth = named(
  {
    name: 'AlphaModerationAuth',
    description: 'Credentials for the OpenAI moderation API.',
    source: '2',
    notes: 'The auth of the alphaModeration guard-service policy.',
  },
  object(
    { key: inlineKey, secretRef: keySecretRef, location: bearerLocation },
    { rules: [exactlyOneOf(['key', 'secretRef'])] },
  ),
);
export type AlphaModerationAuth = Infer<typeof AlphaModerationAuth>;

export const ZetaGuardrailsAuth = named(
  {
    name: 'ZetaGuardrailsAuth',
    description: 'Credentials for Amazon Bedrock Guardrails: AWS (cloudone) signing or a key.',
    source: '2',
    notes: 'The auth of the zeta (Amazon Bedrock) guardrails guard-service policy.',
  },
  object(
    {
      key: inlineKey,
      secretRef: keySecretRef,
      cloudone: refine(CloudoneAuth, {
        description: 'Request signing; {} discovers credentials from the environment.',
      }),
      location: refine(bearerLocation, {
        description: 'Where key or secretRef is written. Unset: the Authorization header with prefix "Bearer ".',
      }),
    },
    {
      rules: [
        exactlyOneOf(['key', 'secretRef', 'cloudone'], authKindLabel),
        onlyWhen('location', 'has(self.key) || has(self.secretRef)', 'with key or secretRef'),
      ],
    },
  ),
);
export type ZetaGuardrailsAuth = Infer<typeof ZetaGuardrailsAuth>;

export const CloudtwoModelArmorAuth = named(
  {
    name: 'CloudtwoModelArmorAuth',
    description: 'Google Cloud credentials for Model Armor.',
    source: '2',
    notes: 'The auth of the cloudtwo (Google Cloud) Model Armor guard-service policy.',
  },
  object(
    { cloudtwo: refine(CloudtwoAuth, { description: '{} discovers credentials from the environment.' }) },
    { rules: [exactlyOneOf(['cloudtwo'])] },
  ),
);
export type CloudtwoModelArmorAuth = Infer<typeof CloudtwoModelArmorAuth>;
