// Gateway API HTTPRoute: matching HTTP requests and sending them to backends, with filters.
import { array, boolean, enumOf, integer, named, object, refine, required, string } from '../../schema/build.ts';
import type { Infer, Schema, ValidationRule } from '../../schema/schema.ts';
import { Duration, HTTPHeaderName, PortNumber, SectionName } from '../../types/common.ts';
import { HTTPHeaderFilter } from '../../types/traffic.ts';
import {
  backendObjectReferenceFields,
  GatewayBackendObjectReference,
  Hostname,
  LocalObjectReference,
  ParentReference,
  PreciseHostname,
  RouteParentStatus,
  servicePortRule,
} from './shared.ts';

const HTTP_METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'DELETE', 'CONNECT', 'OPTIONS', 'TRACE', 'PATCH'] as const;

export const HTTPMethod = named(
  { name: 'HTTPMethod', description: 'An HTTP method.', source: 'gateway-api' },
  enumOf(HTTP_METHODS),
);
export type HTTPMethod = Infer<typeof HTTPMethod>;

// --- matches ----------------------------------------------------------------------------------------

/** RFC 3986 path characters or percent-escapes. */
const PATH_CHARS_PATTERN = "^(?:[-A-Za-z0-9/._~!$&'()*+,;=:@]|[%][0-9a-fA-F]{2})+$";
const EXACT_OR_PREFIX = "self.type in ['Exact', 'PathPrefix']";

function pathRule(condition: string, message: string): ValidationRule {
  return {
    rule: `${EXACT_OR_PREFIX} ? ${condition} : true`,
    message: `${message} when type one of ['Exact', 'PathPrefix']`,
  };
}

export const HTTPPathMatch = named(
  {
    name: 'HTTPPathMatch',
    description: 'How the request path is matched.',
    source: 'gateway-api',
    notes:
      'PathPrefix matches whole path elements (`/abc` matches `/abc/def`, not `/abcd`); RegularExpression syntax is implementation-specific.',
  },
  object(
    {
      type: enumOf(['Exact', 'PathPrefix', 'RegularExpression'], {
        default: 'PathPrefix',
        description: 'How the path is compared: Exact, PathPrefix (default; whole segments) or RegularExpression.',
      }),
      value: string({ maxLength: 1024, default: '/', description: 'Path to match; default /.' }),
    },
    {
      rules: [
        {
          rule: `${EXACT_OR_PREFIX} ? self.value.startsWith('/') : true`,
          message: "value must be an absolute path and start with '/' when type one of ['Exact', 'PathPrefix']",
        },
        pathRule("!self.value.contains('//')", "must not contain '//'"),
        pathRule("!self.value.contains('/./')", "must not contain '/./'"),
        pathRule("!self.value.contains('/../')", "must not contain '/../'"),
        pathRule("!self.value.contains('%2f')", "must not contain '%2f'"),
        pathRule("!self.value.contains('%2F')", "must not contain '%2F'"),
        pathRule("!self.value.contains('#')", "must not contain '#'"),
        pathRule("!self.value.endsWith('/..')", "must not end with '/..'"),
        pathRule("!self.value.endsWith('/.')", "must not end with '/.'"),
        {
          rule: "self.type in ['Exact', 'PathPrefix', 'RegularExpression']",
          message: "type must be one of ['Exact', 'PathPrefix', 'RegularExpression']",
        },
        {
          rule: `${EXACT_OR_PREFIX} ? self.value.matches(r"${PATH_CHARS_PATTERN}") : true`,
          message: `must only contain valid characters (matching ${PATH_CHARS_PATTERN}) for types ['Exact', 'PathPrefix']`,
        },
      ],
    },
  ),
);
export type HTTPPathMatch = Infer<typeof HTTPPathMatch>;

