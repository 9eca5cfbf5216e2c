// Spec document 2, "Inbound authentication and authorization": who may send traffic through the
// gateway (API keys, basic auth, JWT, MCP OAuth), CEL authorization rules, and the external
// authorization and processing services a request can be handed to.
import { array, boolean, enumOf, integer, map, named, object, refine, required, string } from '../schema/build.ts';
import { atMostOneOf, exactlyOneOf, onlyWhen, requiredWhen } from '../schema/rules.ts';
import type { Infer, ValidationRule } from '../schema/schema.ts';
import { identityProviderLabel } from '../vendors.ts';
import { ByteSize, CELExpression, Duration, JSONValue, LongString, ShortString } from './common.ts';
import { AuthorizationExtractionLocation } from './credential-locations.ts';
import {
  ConfigMapSelector,
  endpointReferenceFields,
  endpointReferenceRule,
  LocalSecretKeyRef,
  LocalSecretObjectRef,
  SecretSelector,
} from './references.ts';

// ---------------------------------------------------------------------------------------------
// Shared by the "OrConditional" types (ExtAuth, ExtProc here; DirectResponse, Transformation and
// rate limits in traffic.ts): either the inline fields or a `conditional` list, never both.

/**
 * The rule on a `conditional` list: at most one entry lacks `condition`, and that entry is the
 * last one (the fallback when no earlier condition matched). Written with `e == last` because
 * has() on an indexed element (`has(self[i].condition)`) is not accepted by every CEL checker.
 */
export const conditionalFallbackLastRule: ValidationRule = {
  rule: 'self.all(e, has(e.condition) || e == self[size(self) - 1]) && self.filter(e, !has(e.condition)).size() <= 1',
  message: 'only one conditional entry may omit condition, and it must be the last entry',
};

/** The rule on an OrConditional object: `conditional` excludes every inline field. */
export function conditionalExcludesRule(inlineFields: readonly string[]): ValidationRule {
  return {
    rule: `!has(self.conditional) || ![${inlineFields.map((f) => `has(self.${f})`).join(', ')}].exists(x, x)`,
    message: `conditional may not be set together with ${inlineFields.join(', ')}`,
  };
}

/** Exactly one endpoint (backendRef or url) unless the entries are in `conditional`. */
const endpointUnlessConditionalRule: ValidationRule = {
  rule: 'has(self.conditional) || [has(self.backendRef), has(self.url)].exists_one(x, x)',
  message: 'exactly one of backendRef, url must be set unless conditional is set',
};

/** A `condition` of a conditional entry; unset only on the last entry (the fallback). */
export const conditionField = refine(CELExpression, {
  description:
    'Selects this entry when true; entries are tried in order and the first match runs. Omit only on the last entry, which then applies when nothing earlier matched.',
});

// ---------------------------------------------------------------------------------------------
// Credential-based authentication.

export const APIKeyAuthentication = named(
  {
    name: 'APIKeyAuthentication',
    description: 'Client authentication by API key, checked against keys from Secrets or ConfigMaps.',
    source: '2',
  },
  object(
    {
      secretRef: refine(LocalSecretObjectRef, {
        description:
          'A Secret whose entries are API keys: each value is a key string or a JSON object with key or keyHash and optional metadata.',
      }),
      secretSelector: refine(SecretSelector, {
        description: 'All Secrets in the namespace with these labels; their entries are API keys.',
      }),
      configMapSelector: refine(ConfigMapSelector, {
        description:
          'All ConfigMaps in the namespace with these labels; entries must use keyHash (sha256:<hex>), raw keys are rejected.',
      }),
      mode: enumOf(['Strict', 'Optional', 'Permissive'], {
        default: 'Strict',
        description:
          'Strict requires a valid key; Optional validates a key when one is sent; Permissive never rejects.',
      }),
      location: refine(AuthorizationExtractionLocation, {
        description: 'Where the key is read from; the Authorization header with a Bearer prefix when unset.',
      }),
    },
    { rules: [exactlyOneOf(['secretRef', 'secretSelector', 'configMapSelector'])] },
  ),
);
export type APIKeyAuthentication = Infer<typeof APIKeyAuthentication>;

