// Spec document 2, "Traffic-level building blocks", and the GwPolicy `traffic` section that
// gathers them. Types the spec leaves "not shown" (CORS, Retry, Timeouts, Transformation,
// HTTPHeaderFilter, RateLimitDescriptorEntry, the Traffic field names) follow agentgateway's
// traffic policy, or Gateway API where agentgateway embeds a Gateway API type.
import { array, boolean, enumOf, integer, map, named, object, refine, required, string } from '../schema/build.ts';
import { atLeastOneOf, atMostOneOf, exactlyOneOf, requiredWhen } from '../schema/rules.ts';
import type { Infer, Schema, ValidationRule } from '../schema/schema.ts';
import { ByteSize, CELExpression, Duration, HeaderName, HTTPHeaderName, ShortString, TinyString } from './common.ts';
import {
  APIKeyAuthentication,
  Authorization,
  BasicAuthentication,
  conditionalExcludesRule,
  conditionalFallbackLastRule,
  conditionField,
  ExtAuthOrConditional,
  ExtProcOrConditional,
  FailureMode,
  JWTAuthentication,
} from './inbound-auth.ts';
import { endpointReferenceFields, endpointReferenceRule } from './references.ts';

/** A list that may hold '*' only as its single entry. */
function wildcardAlone(what: string): ValidationRule {
  return { rule: "!self.exists(x, x == '*') || self.size() == 1", message: `* may not be combined with other ${what}` };
}

function conditionalList<T>(entry: Schema<T>): Schema<T[]> {
  return array(entry, {
    minItems: 1,
    maxItems: 16,
    description: 'Alternative settings chosen per request; the first entry whose condition holds applies.',
    rules: [conditionalFallbackLastRule],
  });
}

// ---------------------------------------------------------------------------------------------
// Buffering, CSRF, CORS, delay.

export const BufferBody = named(
  {
    name: 'BufferBody',
    description: 'Buffering of one body: its size limit and what happens when a body is larger.',
    source: '2',
    notes: 'An oversized body with FailClosed is answered with 413 (request) or 502 (response).',
  },
  object({
    maxBytes: refine(ByteSize, {
      description: 'Largest body buffered; the proxy-wide setting (2Mi unless changed) when unset.',
    }),
    failureMode: refine(FailureMode, {
      default: 'FailClosed',
      description: 'FailClosed rejects a body over maxBytes; FailOpen passes it on unbuffered.',
    }),
  }),
);
export type BufferBody = Infer<typeof BufferBody>;

export const Buffer = named(
  { name: 'Buffer', description: 'Buffering of request and response bodies.', source: '2' },
  object({
    request: refine(BufferBody, { description: 'Buffer the whole request body before it is sent on.' }),
    response: refine(BufferBody, { description: 'Buffer the whole response body before it is sent on.' }),
  }),
);
export type Buffer = Infer<typeof Buffer>;

/** scheme://host[:port]: no path, query, fragment or user info; IPv6 hosts in brackets. */
const ORIGIN_PATTERN = '^[A-Za-z][A-Za-z0-9+.-]*://(\\[[0-9A-Fa-f:.]+\\]|[^/?#@\\s:\\[\\]]+)(:[0-9]{1,5})?$';

export const CSRF = named(
  {
    name: 'CSRF',
    description: 'Cross-site request forgery protection: unsafe requests from other origins are refused.',
    source: '2',
  },
  object({
    additionalOrigins: array(string({ minLength: 1, maxLength: 256, pattern: ORIGIN_PATTERN }), {
      minItems: 1,
      maxItems: 16,
      description: "Origins (scheme://host[:port]) trusted besides the request's own.",
    }),
  }),
);
export type CSRF = Infer<typeof CSRF>;

// A CORS origin: '*', or scheme://host[:port] whose host may start with a '*.' wildcard label.
const CORS_ORIGIN_PATTERN =
  '^(\\*|[A-Za-z][A-Za-z0-9+.-]*://(\\*\\.)?(\\[[0-9A-Fa-f:.]+\\]|[^/?#@\\s:*\\[\\]]+)(:[0-9]{1,5})?)$';