export const HTTPHeaderMatch = named(
  {
    name: 'HTTPHeaderMatch',
    description: 'A request header that must match.',
    source: 'gateway-api',
    notes: 'Header names match case-insensitively; of equivalent names only the first entry counts.',
  },
  object({
    type: enumOf(['Exact', 'RegularExpression'], {
      default: 'Exact',
      description: 'How the value is compared: Exact (default) or RegularExpression.',
    }),
    name: required(HTTPHeaderName),
    value: required(string({ minLength: 1, maxLength: 4096, description: 'Value to match.' })),
  }),
);
export type HTTPHeaderMatch = Infer<typeof HTTPHeaderMatch>;

export const HTTPQueryParamMatch = named(
  {
    name: 'HTTPQueryParamMatch',
    description: 'A query parameter that must match.',
    source: 'gateway-api',
    notes: 'Parameter names match exactly (case-sensitively); of repeated names only the first entry counts.',
  },
  object({
    type: enumOf(['Exact', 'RegularExpression'], {
      default: 'Exact',
      description: 'How the value is compared: Exact (default) or RegularExpression.',
    }),
    name: required(HTTPHeaderName),
    value: required(string({ minLength: 1, maxLength: 1024, description: 'Value to match.' })),
  }),
);
export type HTTPQueryParamMatch = Infer<typeof HTTPQueryParamMatch>;

const defaultPathMatch = { type: 'PathPrefix' as const, value: '/' };

export const HTTPRouteMatch = named(
  {
    name: 'HTTPRouteMatch',
    description: 'Conditions on a request (path, headers, query parameters, method) that all must hold.',
    source: 'gateway-api',
    notes: 'All conditions of one match must hold (AND); the matches of a rule are alternatives (OR).',
  },
  object({
    path: refine(HTTPPathMatch, { default: defaultPathMatch }),
    headers: array(HTTPHeaderMatch, {
      maxItems: 16,
      listType: 'map',
      listMapKeys: ['name'],
      description: 'Request headers that must match, all of them.',
    }),
    queryParams: array(HTTPQueryParamMatch, {
      maxItems: 16,
      listType: 'map',
      listMapKeys: ['name'],
      description: 'Query parameters that must match, all of them.',
    }),
    method: HTTPMethod,
  }),
);
export type HTTPRouteMatch = Infer<typeof HTTPRouteMatch>;

// --- filters -----------------------------------------------------------------------------------------

function pathModifierPair(type: string, field: string): ValidationRule[] {
  return [
    {
      rule: `self.type == '${type}' ? has(self.${field}) : true`,
      message: `${field} must be specified when type is set to '${type}'`,
    },
    {
      rule: `has(self.${field}) ? self.type == '${type}' : true`,
      message: `type must be '${type}' when ${field} is set`,
    },
  ];
}

export const HTTPPathModifier = named(
  {
    name: 'HTTPPathModifier',
    description: 'How a path is replaced: the whole path, or its matched prefix.',
    source: 'gateway-api',
  },
  object(
    {
      type: required(
        enumOf(['ReplaceFullPath', 'ReplacePrefixMatch'], {
          description:
            'ReplaceFullPath replaces the whole path; ReplacePrefixMatch replaces the prefix the rule matched.',
        }),
      ),
      replaceFullPath: string({ maxLength: 1024, description: 'The new path.' }),
      replacePrefixMatch: string({ maxLength: 1024, description: 'Replacement for the matched path prefix.' }),
    },
    {
      rules: [
        ...pathModifierPair('ReplaceFullPath', 'replaceFullPath'),
        ...pathModifierPair('ReplacePrefixMatch', 'replacePrefixMatch'),
      ],
    },
  ),
);
export type HTTPPathModifier = Infer<typeof HTTPPathModifier>;

const redirectStatusCode: Schema<301 | 302 | 303 | 307 | 308> = {
  ...integer({ default: 302, description: 'Redirect status code.' }),
  enum: [301, 302, 303, 307, 308],
} as Schema<301 | 302 | 303 | 307 | 308>;