export const BasicAuthentication = named(
  {
    name: 'BasicAuthentication',
    description: 'Client authentication with HTTP Basic credentials, checked against password hashes.',
    source: '2',
    notes:
      'Passwords are hashes (MD5, bcrypt, crypt or SHA-1), as in an htpasswd file. A failed login answers with WWW-Authenticate carrying the realm.',
  },
  object(
    {
      users: array(
        string({
          minLength: 1,
          pattern: '^[^:\\r\\n]+:[^\\r\\n]+$',
          description: 'One htpasswd line, username:hash.',
        }),
        { minItems: 1, maxItems: 256, description: 'Users inline, one username:hash line each.' },
      ),
      secretRef: refine(LocalSecretKeyRef, {
        description: 'A Secret holding a whole htpasswd file; the key is .htaccess unless secretRef.key is set.',
      }),
      mode: enumOf(['Strict', 'Optional'], {
        default: 'Strict',
        description: 'Strict requires valid credentials; Optional validates credentials when they are sent.',
      }),
      realm: string({ default: 'Restricted', description: 'Realm named in the WWW-Authenticate challenge.' }),
      location: refine(AuthorizationExtractionLocation, {
        description: 'Where the credentials are read from; the Authorization header with a Basic prefix when unset.',
      }),
    },
    { rules: [exactlyOneOf(['users', 'secretRef'])] },
  ),
);
export type BasicAuthentication = Infer<typeof BasicAuthentication>;

// ---------------------------------------------------------------------------------------------
// JWT and MCP authentication.

export const RemoteJWKS = named(
  {
    name: 'RemoteJWKS',
    description: 'A JWKS endpoint fetched and cached by gw.',
    source: 'gw',
    notes:
      'The spec shows only "endpoint reference plus a Duration field"; gw follows agentgateway: jwksPath (the path on a backendRef; a url carries its own path) and cacheDuration (default 5m, at least 5m so that an identity provider is not polled too often).',
  },
  object(
    {
      ...endpointReferenceFields,
      jwksPath: refine(LongString, {
        description:
          'Path of the key set on the backendRef, such as /.well-known/jwks.json. With url the path is part of the url.',
      }),
      cacheDuration: refine(Duration, {
        default: '5m',
        description: 'How long a fetched key set is used before it is fetched again (at least 5m).',
        rules: [{ rule: "duration(self) >= duration('5m')", message: 'cacheDuration must be at least 5m' }],
      }),
    },
    {
      rules: [
        endpointReferenceRule,
        requiredWhen('jwksPath', 'has(self.backendRef)', 'when backendRef is set'),
        onlyWhen('jwksPath', '!has(self.url)', 'with backendRef (a url carries its own path)'),
      ],
    },
  ),
);
export type RemoteJWKS = Infer<typeof RemoteJWKS>;

export const JWKS = named(
  {
    name: 'JWKS',
    description: 'Where the keys that sign tokens come from: a remote JWKS endpoint or keys written inline.',
    source: '2',
  },
  object(
    {
      remote: refine(RemoteJWKS, { description: 'Fetch the key set from an endpoint and cache it.' }),
      inline: string({ minLength: 2, maxLength: 65536, description: 'The key set as a JSON document.' }),
    },
    { rules: [exactlyOneOf(['remote', 'inline'])] },
  ),
);
export type JWKS = Infer<typeof JWKS>;

// Fields JWTProvider, JWTMCPConfig and the deprecated MCPAuthentication have in common.
const audiencesField = array(string(), {
  minItems: 1,
  maxItems: 64,
  description: 'Accepted aud values; any audience is accepted when unset.',
});
const resourceMetadataField = map(JSONValue, {
  description: 'Content of the MCP OAuth protected-resource metadata the gateway serves.',
});
const clientIdField = string({
  description:
    'Client ID returned to MCP clients; when set, Dynamic Client Registration requests are not proxied to the identity provider.',
});