export const CORS = named(
  {
    name: 'CORS',
    description: 'CORS: which cross-origin requests browsers may make, answered by gw.',
    source: 'gw',
    notes:
      'Not shown in the spec; gw uses the fields of Gateway API\'s HTTPCORSFilter, as agentgateway does. "*" in allowOrigins, allowMethods or allowHeaders must stand alone.',
  },
  object({
    allowOrigins: array(string({ minLength: 1, maxLength: 253, pattern: CORS_ORIGIN_PATTERN }), {
      maxItems: 64,
      description:
        'Origins allowed to make cross-origin requests: "*", or scheme://host[:port] with an optional *. wildcard subdomain.',
      rules: [wildcardAlone('origins')],
    }),
    allowCredentials: boolean({ description: 'Allow requests with credentials (cookies, authorization headers).' }),
    allowMethods: array(enumOf(['GET', 'HEAD', 'POST', 'PUT', 'DELETE', 'CONNECT', 'OPTIONS', 'TRACE', 'PATCH', '*']), {
      maxItems: 9,
      description: 'Methods allowed in cross-origin requests, or "*".',
      rules: [wildcardAlone('methods')],
    }),
    allowHeaders: array(HTTPHeaderName, {
      maxItems: 64,
      description: 'Request headers allowed in cross-origin requests, or "*".',
      rules: [wildcardAlone('headers')],
    }),
    exposeHeaders: array(HTTPHeaderName, {
      maxItems: 64,
      description: 'Response headers scripts may read, or "*".',
    }),
    maxAge: integer({ minimum: 1, default: 5, description: 'Seconds a browser may cache the preflight response.' }),
  }),
);
export type CORS = Infer<typeof CORS>;

export const Delay = named(
  {
    name: 'Delay',
    description: 'A fixed delay added before the request is forwarded.',
    source: '2',
    notes: 'The delay counts against the request timeout.',
  },
  object({
    duration: required(
      refine(CELExpression, {
        description:
          'Delay before the request is sent on: a duration string such as 2s, a CEL duration, or a number of milliseconds. Zero or negative adds no delay.',
      }),
    ),
  }),
);
export type Delay = Infer<typeof Delay>;

// ---------------------------------------------------------------------------------------------
// Direct responses.

export const DirectResponseHeader = named(
  { name: 'DirectResponseHeader', description: 'A header of a direct response.', source: '2' },
  object({
    name: required(HTTPHeaderName),
    value: required(refine(CELExpression, { description: 'CEL that computes the header value.' })),
  }),
);
export type DirectResponseHeader = Infer<typeof DirectResponseHeader>;

// DirectResponse's fields besides status, shared with DirectResponseOrConditional.
const directResponseFields = {
  body: string({ minLength: 1, maxLength: 4096, description: 'Fixed response body.' }),
  bodyExpression: refine(CELExpression, {
    description: 'CEL that computes the body; strings and bytes are written as they are, other values as JSON.',
  }),
  headers: array(DirectResponseHeader, { minItems: 1, maxItems: 16, description: 'Response headers.' }),
};
const statusField = integer({ minimum: 200, maximum: 599, description: 'Response status code.' });
const bodyRule = atMostOneOf(['body', 'bodyExpression']);

export const DirectResponse = named(
  {
    name: 'DirectResponse',
    description: 'An answer gw sends itself instead of forwarding the request.',
    source: '2',
    notes:
      'The spec does not mark status required; gw requires it (as agentgateway does), since a response needs a status.',
  },
  object({ status: required(statusField), ...directResponseFields }, { rules: [bodyRule] }),
);
export type DirectResponse = Infer<typeof DirectResponse>;

export const DirectResponseConditional = named(
  {
    name: 'DirectResponseConditional',
    description: 'A direct response sent when its CEL condition holds.',
    source: '2',
  },
  object({ condition: conditionField, policy: required(DirectResponse) }),
);
export type DirectResponseConditional = Infer<typeof DirectResponseConditional>;

export const DirectResponseOrConditional = named(
  {
    name: 'DirectResponseOrConditional',
    description: 'A direct response, or a list of them chosen by CEL conditions.',
    source: '2',
  },
  object(
    { status: statusField, ...directResponseFields, conditional: conditionalList(DirectResponseConditional) },
    {
      rules: [
        conditionalExcludesRule(['status', 'body', 'bodyExpression', 'headers']),
        requiredWhen('status', '!has(self.conditional)', 'unless conditional is set'),
        bodyRule,
      ],
    },
  ),
);
export type DirectResponseOrConditional = Infer<typeof DirectResponseOrConditional>;