export const HTTPRequestRedirectFilter = named(
  {
    name: 'HTTPRequestRedirectFilter',
    description: 'Answers with a redirect instead of forwarding.',
    source: 'gateway-api',
  },
  object({
    scheme: enumOf(['http', 'https'], { description: "Scheme of the Location; the request's scheme when omitted." }),
    hostname: refine(PreciseHostname, { description: "Host of the Location; the request's Host when omitted." }),
    path: refine(HTTPPathModifier, { description: "Path of the Location; the request's path when omitted." }),
    port: refine(PortNumber, {
      description: 'Port of the Location; derived from the scheme or listener when omitted.',
    }),
    statusCode: redirectStatusCode,
  }),
);
export type HTTPRequestRedirectFilter = Infer<typeof HTTPRequestRedirectFilter>;

export const HTTPURLRewriteFilter = named(
  { name: 'HTTPURLRewriteFilter', description: 'Rewrites the host or path before forwarding.', source: 'gateway-api' },
  object({
    hostname: refine(PreciseHostname, { description: 'Host header sent to the backend.' }),
    path: HTTPPathModifier,
  }),
);
export type HTTPURLRewriteFilter = Infer<typeof HTTPURLRewriteFilter>;

export const Fraction = named(
  { name: 'Fraction', description: 'A fraction of requests: numerator out of denominator.', source: 'gateway-api' },
  object(
    {
      numerator: required(
        integer({ format: 'int32', minimum: 0, description: 'Requests mirrored out of every denominator.' }),
      ),
      denominator: integer({
        format: 'int32',
        minimum: 1,
        default: 100,
        description: 'Base of the fraction; default 100.',
      }),
    },
    {
      rules: [
        { rule: 'self.numerator <= self.denominator', message: 'numerator must be less than or equal to denominator' },
      ],
    },
  ),
);
export type Fraction = Infer<typeof Fraction>;

export const HTTPRequestMirrorFilter = named(
  {
    name: 'HTTPRequestMirrorFilter',
    description: 'Sends a copy of each request to another backend, ignoring its answer.',
    source: 'gateway-api',
  },
  object(
    {
      backendRef: required(
        refine(GatewayBackendObjectReference, {
          description: 'Where copies of requests are sent; responses are ignored.',
        }),
      ),
      percent: integer({
        format: 'int32',
        minimum: 0,
        maximum: 100,
        description: 'Percentage of requests mirrored; all when neither percent nor fraction is set.',
      }),
      fraction: refine(Fraction, { description: 'Fraction of requests mirrored.' }),
    },
    {
      rules: [
        {
          rule: '!(has(self.percent) && has(self.fraction))',
          message: 'Only one of percent or fraction may be specified in HTTPRequestMirrorFilter',
        },
      ],
    },
  ),
);
export type HTTPRequestMirrorFilter = Infer<typeof HTTPRequestMirrorFilter>;

export const CORSOrigin = named(
  {
    name: 'CORSOrigin',
    description: 'An origin: *, or http(s)://host[:port] where host may be * or start with *.',
    source: 'gateway-api',
    notes: '`*`, or `http(s)://host[:port]` where host may be `*` or start with `*.`.',
  },
  string({
    minLength: 1,
    maxLength: 253,
    pattern: '(^\\*$)|(^(http(s)?):\\/\\/(((\\*\\.)?([a-zA-Z0-9\\-]+\\.)*[a-zA-Z0-9-]+|\\*)(:([0-9]{1,5}))?)$)',
  }),
);
export type CORSOrigin = Infer<typeof CORSOrigin>;

function aloneWildcard(what: string): ValidationRule[] {
  return [
    {
      rule: "!('*' in self && size(self) > 1)",
      message: `${what} cannot contain '*' alongside other ${what === 'AllowOrigins' ? 'origins' : 'methods'}`,
    },
  ];
}