export const JWTProvider = named(
  { name: 'JWTProvider', description: 'A token issuer: its issuer, accepted audiences and signing keys.', source: '2' },
  object({
    issuer: required(refine(ShortString, { description: 'Expected iss claim.' })),
    audiences: audiencesField,
    jwks: required(refine(JWKS, { description: 'Keys that verify token signatures.' })),
  }),
);
export type JWTProvider = Infer<typeof JWTProvider>;

const MCP_IDPS = ['Idp01', 'Idp02', 'Idp03', 'Idp04', 'Idp05', 'Idp06'] as const;

export const McpIDP = named(
  {
    name: 'McpIDP',
    description: `Identity provider product: ${MCP_IDPS.map(identityProviderLabel).join(', ')}.`,
    source: '2',
    notes: `Neutral names for six identity provider products, in the spec's order; Document 3 walks through ${identityProviderLabel('Idp02')}.`,
  },
  enumOf(MCP_IDPS),
);
export type McpIDP = Infer<typeof McpIDP>;

export const JWTMCPConfig = named(
  {
    name: 'JWTMCPConfig',
    description:
      'MCP authorization settings of JWT authentication: the protected resource metadata and identity provider.',
    source: '2',
  },
  object({
    resourceMetadata: resourceMetadataField,
    provider: refine(McpIDP, { description: 'Identity provider product, for its discovery and registration quirks.' }),
    clientId: clientIdField,
  }),
);
export type JWTMCPConfig = Infer<typeof JWTMCPConfig>;

const jwtModeField = enumOf(['Strict', 'Optional', 'Permissive'], {
  default: 'Strict',
  description:
    'Strict requires a valid token from a configured issuer; Optional validates a token when one is sent; Permissive never rejects, claims stay usable later.',
});

export const JWTAuthentication = named(
  {
    name: 'JWTAuthentication',
    description: 'Client authentication with JSON Web Tokens from the configured issuers.',
    source: '2',
  },
  object({
    mode: jwtModeField,
    providers: required(array(JWTProvider, { minItems: 1, maxItems: 64, description: 'Accepted token issuers.' })),
    location: refine(AuthorizationExtractionLocation, {
      description: 'Where the token is read from; the Authorization header with a Bearer prefix when unset.',
    }),
    mcp: refine(JWTMCPConfig, {
      description: 'Serve MCP OAuth discovery (and proxy client registration) for this token validation.',
    }),
  }),
);
export type JWTAuthentication = Infer<typeof JWTAuthentication>;

export const MCPAuthentication = named(
  {
    name: 'MCPAuthentication',
    description:
      'MCP client authentication with tokens from an identity provider (deprecated; use traffic.jwtAuthentication.mcp).',
    source: '2',
    notes:
      'Deprecated: use GwPolicy traffic.jwtAuthentication.mcp, which runs before transformation and rate limiting.',
  },
  object({
    resourceMetadata: resourceMetadataField,
    provider: McpIDP,
    issuer: refine(ShortString, { description: 'Expected iss claim.' }),
    audiences: audiencesField,
    jwks: required(refine(RemoteJWKS, { description: "Endpoint of the identity provider's key set." })),
    mode: jwtModeField,
    clientId: clientIdField,
    clientSecretRef: refine(LocalSecretKeyRef, {
      description: 'Client secret injected into proxied token requests; key clientSecret unless secretRef.key is set.',
    }),
  }),
);
export type MCPAuthentication = Infer<typeof MCPAuthentication>;

// ---------------------------------------------------------------------------------------------
// CEL authorization.

export const AuthorizationPolicy = named(
  { name: 'AuthorizationPolicy', description: 'The CEL expressions of an authorization rule.', source: '2' },
  object({
    matchExpressions: required(
      array(CELExpression, {
        minItems: 1,
        maxItems: 256,
        description: 'The rule matches when every expression is true.',
      }),
    ),
  }),
);
export type AuthorizationPolicy = Infer<typeof AuthorizationPolicy>;