// ---------------------------------------------------------------------------------------------
// Rate limits.

export const RateLimitDescriptorEntry = named(
  {
    name: 'RateLimitDescriptorEntry',
    description: 'A descriptor key and the CEL expression of its value.',
    source: 'gw',
    notes: 'Not shown in the spec; gw follows agentgateway: a descriptor key and the CEL that computes its value.',
  },
  object({
    name: required(refine(TinyString, { description: 'Descriptor key sent to the rate limit service.' })),
    expression: required(
      refine(CELExpression, { description: 'CEL that computes the value, such as source.address.' }),
    ),
  }),
);
export type RateLimitDescriptorEntry = Infer<typeof RateLimitDescriptorEntry>;

export const RateLimitUnit = named(
  {
    name: 'RateLimitUnit',
    description: 'What a rate limit counts: Requests or Tokens.',
    source: '2',
    notes: 'The spec names Requests and Tokens and says the full set is not shown; gw accepts those two.',
  },
  enumOf(['Requests', 'Tokens']),
);
export type RateLimitUnit = Infer<typeof RateLimitUnit>;

export const RateLimitDescriptor = named(
  {
    name: 'RateLimitDescriptor',
    description: 'A descriptor sent to the rate limit service, and what it counts.',
    source: '2',
  },
  object({
    entries: required(
      array(RateLimitDescriptorEntry, {
        minItems: 1,
        maxItems: 16,
        description: 'Name and CEL value pairs that make up the descriptor sent to the rate limit service.',
      }),
    ),
    unit: refine(RateLimitUnit, { default: 'Requests', description: 'What the limit counts.' }),
    cost: refine(CELExpression, {
      description:
        'Amount charged: 1 for Requests, the total token count for Tokens when unset. A Tokens cost is evaluated after completion; for streamed responses the response is unavailable but llm attributes are.',
    }),
    limitOverride: refine(CELExpression, {
      description: "CEL returning an object with unit and requestsPerUnit that replaces the service's limit.",
    }),
  }),
);
export type RateLimitDescriptor = Infer<typeof RateLimitDescriptor>;

export const GlobalRateLimit = named(
  {
    name: 'GlobalRateLimit',
    description: 'Rate limits kept by an external rate limit service, shared by every proxy instance.',
    source: '2',
  },
  object(
    {
      ...endpointReferenceFields,
      failureMode: refine(FailureMode, {
        default: 'FailClosed',
        description: 'What happens when the rate limit service cannot be reached or errors.',
      }),
      domain: required(refine(ShortString, { description: 'Rate limit domain sent to the service.' })),
      descriptors: required(
        array(RateLimitDescriptor, {
          minItems: 1,
          maxItems: 16,
          description: 'Descriptors checked with the rate limit service for each request.',
        }),
      ),
    },
    { rules: [endpointReferenceRule] },
  ),
);
export type GlobalRateLimit = Infer<typeof GlobalRateLimit>;

export const LocalRateLimit = named(
  {
    name: 'LocalRateLimit',
    description:
      'A rate limit counted by each proxy instance on its own: requests or tokens per unit of time, with a burst.',
    source: '2',
    notes:
      'Counted per proxy instance, with no coordination between instances. Exceeding it answers 429; token counts are known after completion, so token limits apply to later requests.',
  },
  object(
    {
      requests: integer({ minimum: 1, description: 'Requests allowed per unit.' }),
      tokens: integer({ minimum: 1, description: 'LLM tokens (input and output) allowed per unit.' }),
      unit: required(enumOf(['Seconds', 'Minutes', 'Hours'], { description: 'Period of the limit.' })),
      burst: integer({ minimum: 0, description: 'Extra allowance on top of the rate for short bursts.' }),
    },
    { rules: [exactlyOneOf(['requests', 'tokens'])] },
  ),
);
export type LocalRateLimit = Infer<typeof LocalRateLimit>;

const rateLimitFields = {
  local: array(LocalRateLimit, { minItems: 1, maxItems: 16, description: 'Per-proxy limits; all apply.' }),
  global: refine(GlobalRateLimit, { description: 'Limits kept by a rate limit service shared by all proxies.' }),
};