export const HTTPCORSFilter = named(
  {
    name: 'HTTPCORSFilter',
    description: 'CORS: which cross-origin requests browsers may make, answered by gw.',
    source: 'gateway-api',
  },
  object({
    allowOrigins: array(CORSOrigin, {
      maxItems: 64,
      listType: 'set',
      rules: aloneWildcard('AllowOrigins'),
      description: 'Origins allowed to make cross-origin requests; * allows any.',
    }),
    allowCredentials: boolean({
      description: 'Whether the response allows credentials (Access-Control-Allow-Credentials).',
    }),
    allowMethods: array(enumOf([...HTTP_METHODS, '*']), {
      maxItems: 9,
      description: 'Methods allowed in cross-origin requests (Access-Control-Allow-Methods); * allows any.',
      listType: 'set',
      rules: aloneWildcard('AllowMethods'),
    }),
    // Upstream's message for headers says "methods"; kept so errors read as a cluster's would.
    allowHeaders: array(HTTPHeaderName, {
      maxItems: 64,
      listType: 'set',
      rules: aloneWildcard('AllowHeaders'),
      description: 'Request headers allowed in cross-origin requests (Access-Control-Allow-Headers); * allows any.',
    }),
    exposeHeaders: array(HTTPHeaderName, {
      maxItems: 64,
      listType: 'set',
      description: 'Response headers browsers may show to scripts (Access-Control-Expose-Headers).',
    }),
    maxAge: integer({
      format: 'int32',
      minimum: 1,
      default: 5,
      description: 'Seconds a preflight response may be cached.',
    }),
  }),
);
export type HTTPCORSFilter = Infer<typeof HTTPCORSFilter>;

const FILTER_TYPES = {
  requestHeaderModifier: 'RequestHeaderModifier',
  responseHeaderModifier: 'ResponseHeaderModifier',
  requestMirror: 'RequestMirror',
  requestRedirect: 'RequestRedirect',
  urlRewrite: 'URLRewrite',
  extensionRef: 'ExtensionRef',
  cors: 'CORS',
} as const;

/** The filter is a union discriminated by `type`: exactly the member named by type is set. */
const filterUnionRules: ValidationRule[] = Object.entries(FILTER_TYPES).flatMap(([field, type]) => [
  {
    rule: `!(has(self.${field}) && self.type != '${type}')`,
    message: `filter.${field} must be nil if the filter.type is not ${type}`,
  },
  {
    rule: `!(!has(self.${field}) && self.type == '${type}')`,
    message: `filter.${field} must be specified for ${type} filter.type`,
  },
]);

export const HTTPRouteFilter = named(
  {
    name: 'HTTPRouteFilter',
    description: 'A change made to requests or responses of a rule (headers, redirect, rewrite, mirror, CORS).',
    source: 'gateway-api',
    notes: 'gw implements every standard filter except ExtensionRef, which it reports on the route status.',
  },
  object(
    {
      type: required(
        enumOf(Object.values(FILTER_TYPES) as readonly (typeof FILTER_TYPES)[keyof typeof FILTER_TYPES][], {
          description: 'Which filter this is; the field of the same name holds its settings.',
        }),
      ),
      requestHeaderModifier: HTTPHeaderFilter,
      responseHeaderModifier: HTTPHeaderFilter,
      requestMirror: HTTPRequestMirrorFilter,
      requestRedirect: HTTPRequestRedirectFilter,
      urlRewrite: HTTPURLRewriteFilter,
      extensionRef: refine(LocalObjectReference, { description: 'An implementation-specific filter resource.' }),
      cors: HTTPCORSFilter,
    },
    { rules: filterUnionRules },
  ),
);
export type HTTPRouteFilter = Infer<typeof HTTPRouteFilter>;

function notRepeated(type: string): ValidationRule {
  return { rule: `self.filter(f, f.type == '${type}').size() <= 1`, message: `${type} filter cannot be repeated` };
}

/** Rules on a list of filters (rule-level and backendRef-level alike). */
const filterListRules: ValidationRule[] = [
  {
    rule: "!(self.exists(f, f.type == 'RequestRedirect') && self.exists(f, f.type == 'URLRewrite'))",
    message: 'May specify either httpRouteFilterRequestRedirect or httpRouteFilterRequestRewrite, but not both',
  },
  notRepeated('CORS'),
  notRepeated('RequestHeaderModifier'),
  notRepeated('ResponseHeaderModifier'),
  notRepeated('RequestRedirect'),
  notRepeated('URLRewrite'),
];