export const Authorization = named(
  {
    name: 'Authorization',
    description: 'CEL rules that allow or deny requests.',
    source: '2',
    notes:
      'Allow rules: any match allows, and once an Allow rule exists unmatched requests are denied. Require rules: all must match. Deny rules: any match denies, but an expression that fails does not deny, so Deny is discouraged. HTTP-level denial is 403; for MCP, list results are filtered and get/call of a denied item is rejected.',
  },
  object({
    policy: required(AuthorizationPolicy),
    action: enumOf(['Allow', 'Deny', 'Require'], {
      default: 'Allow',
      description:
        'Allow: once any Allow rule exists, only requests matching one are let through. Deny: a match is refused. Require: every Require rule must match.',
    }),
  }),
);
export type Authorization = Infer<typeof Authorization>;

// ---------------------------------------------------------------------------------------------
// External authorization.

export const FailureMode = named(
  {
    name: 'FailureMode',
    description:
      'What happens when a called service cannot be used: FailClosed fails the request, FailOpen carries on without it.',
    source: '2',
    notes:
      'FailClosed fails the request when the service cannot be used; FailOpen carries on without it. For MCP: fail the whole session vs skip failed targets.',
  },
  enumOf(['FailClosed', 'FailOpen']),
);
export type FailureMode = Infer<typeof FailureMode>;

const failClosedByDefault = refine(FailureMode, {
  default: 'FailClosed',
  description: 'What happens when the service cannot be reached or errors.',
});
// In an OrConditional type the inline failureMode carries no structural default: a defaulted
// value would always be "set" and so clash with `conditional`. FailClosed applies at runtime.
const failClosedWhenUnset = refine(FailureMode, {
  description: 'What happens when the service cannot be reached or errors; FailClosed when unset.',
});

export const ExtAuthBody = named(
  {
    name: 'ExtAuthBody',
    description: 'Sending the request body to the authorization service, up to a size.',
    source: '2',
  },
  object({
    maxSize: required(refine(ByteSize, { description: 'Largest request body forwarded; a larger body is rejected.' })),
  }),
);
export type ExtAuthBody = Infer<typeof ExtAuthBody>;

export const ExtAuthCache = named(
  {
    name: 'ExtAuthCache',
    description: 'Caching of authorization decisions, by a CEL key.',
    source: '2',
    notes:
      "A key that does not tell requests apart can hand one request's result to another. When a key expression fails the request goes to the server uncached.",
  },
  object({
    key: required(
      array(CELExpression, {
        minItems: 1,
        maxItems: 16,
        description: 'Expressions whose values together form the cache key.',
      }),
    ),
    ttl: required(
      refine(CELExpression, {
        description:
          'A duration string, or CEL yielding a duration or an expiry timestamp; evaluated after the response is applied.',
      }),
    ),
    maxEntries: integer({ minimum: 1, default: 10000, description: 'Most results kept.' }),
  }),
);
export type ExtAuthCache = Infer<typeof ExtAuthCache>;

const celMap = (description: string) => map(CELExpression, { maxProperties: 64, description });

export const AgentExtAuthGRPC = named(
  {
    name: 'AgentExtAuthGRPC',
    description: 'Settings of an external authorization service spoken to over gRPC.',
    source: '2',
  },
  object({
    contextExtensions: map(string(), {
      maxProperties: 64,
      description: 'Fixed context extensions sent with each check request.',
    }),
    requestMetadata: celMap(
      'Metadata sent with each check request, name to CEL; when unset and a JWT policy applies, the JWT claims are sent under a default key.',
    ),
  }),
);
export type AgentExtAuthGRPC = Infer<typeof AgentExtAuthGRPC>;

const headerNameList = (description: string) => array(ShortString, { maxItems: 64, description });