export const RateLimits = named(
  {
    name: 'RateLimits',
    description: 'Local and global rate limits.',
    source: 'gw',
    notes:
      'The traffic rateLimit section (not shown in the spec), after agentgateway: local limits, a global limit, or both.',
  },
  object(rateLimitFields, { rules: [atLeastOneOf(['local', 'global'])] }),
);
export type RateLimits = Infer<typeof RateLimits>;

export const RateLimitsConditional = named(
  {
    name: 'RateLimitsConditional',
    description: 'Rate limits applied when their CEL condition holds.',
    source: 'gw',
    notes: 'A conditional entry of RateLimitsOrConditional.',
  },
  object({ condition: conditionField, policy: required(RateLimits) }),
);
export type RateLimitsConditional = Infer<typeof RateLimitsConditional>;

export const RateLimitsOrConditional = named(
  {
    name: 'RateLimitsOrConditional',
    description: 'Rate limits, or a list of them chosen by CEL conditions.',
    source: 'gw',
    notes: 'RateLimits inline, or a conditional list of them (the OrConditional pattern of the spec).',
  },
  object(
    { ...rateLimitFields, conditional: conditionalList(RateLimitsConditional) },
    { rules: [atLeastOneOf(['local', 'global', 'conditional']), conditionalExcludesRule(['local', 'global'])] },
  ),
);
export type RateLimitsOrConditional = Infer<typeof RateLimitsOrConditional>;

// ---------------------------------------------------------------------------------------------
// Headers and host.

export const HTTPHeader = named(
  {
    name: 'HTTPHeader',
    description: 'A header name and value.',
    source: 'gateway-api',
    notes: 'Gateway API HTTPHeader: a header name and a literal value.',
  },
  object({
    name: required(HTTPHeaderName),
    value: required(string({ minLength: 1, maxLength: 4096, description: 'Header value.' })),
  }),
);
export type HTTPHeader = Infer<typeof HTTPHeader>;

export const HTTPHeaderFilter = named(
  {
    name: 'HTTPHeaderFilter',
    description: 'Headers to set, add or remove.',
    source: 'gateway-api',
    notes: "Fields not shown in the spec; gw uses Gateway API's HTTPHeaderFilter (values are literals, not CEL).",
  },
  object({
    set: array(HTTPHeader, {
      maxItems: 16,
      listType: 'map',
      listMapKeys: ['name'],
      description: 'Headers to set, replacing any existing value.',
    }),
    add: array(HTTPHeader, {
      maxItems: 16,
      listType: 'map',
      listMapKeys: ['name'],
      description: 'Headers to add, keeping existing values.',
    }),
    remove: array(HTTPHeaderName, {
      maxItems: 16,
      listType: 'set',
      description: 'Names of headers to remove.',
    }),
  }),
);
export type HTTPHeaderFilter = Infer<typeof HTTPHeaderFilter>;

export const HeaderModifiers = named(
  { name: 'HeaderModifiers', description: 'Headers set, added or removed on requests and responses.', source: '2' },
  object({
    request: refine(HTTPHeaderFilter, { description: 'Changes to request headers.' }),
    response: refine(HTTPHeaderFilter, { description: 'Changes to response headers.' }),
  }),
);
export type HeaderModifiers = Infer<typeof HeaderModifiers>;

export const HostnameRewrite = named(
  {
    name: 'HostnameRewrite',
    description: 'Whether the Host header is rewritten to the backend host.',
    source: '2',
    notes: 'Without this section the host is rewritten (Auto) for hostname-based backends and kept (None) otherwise.',
  },
  object({
    mode: required(
      enumOf(['Auto', 'None'], {
        description: "Auto sets the Host/authority to the backend's hostname; None keeps the client's.",
      }),
    ),
  }),
);
export type HostnameRewrite = Infer<typeof HostnameRewrite>;

// ---------------------------------------------------------------------------------------------
// Transformation.

export const HeaderTransformation = named(
  {
    name: 'HeaderTransformation',
    description: 'A header and the CEL expression that computes its value.',
    source: '2',
  },
  object({
    name: required(HeaderName),
    value: required(refine(CELExpression, { description: 'CEL that computes the header value.' })),
  }),
);
export type HeaderTransformation = Infer<typeof HeaderTransformation>;