const filterList = (description: string) =>
  array(HTTPRouteFilter, { maxItems: 16, listType: 'atomic', rules: filterListRules, description });

export const HTTPBackendRef = named(
  {
    name: 'HTTPBackendRef',
    description: 'A backend of a route rule, its weight and its own filters.',
    source: 'gateway-api',
  },
  object(
    {
      ...backendObjectReferenceFields,
      weight: integer({
        format: 'int32',
        minimum: 0,
        maximum: 1000000,
        default: 1,
        description: 'Share of requests relative to the other backendRefs of the rule; 0 sends none.',
      }),
      filters: filterList('Filters applied only to requests sent to this backend.'),
    },
    { rules: [servicePortRule] },
  ),
);
export type HTTPBackendRef = Infer<typeof HTTPBackendRef>;

export const HTTPRouteTimeouts = named(
  {
    name: 'HTTPRouteTimeouts',
    description: 'Timeouts of the rule: for the whole request, and for each backend attempt.',
    source: 'gateway-api',
  },
  object(
    {
      request: refine(Duration, { description: 'Time for the whole request, retries included; 0s disables.' }),
      backendRequest: refine(Duration, { description: 'Time for each request to a backend.' }),
    },
    {
      rules: [
        {
          rule: "!(has(self.request) && has(self.backendRequest) && duration(self.request) != duration('0s') && duration(self.backendRequest) > duration(self.request))",
          message: 'backendRequest timeout cannot be longer than request timeout',
        },
      ],
    },
  ),
);
export type HTTPRouteTimeouts = Infer<typeof HTTPRouteTimeouts>;

/** A filter `f` rewriting the path by prefix replacement, for the given filter type and field. */
function prefixReplacing(f: string, type: string, field: string): string {
  return `${f}.type == '${type}' && has(${f}.${field}) && has(${f}.${field}.path) && ${f}.${field}.path.type == 'ReplacePrefixMatch' && has(${f}.${field}.path.replacePrefixMatch)`;
}

/** The rule has exactly one match and it is a PathPrefix match (absent matches default to one). */
const singlePrefixMatch =
  "(!has(self.matches) || (size(self.matches) == 1 && self.matches.all(m, has(m.path) && m.path.type == 'PathPrefix')))";

function prefixRewriteRules(): ValidationRule[] {
  const cases = [
    ['RequestRedirect', 'requestRedirect'],
    ['URLRewrite', 'urlRewrite'],
  ] as const;
  const ruleLevel = cases.map(([type, field]) => ({
    rule: `(has(self.filters) && self.filters.exists_one(f, ${prefixReplacing('f', type, field)})) ? ${singlePrefixMatch} : true`,
    message: `When using ${type} filter with path.replacePrefixMatch, exactly one PathPrefix match must be specified`,
  }));
  const backendLevel = cases.map(([type, field]) => ({
    rule: `(has(self.backendRefs) && self.backendRefs.exists_one(b, has(b.filters) && b.filters.exists_one(f, ${prefixReplacing('f', type, field)}))) ? ${singlePrefixMatch} : true`,
    // Upstream capitalises "When" in the URLRewrite message only.
    message: `Within backendRefs, ${type === 'URLRewrite' ? 'When' : 'when'} using ${type} filter with path.replacePrefixMatch, exactly one PathPrefix match must be specified`,
  }));
  return [...ruleLevel, ...backendLevel];
}