export const AgentExtAuthHTTP = named(
  {
    name: 'AgentExtAuthHTTP',
    description: 'Settings of an external authorization service spoken to over plain HTTP.',
    source: '2',
  },
  object({
    path: refine(CELExpression, { description: 'Path of the check request; the original request path when unset.' }),
    redirect: refine(CELExpression, { description: 'Path to redirect the client to when authorization fails.' }),
    body: refine(CELExpression, {
      description: 'Body of the check request; strings and bytes are sent as they are, other values JSON-encoded.',
    }),
    allowedRequestHeaders: headerNameList(
      'Request headers copied to the check request; only Authorization when unset.',
    ),
    addRequestHeaders: celMap('Headers added to the check request, name to CEL.'),
    allowedResponseHeaders: headerNameList('Headers of the check response copied to the backend request.'),
    responseMetadata: celMap('Values computed from the check response, available to later CEL as extauthz.<name>.'),
  }),
);
export type AgentExtAuthHTTP = Infer<typeof AgentExtAuthHTTP>;

// ExtAuth's fields besides endpoint and failureMode, shared with ExtAuthOrConditional.
const extAuthFields = {
  grpc: refine(AgentExtAuthGRPC, { description: 'Talk to the server with the gRPC authorization protocol.' }),
  http: refine(AgentExtAuthHTTP, { description: 'Talk to the server over plain HTTP; a 200 answer allows.' }),
  forwardBody: refine(ExtAuthBody, { description: 'Forward the request body to the server.' }),
  cache: refine(ExtAuthCache, { description: 'Reuse results for requests with the same key.' }),
};
const extAuthInlineNames = ['backendRef', 'url', 'failureMode', 'grpc', 'http', 'forwardBody', 'cache'] as const;

export const ExtAuth = named(
  {
    name: 'ExtAuth',
    description: 'An external authorization service that decides on each request.',
    source: '2',
    notes:
      'With neither grpc nor http set the gRPC protocol is used. In HTTP mode any status other than 200 is an authorization failure.',
  },
  object(
    { ...endpointReferenceFields, failureMode: failClosedByDefault, ...extAuthFields },
    { rules: [endpointReferenceRule, atMostOneOf(['grpc', 'http'])] },
  ),
);
export type ExtAuth = Infer<typeof ExtAuth>;

export const ExtAuthConditional = named(
  {
    name: 'ExtAuthConditional',
    description: 'An external authorization service used when its CEL condition holds.',
    source: '2',
  },
  object({ condition: conditionField, policy: required(ExtAuth) }),
);
export type ExtAuthConditional = Infer<typeof ExtAuthConditional>;

export const ExtAuthOrConditional = named(
  {
    name: 'ExtAuthOrConditional',
    description: 'External authorization: one service, or a list of services chosen by CEL conditions.',
    source: '2',
    notes:
      'Either one ExtAuth inline or a conditional list of them. Inline failureMode defaults to FailClosed at runtime.',
  },
  object(
    {
      ...endpointReferenceFields,
      failureMode: failClosedWhenUnset,
      ...extAuthFields,
      conditional: array(ExtAuthConditional, {
        minItems: 1,
        maxItems: 16,
        description: 'Alternative settings chosen per request; the first entry whose condition holds runs.',
        rules: [conditionalFallbackLastRule],
      }),
    },
    {
      rules: [
        conditionalExcludesRule(extAuthInlineNames),
        endpointUnlessConditionalRule,
        atMostOneOf(['grpc', 'http']),
      ],
    },
  ),
);
export type ExtAuthOrConditional = Infer<typeof ExtAuthOrConditional>;

// ---------------------------------------------------------------------------------------------
// External processing.

export const BodySendMode = named(
  {
    name: 'BodySendMode',
    description:
      'How a body is sent to the processor: None, Buffered (whole; an error over the buffer limit), BufferedPartial (the buffered prefix) or FullDuplexStreamed.',
    source: '2',
    notes:
      'None: not sent. Buffered: sent whole, an error when over the buffer limit. BufferedPartial: the buffered prefix is sent when over the limit. FullDuplexStreamed: streamed both ways.',
  },
  enumOf(['None', 'Buffered', 'BufferedPartial', 'FullDuplexStreamed']),
);
export type BodySendMode = Infer<typeof BodySendMode>;

export const HeaderSendMode = named(
  { name: 'HeaderSendMode', description: 'Whether headers are sent to the processor: Send or Skip.', source: '2' },
  enumOf(['Send', 'Skip']),
);
export type HeaderSendMode = Infer<typeof HeaderSendMode>;