export const Transform = named(
  {
    name: 'Transform',
    description:
      'Changes made to one direction of traffic: headers set, added or removed, the body and metadata, computed with CEL.',
    source: 'gw',
    notes:
      'The changes made to one direction of traffic by a Transformation (not shown in the spec; after agentgateway). metadata is evaluated first and is visible to the other expressions as `metadata`.',
  },
  object(
    {
      set: array(HeaderTransformation, {
        minItems: 1,
        maxItems: 16,
        listType: 'map',
        listMapKeys: ['name'],
        description: 'Headers to set, replacing any existing value.',
      }),
      add: array(HeaderTransformation, {
        minItems: 1,
        maxItems: 16,
        description: 'Headers to add, keeping existing values.',
      }),
      remove: array(HeaderName, { minItems: 1, maxItems: 16, description: 'Names of headers to remove.' }),
      body: refine(CELExpression, { description: 'CEL that computes the new body.' }),
      metadata: map(CELExpression, {
        minProperties: 1,
        maxProperties: 16,
        description: 'Named values computed before the header and body changes.',
      }),
    },
    { rules: [atLeastOneOf(['set', 'add', 'remove', 'body', 'metadata'])] },
  ),
);
export type Transform = Infer<typeof Transform>;

const transformationFields = {
  request: refine(Transform, { description: 'Changes to the request.' }),
  response: refine(Transform, { description: 'Changes to the response.' }),
};

export const Transformation = named(
  {
    name: 'Transformation',
    description: 'Changes to request and response headers and bodies, computed with CEL.',
    source: 'gw',
    notes:
      'Not shown in the spec; gw follows agentgateway: CEL-computed header, body and metadata changes for the request and the response.',
  },
  object(transformationFields, { rules: [atLeastOneOf(['request', 'response'])] }),
);
export type Transformation = Infer<typeof Transformation>;

export const TransformationConditional = named(
  {
    name: 'TransformationConditional',
    description: 'A transformation applied when its CEL condition holds.',
    source: 'gw',
    notes: 'A conditional entry of TransformationOrConditional.',
  },
  object({ condition: conditionField, policy: required(Transformation) }),
);
export type TransformationConditional = Infer<typeof TransformationConditional>;

export const TransformationOrConditional = named(
  {
    name: 'TransformationOrConditional',
    description: 'A transformation, or a list of them chosen by CEL conditions.',
    source: 'gw',
    notes: 'Transformation inline, or a conditional list of them (the OrConditional pattern of the spec).',
  },
  object(
    { ...transformationFields, conditional: conditionalList(TransformationConditional) },
    {
      rules: [atLeastOneOf(['request', 'response', 'conditional']), conditionalExcludesRule(['request', 'response'])],
    },
  ),
);
export type TransformationOrConditional = Infer<typeof TransformationOrConditional>;

// ---------------------------------------------------------------------------------------------
// Retry and timeouts.

export const Retry = named(
  {
    name: 'Retry',
    description: 'Retries of failed requests to HTTP backends.',
    source: 'gw',
    notes:
      "Not shown in the spec; gw uses Gateway API's HTTPRouteRetry fields (codes, attempts, backoff) plus agentgateway's precondition and condition expressions.",
  },
  object({
    codes: array(integer({ minimum: 400, maximum: 599 }), {
      listType: 'set',
      description: 'Response status codes that are retried.',
    }),
    attempts: integer({ minimum: 1, description: 'Most retries of one request.' }),
    backoff: refine(Duration, { description: 'Wait before each retry.' }),
    precondition: refine(CELExpression, {
      description: 'Evaluated before the first attempt; when false the request is not retried.',
    }),
    condition: refine(CELExpression, {
      description: 'Evaluated on each response; a response is retried when its code is in codes or this is true.',
    }),
  }),
);
export type Retry = Infer<typeof Retry>;

export const Timeouts = named(
  {
    name: 'Timeouts',
    description: 'Request timeouts.',
    source: 'gw',
    notes:
      'Not shown in the spec; gw follows agentgateway: one request deadline (a per-attempt backend deadline is the backend policy http.requestTimeout).',
  },
  object(
    {
      request: refine(Duration, {
        description: 'Deadline for the whole request, retries included; at least 1ms.',
        rules: [{ rule: "duration(self) >= duration('1ms')", message: 'request must be at least 1ms' }],
      }),
    },
    { rules: [atLeastOneOf(['request'])] },
  ),
);
export type Timeouts = Infer<typeof Timeouts>;