export const HTTPRouteRule = named(
  { name: 'HTTPRouteRule', description: 'Matches, filters, backends and timeouts of one rule.', source: 'gateway-api' },
  object(
    {
      name: refine(SectionName, {
        description: 'Rule name; policies and GwModels select the rule by it (sectionName).',
      }),
      matches: refine(
        array(HTTPRouteMatch, {
          maxItems: 64,
          listType: 'atomic',
          description: 'Alternative conditions; a request matching any of them is handled by the rule.',
        }),
        { default: [{ path: defaultPathMatch }] },
      ),
      filters: filterList('Filters applied to every request the rule handles.'),
      backendRefs: array(HTTPBackendRef, {
        maxItems: 16,
        listType: 'atomic',
        description:
          'Where requests go, split by weight; without backendRefs (and without a redirect) requests get a 500.',
      }),
      timeouts: HTTPRouteTimeouts,
    },
    {
      rules: [
        {
          rule: "(has(self.backendRefs) && size(self.backendRefs) > 0) ? !(has(self.filters) && self.filters.exists(f, f.type == 'RequestRedirect')) : true",
          message: 'RequestRedirect filter must not be used together with backendRefs',
        },
        ...prefixRewriteRules(),
      ],
    },
  ),
);
export type HTTPRouteRule = Infer<typeof HTTPRouteRule>;

/** Two parent refs name the same parent: group, kind, name and namespace (unset = empty) agree. */
const sameParent =
  "p1.group == p2.group && p1.kind == p2.kind && p1.name == p2.name && ((!has(p1.namespace) || p1.namespace == '') ? (!has(p2.namespace) || p2.namespace == '') : (has(p2.namespace) && p1.namespace == p2.namespace))";
const section = (p: string) => `(has(${p}.sectionName) && ${p}.sectionName != '')`;

/**
 * The upstream limit on matches across rules. CEL has no sum, so each of the 16 rules is spelled
 * out; matches is always present, as defaulting fills it.
 */
const totalMatchesRule: ValidationRule = {
  rule: `${Array.from({ length: 16 }, (_, i) => `(size(self) > ${i} ? size(self[${i}].matches) : 0)`).join(' + ')} <= 128`,
  message:
    'While 16 rules and 64 matches per rule are allowed, the total number of matches across all rules in a route must be less than 128',
};

export const HTTPRouteSpec = named(
  { name: 'HTTPRouteSpec', description: 'Parents, hostnames and rules of the route.', source: 'gateway-api' },
  object({
    parentRefs: array(ParentReference, {
      maxItems: 32,
      listType: 'atomic',
      description: 'Gateways, ListenerSets (or their listeners) the route attaches to.',
      rules: [
        {
          rule: `self.all(p1, self.all(p2, !(${sameParent}) || ${section('p1')} == ${section('p2')}))`,
          message: 'sectionName must be specified when parentRefs includes 2 or more references to the same parent',
        },
        {
          rule: `self.all(p1, self.exists_one(p2, ${sameParent} && (${section('p1')} ? (${section('p2')} && p1.sectionName == p2.sectionName) : !${section('p2')})))`,
          message: 'sectionName must be unique when parentRefs includes 2 or more references to the same parent',
        },
      ],
    }),
    hostnames: array(Hostname, {
      maxItems: 16,
      listType: 'atomic',
      description:
        'Hosts the route serves, intersected with the listener hostname; all the listener allows when omitted.',
    }),
    rules: refine(array(HTTPRouteRule, { minItems: 1, maxItems: 16, listType: 'atomic', rules: [totalMatchesRule] }), {
      default: [{ matches: [{ path: defaultPathMatch }] }],
      description: 'Matches, filters and backends of the route; by default one rule matching every path.',
    }),
  }),
);
export type HTTPRouteSpec = Infer<typeof HTTPRouteSpec>;

export const HTTPRouteStatus = named(
  {
    name: 'HTTPRouteStatus',
    description: 'State of the route on each parent it names.',
    source: 'gateway-api',
    notes: 'Condition types per parent: Accepted, ResolvedRefs, PartiallyInvalid.',
  },
  object({
    parents: required(
      array(RouteParentStatus, {
        maxItems: 32,
        listType: 'atomic',
        description: 'State of the route on each parent it names.',
      }),
    ),
  }),
);
export type HTTPRouteStatus = Infer<typeof HTTPRouteStatus>;