export const TrailerSendMode = named(
  {
    name: 'TrailerSendMode',
    description: 'Whether trailers are sent to the processor: Send or Skip.',
    source: 'gw',
    notes: 'Values not shown in the spec; gw uses Send and Skip, like HeaderSendMode (as agentgateway does).',
  },
  enumOf(['Send', 'Skip']),
);
export type TrailerSendMode = Infer<typeof TrailerSendMode>;

export const ProcessingOptions = named(
  {
    name: 'ProcessingOptions',
    description: 'What is sent to the external processor: headers, bodies and trailers of each direction.',
    source: '2',
  },
  object({
    requestBodyMode: refine(BodySendMode, { default: 'FullDuplexStreamed' }),
    responseBodyMode: refine(BodySendMode, { default: 'FullDuplexStreamed' }),
    requestHeaderMode: refine(HeaderSendMode, { default: 'Send' }),
    responseHeaderMode: refine(HeaderSendMode, { default: 'Send' }),
    requestTrailerMode: refine(TrailerSendMode, { default: 'Send' }),
    responseTrailerMode: refine(TrailerSendMode, { default: 'Send' }),
    allowModeOverride: boolean({
      default: false,
      description: 'Let the processor change these modes in its responses.',
    }),
  }),
);
export type ProcessingOptions = Infer<typeof ProcessingOptions>;

// ExtProc's fields besides endpoint and failureMode, shared with ExtProcOrConditional.
const extProcFields = {
  processingOptions: refine(ProcessingOptions, {
    description: 'Which parts of the traffic are sent to the processor.',
  }),
  metadataContext: map(map(CELExpression), {
    maxProperties: 64,
    description: 'Metadata sent to the processor: namespace to (key to CEL).',
  }),
  requestAttributes: celMap('Attributes sent with request messages, name to CEL.'),
  responseAttributes: celMap('Attributes sent with response messages, name to CEL.'),
};
const extProcInlineNames = [
  'backendRef',
  'url',
  'failureMode',
  'processingOptions',
  'metadataContext',
  'requestAttributes',
  'responseAttributes',
] as const;
const extProcFailureNote = ' FailOpen applies only while the request body has not started streaming.';

export const ExtProc = named(
  {
    name: 'ExtProc',
    description:
      'An external processing service (Envoy ext_proc protocol) that can read and change requests and responses.',
    source: '2',
  },
  object(
    {
      ...endpointReferenceFields,
      failureMode: refine(failClosedByDefault, {
        description: `What happens when the processor cannot be reached or errors.${extProcFailureNote}`,
      }),
      ...extProcFields,
    },
    { rules: [endpointReferenceRule] },
  ),
);
export type ExtProc = Infer<typeof ExtProc>;

export const ExtProcConditional = named(
  { name: 'ExtProcConditional', description: 'An external processor used when its CEL condition holds.', source: '2' },
  object({ condition: conditionField, policy: required(ExtProc) }),
);
export type ExtProcConditional = Infer<typeof ExtProcConditional>;

export const ExtProcOrConditional = named(
  {
    name: 'ExtProcOrConditional',
    description: 'External processing: one processor, or a list of processors chosen by CEL conditions.',
    source: '2',
    notes:
      'Either one ExtProc inline or a conditional list of them. Inline failureMode defaults to FailClosed at runtime.',
  },
  object(
    {
      ...endpointReferenceFields,
      failureMode: refine(failClosedWhenUnset, {
        description: `What happens when the processor cannot be reached or errors; FailClosed when unset.${extProcFailureNote}`,
      }),
      ...extProcFields,
      conditional: array(ExtProcConditional, {
        minItems: 1,
        maxItems: 16,
        description: 'Alternative settings chosen per request; the first entry whose condition holds runs.',
        rules: [conditionalFallbackLastRule],
      }),
    },
    { rules: [conditionalExcludesRule(extProcInlineNames), endpointUnlessConditionalRule] },
  ),
);
export type ExtProcOrConditional = Infer<typeof ExtProcOrConditional>;