// ---------------------------------------------------------------------------------------------
// Policy strategy, phase and the traffic section.

export const PolicyStrategy = named(
  {
    name: 'PolicyStrategy',
    description: 'How this policy combines with more specific ones.',
    source: '2',
    notes:
      'Override drops more specific traffic policies from the effective policy; Default (or unset) merges normally. Traffic policies only.',
  },
  object({
    inheritance: enumOf(['Default', 'Override'], { description: 'How this policy combines with more specific ones.' }),
  }),
);
export type PolicyStrategy = Infer<typeof PolicyStrategy>;

export const PolicyPhase = named(
  {
    name: 'PolicyPhase',
    description: 'When traffic policies run: PreRouting (before a route is chosen) or PostRouting.',
    source: '2',
    notes: 'PreRouting runs before a route is chosen (Gateway or ListenerSet targets only); PostRouting after.',
  },
  enumOf(['PreRouting', 'PostRouting']),
);
export type PolicyPhase = Infer<typeof PolicyPhase>;

/** Traffic fields that only make sense once a route is chosen. */
const postRoutingOnlyFields = [
  'buffer',
  'csrf',
  'delay',
  'directResponse',
  'headerModifiers',
  'hostRewrite',
  'rateLimit',
  'retry',
  'timeouts',
] as const;

export const Traffic = named(
  {
    name: 'Traffic',
    description:
      'Policies for requests on their way through gw: rate limits, authentication, authorization, transformations, timeouts, retries and more.',
    source: 'gw',
    notes:
      "The spec shows only jwtAuthentication; the other field names follow agentgateway's traffic policy. phase is PostRouting when unset (a runtime default, so that an unset phase does not win a merge). With phase PreRouting only authentication, authorization, extAuth, extProc, transformation and cors may be set.",
  },
  object(
    {
      phase: refine(PolicyPhase, {
        description: 'When the policy runs: before or after route selection; PostRouting when unset.',
      }),
      transformation: refine(TransformationOrConditional, { description: 'CEL-computed header and body changes.' }),
      extProc: refine(ExtProcOrConditional, { description: 'Send traffic through an external processor.' }),
      extAuth: refine(ExtAuthOrConditional, { description: 'Ask an external authorization server.' }),
      rateLimit: refine(RateLimitsOrConditional, { description: 'Local and global rate limits.' }),
      cors: refine(CORS, { description: 'Cross-origin resource sharing.' }),
      csrf: refine(CSRF, { description: 'Cross-site request forgery protection.' }),
      headerModifiers: refine(HeaderModifiers, { description: 'Literal request and response header changes.' }),
      hostRewrite: refine(HostnameRewrite, { description: 'Rewrite of the Host/authority sent to the backend.' }),
      timeouts: Timeouts,
      retry: Retry,
      authorization: refine(Authorization, { description: 'CEL authorization of requests.' }),
      jwtAuthentication: refine(JWTAuthentication, { description: 'Validate JWTs; with mcp, also MCP OAuth.' }),
      basicAuthentication: refine(BasicAuthentication, { description: 'HTTP basic authentication.' }),
      apiKeyAuthentication: refine(APIKeyAuthentication, { description: 'API key authentication.' }),
      directResponse: refine(DirectResponseOrConditional, { description: 'Answer without calling a backend.' }),
      buffer: refine(Buffer, { description: 'Buffer whole bodies.' }),
      delay: refine(Delay, { description: 'Delay requests (fault injection).' }),
    },
    {
      rules: [
        {
          rule: `!has(self.phase) || self.phase != 'PreRouting' || ![${postRoutingOnlyFields.map((f) => `has(self.${f})`).join(', ')}].exists(x, x)`,
          message:
            'with phase PreRouting only authorization, transformation, extProc, extAuth, jwtAuthentication, basicAuthentication, apiKeyAuthentication and cors may be set',
        },
      ],
    },
  ),
);
export type Traffic = Infer<typeof Traffic>;
