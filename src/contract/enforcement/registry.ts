// The enforcement registry: for every field of every policy type at every place (places.ts),
// whether the data plane enforces it (and which module does) or refuses it (and why). Two layers:
//
// - TYPE_DECLARATIONS, per named type (its schema name): one entry per field, reused wherever
//   the type appears. Fields of unnamed nested objects are dotted keys of the enclosing named
//   type ('backendRef.name').
// - PLACE_DECLARATIONS, per place: dotted paths from the place's root (list and map levels
//   elided) that differ there. They win over the type layer and over the base place's.
//
// A place's top-level fields name their module; a nested field may leave `by` out and inherit
// its parent's. To add a field to the API: declare it in its type here (enforced by the module
// that applies it, or refused with a reason a user can act on), then per place where it differs;
// the registry test (test/contract/enforcement.test.ts) names every field left undeclared and the
// type to declare it in, and `npm run docs` regenerates docs/enforcement.md.
import { type Enforcement, enforced, refused } from './enforcement.ts';
import type { PlaceName } from './places.ts';

// ---------------------------------------------------------------------------------------------
// The modules that enforce, by what they apply.

const DP = 'src/dataplane';
const BY = {
  // the traffic pipeline, a module per field
  cors: `${DP}/policies/http/cors.ts`,
  csrf: `${DP}/policies/http/csrf.ts`,
  jwt: `${DP}/policies/auth/jwt.ts`,
  mcpOAuth: `${DP}/policies/auth/mcp-oauth/endpoint.ts`,
  mcpBackendAuthentication: `${DP}/policies/auth/mcp-oauth/backend-authentication.ts`,
  basicAuth: `${DP}/policies/auth/basic.ts`,
  apiKey: `${DP}/policies/auth/api-key.ts`,
  authorization: `${DP}/policies/auth/authorization.ts`,
  extAuth: `${DP}/policies/ext-authz/ext-authz.ts`,
  extProc: `${DP}/policies/ext-proc/ext-proc.ts`,
  rateLimit: `${DP}/policies/rate-limit/rate-limit.ts`,
  transformation: `${DP}/policies/http/transformation.ts`,
  // backend request policies (BackendFull extAuth, transformation), at the seam for every kind
  backendPolicies: `${DP}/backends/backend-policies.ts`,
  // ... and an AI provider's or MCP target's own, on its calls (decision 0045)
  providerRequestPolicies: `${DP}/ai/provider-subrequest.ts`,
  targetRequestPolicies: `${DP}/mcp/target-policies.ts`,
  headerModifiers: `${DP}/policies/http/header-modifiers.ts`,
  directResponse: `${DP}/policies/http/direct-response.ts`,
  delay: `${DP}/policies/http/delay.ts`,
  buffer: `${DP}/policies/forwarding/buffer.ts`,
  hostRewrite: `${DP}/policies/forwarding/host-rewrite.ts`,
  timeouts: `${DP}/policies/forwarding/timeouts.ts`,
  retry: `${DP}/policies/forwarding/retry.ts`,
  endpoint: `${DP}/policies/endpoint.ts`,
  // the controller: what it resolves before the data plane sees a configuration
  phase: 'src/controller/policies/attachments.ts',
  selectors: 'src/controller/dataplane-config.ts',
  // the controller leaves backend.ai and backend.mcp out of the backends they do not apply to
  appliesTo: 'src/controller/dataplane-config.ts',
  // listeners and telemetry
  listenerOptions: `${DP}/server/listener-options.ts`,
  portListener: `${DP}/server/port-listener.ts`,
  networkAuthorization: `${DP}/server/network-authorization.ts`,
  frontendTls: `${DP}/server/tls-options.ts`,
  proxyProtocol: `${DP}/server/proxy-protocol.ts`,
  connect: `${DP}/server/connect.ts`,
  bufferLimit: `${DP}/config/compile.ts`,
  accessLog: `${DP}/telemetry/access-log.ts`,
  tracing: `${DP}/telemetry/tracing.ts`,
  metrics: `${DP}/telemetry/metrics.ts`,
  // backends
  httpTargets: `${DP}/upstream/destinations.ts`,
  forwardProxy: `${DP}/backends/forward-proxy/dynamic-forward-proxy.ts`,
  a2a: `${DP}/backends/a2a/a2a-backend.ts`,
  destinationRules: `${DP}/backends/forward-proxy/destination-rules.ts`,
  agentCore: `${DP}/backends/agentcore/agentcore-backend.ts`,
  agentCoreRuntime: `${DP}/backends/agentcore/runtime.ts`,
  connection: `${DP}/upstream/connection-settings.ts`,
  tunnel: `${DP}/upstream/connect-tunnel.ts`,
  tunnelProxy: `${DP}/upstream/tunnel-proxy.ts`,
  backendAuth: `${DP}/auth/backend/compile.ts`,
  jwtSign: `${DP}/auth/backend/jwt-sign.ts`,
  beta: `${DP}/auth/backend/beta.ts`,
  cloudtwo: `${DP}/auth/backend/cloudtwo/cloudtwo.ts`,
  tokenExchange: `${DP}/auth/backend/oauth/token-exchange.ts`,
  crossAppAccess: `${DP}/auth/backend/oauth/cross-app-access.ts`,
  tokenEndpoint: `${DP}/auth/backend/oauth/token-endpoint.ts`,
  oauthClientAuth: `${DP}/auth/backend/oauth/client-auth.ts`,
  exchangeCache: `${DP}/auth/backend/oauth/exchange-cache.ts`,
  cloudone: `${DP}/auth/backend/cloudone/index.ts`,
  cloudoneAssumeRole: `${DP}/auth/backend/cloudone/assume-role.ts`,
  health: `${DP}/balancing/endpoint-health.ts`,
  priorityGroups: `${DP}/balancing/priority-groups.ts`,
  virtualModels: `${DP}/balancing/virtual-models.ts`,
  // AI backends, providers and GwModels
  aiBackend: `${DP}/ai/ai-backend.ts`,
  llmRequest: `${DP}/ai/llm-request.ts`,
  models: `${DP}/ai/models.ts`,
  modelProvider: `${DP}/ai/model-provider.ts`,
  aiRequestPolicy: `${DP}/ai/policies/request-policy.ts`,
  promptGuards: `${DP}/ai/guards/prompt-guard.ts`,
  regexGuard: `${DP}/ai/guards/regex-guard.ts`,
  guardService: `${DP}/ai/guards/service-call.ts`,
  modelArmorGuard: `${DP}/ai/guards/model-armor-guard.ts`,
  alphaModerationGuard: `${DP}/ai/guards/alpha-moderation-guard.ts`,
  webhookGuard: `${DP}/ai/guards/webhook-guard.ts`,
  zetaGuardrails: `${DP}/ai/guards/zeta-guardrails-guard.ts`,
  promptEnrichment: `${DP}/ai/policies/prompt-enrichment.ts`,
  modelAliases: `${DP}/ai/policies/model-aliases.ts`,
  promptCaching: `${DP}/ai/policies/prompt-caching.ts`,
  routeTypes: `${DP}/ai/policies/route-types.ts`,
  alpha: `${DP}/ai/providers/alpha.ts`,
  inlineModeration: `${DP}/ai/inline-moderation.ts`,
  gamma: `${DP}/ai/providers/gamma.ts`,
  zeta: `${DP}/ai/providers/zeta.ts`,
  delta: `${DP}/ai/providers/delta.ts`,
  epsilon: `${DP}/ai/providers/epsilon.ts`,
  betaalpha: `${DP}/ai/providers/betaalpha.ts`,
  betaFamily: `${DP}/ai/providers/beta.ts`,
  custom: `${DP}/ai/providers/custom.ts`,
  providerAddress: `${DP}/ai/providers/family-address.ts`,
  // MCP backends
  mcpBackend: `${DP}/mcp/backend.ts`,
  mcpTargets: `${DP}/mcp/targets.ts`,
  mcpNaming: `${DP}/mcp/naming.ts`,
  mcpMultiplexer: `${DP}/mcp/multiplexer.ts`,
  mcpSession: `${DP}/mcp/session.ts`,
  mcpPolicy: `${DP}/mcp/policies/compile.ts`,
  mcpAuthorization: `${DP}/mcp/policies/authorization.ts`,
  mcpGuardrails: `${DP}/mcp/policies/guardrail-processor.ts`,
  // The one response path of every backend kind (issue 16: route response filters, response
  // transformation, the extProc response phase, response buffering and headers).
  responsePath: `${DP}/proxy/response-path.ts`,
} as const;

/** Modules named here that are being written in parallel (the registry test allows them to be absent until merged). */
export const MODULES_IN_PROGRESS: readonly string[] = [];

// ---------------------------------------------------------------------------------------------
// Reasons, written for the user who set the field: why, and what to do instead.

const WEBHOOK_OWN_ANSWER =
  'Refused on a webhook entry: a webhook rejects with the status and message its service answers.';
const BACKEND_REQUEST_POLICY_NOTE =
  "Run once per request routed to this backend, for every kind, after the route's traffic policies and filters and before the backend serves it: extAuth first, then transformation, whose response phase runs before the route's. The most specific policy wins per field (Gateway < listener < route < rule < backend). Decision 0041.";
const PROVIDER_REQUEST_POLICY_NOTE =
  "Run on each attempt of this provider (priority groups, failover), on a copy of the request as the backend received it: the provider's value replaces the backend's for its attempts (GwPolicy < GwBackend < provider), and what it changes or sets for the response stays with that attempt. Once one provider's value differs from the backend's, every provider runs its own value per attempt. Decision 0045.";
const TARGET_REQUEST_POLICY_NOTE =
  "Where a target's value differs from the backend's, it runs on each HTTP request gw sends that target (the multiplexer's own requests: method, path, headers, JSON-RPC body); the backend's runs on the client's request to the MCP endpoint. Decision 0045.";
const TARGET_RESPONSE_TRANSFORM =
  "A target's own response Transform is not applied: a target's responses are MCP messages the multiplexer reads and merges into its own answer, so there is no response of the target's for it to change. Set the response Transform on the GwBackend (spec.policies, or a GwPolicy on it without sectionName) or on the route's traffic.transformation. Decision 0045.";
const AI_ONLY =
  'backend.ai (LLM request processing) applies only to `ai` GwBackends and to GwModels (spec document 2, BackendFull): the controller leaves it out of the effective policy of every other backend, so it is never applied there.';
const MCP_ONLY =
  'backend.mcp (MCP authorization, authentication and guardrails) applies only to `mcp` GwBackends (spec document 2, BackendFull): the controller leaves it out of the effective policy of every other backend and of GwModels, so it is never applied there.';
const MCP_WHOLE_BACKEND =
  'backend.mcp (authorization, authentication, guardrails) applies to a whole MCP backend, not to one of its targets; set it on the GwBackend.';
const FORWARD_PROXY_HEALTH =
  "A dynamic forward proxy's destination changes with each request: passive health would evict the whole backend for one destination's failures. Remove health from the policies reaching a dynamicForwardProxy GwBackend.";
const MCP_HEALTH =
  "MCP targets have no passive health or eviction: a target that fails is handled by the backend's failureMode (FailClosed fails the session, FailOpen leaves the target out). Remove health.";
const MODEL_ROUTES =
  'GwModels have no route types: the format of a GwModel request comes from the standard path suffix (/chat/completions, /messages, /responses, /embeddings, /models). Remove ai.routes from the policies that reach this rule or listener.';
const ROUTES_PER_BACKEND =
  "Route types are chosen for the whole ai backend before a provider is picked, so ai.routes in one provider's policies is never read. Set ai.routes in the GwBackend's spec.policies, or in a GwPolicy on the whole GwBackend.";
const RETRY_AI =
  "traffic.retry applies only to HTTP backends. An ai backend fails over between its providers instead (priority groups and provider health): to try another provider, add it to the backend's groups. Remove retry from the policies that reach this rule.";
const RETRY_MCP =
  'traffic.retry applies only to HTTP backends; gw does not repeat MCP calls (a tool call may not be safe to repeat). Remove retry from the policies that reach this rule.';
const RETRY_MODELS =
  'traffic.retry applies only to HTTP backends; to try another model when one fails, route to a failover virtual model (virtualModel.failover). Remove retry from the policies that reach this rule.';
const HOST_REWRITE_NONE =
  "gw always sends an LLM provider or an MCP target its own Host (its address's): hostRewrite mode None, which would send the client's, applies only to HTTP backends. Use mode Auto, or remove hostRewrite from the policies that reach this rule.";
const HOST_REWRITE_NONE_AGENTCORE =
  "gw always sends an Amazon Bedrock AgentCore runtime its endpoint's Host (AWS checks it against the signature): hostRewrite mode None, which would send the client's, applies only to HTTP backends. Use mode Auto, or remove hostRewrite from the policies that reach this rule.";
const TRAILERS =
  'gw carries no HTTP trailers (it neither forwards nor sends them), so a processor gets none: Send and Skip are the same.';
const CUSTOM_BACKEND_REF_NOTE =
  "A Service of the provider's namespace at the port named, reached at its own address (externalName, clusterIP or the first externalIPs) in every mode, with TLS as the backend policy says; a missing Service is ResolvedRefs False and its traffic is answered 500. An InferencePool of the namespace (group inference.networking.k8s.io): each request goes to one of its ready Pods at a target port, the one its endpoint picker names over ext_proc (failureMode FailOpen: a random ready Pod when the picker fails; FailClose: 503); an answer naming no Pod of the pool is never followed (docs/decisions/0049-inference-pool.md).";
const ENDPOINT_NAMESPACE =
  "An endpoint reference resolves only in the namespace of the object that holds it, and only when namespace is left out (a cross-namespace reference would need ReferenceGrant support). Remove namespace and reference a Service or GwBackend of the policy's own namespace.";

// ---------------------------------------------------------------------------------------------
// Declarations shared by several types.

/** backendRef and url of an endpoint reference (spec document 2), resolved once per configuration. */
const endpointReference = { backendRef: enforced(BY.endpoint), url: enforced(BY.endpoint) };

/** The settings of the epsilon (Vertex AI) and zeta (Bedrock) families: their Config and a GwModel's Settings. */
const EPSILON_PROJECT = enforced(BY.epsilon, { note: 'The projects/<projectId> segment of every request path.' });
const EPSILON_REGION = enforced(BY.epsilon, {
  note: 'The locations/<region> segment and the host: aiplatform.googleapis.com (global), aiplatform.<us|eu>.rep.googleapis.com, else <region>-aiplatform.googleapis.com.',
});
const ZETA_REGION = enforced(BY.zeta, {
  note: "The host's region (bedrock-runtime.<region>.amazonaws.com) and the backend auth's signing region.",
});
const ZETA_GUARDRAIL = enforced(BY.zeta, { note: 'Sent in every Converse request as guardrailConfig.' });

/** A conditional entry: its condition and its policy, applied by the enclosing field's module. */
const conditionalEntry = { condition: enforced(), policy: enforced() };

/** The fields LLMProvider and NamedLLMProvider share. */
const llmProviderFields = {
  alpha: enforced(BY.alpha),
  betaalpha: enforced(BY.betaalpha),
  beta: enforced(BY.betaFamily),
  gamma: enforced(BY.gamma),
  delta: enforced(BY.delta),
  epsilon: enforced(BY.epsilon, {
    note: 'Google models through generateContent; Anthropic models (claude-*, anthropic/…) through rawPredict and streamRawPredict, token counting through count-tokens:rawPredict.',
  }),
  zeta: enforced(BY.zeta),
  custom: enforced(BY.custom),
  host: enforced(BY.providerAddress),
  port: enforced(BY.providerAddress),
  path: enforced(BY.providerAddress),
  pathPrefix: enforced(BY.providerAddress),
};

/** The Azure resource of a beta provider (BetaConfig) and of a GwModel with provider Beta (BetaSettings). */
const betaResource = {
  resourceName: enforced(BY.betaFamily, {
    note: 'The first label of the host: <resourceName>.openai.azure.com (Alpha) or <resourceName>.services.ai.azure.com (Omega).',
  }),
  resourceType: enforced(BY.betaFamily, {
    note: "Alpha: an Azure OpenAI resource, served as betaalpha serves its endpoint; Omega: an Azure AI Foundry project (claude* models through the resource's Anthropic Messages API).",
  }),
  apiVersion: enforced(BY.betaFamily, {
    note: 'Alpha: as betaalpha (v1, preview, or a dated version with the deployment in the path); Omega: v1 or preview only, other versions refused.',
  }),
  projectName: enforced(BY.betaFamily, {
    note: 'Omega: the /api/projects/<projectName>/openai/v1 base of every request; refused with Alpha.',
  }),
};
const BETA_MODEL = 'The deployment: the model override; with Alpha and a dated apiVersion, required and in the path.';

/** The credential kinds BackendAuth and ModelBackendAuth share. */
const backendAuthFields = {
  key: enforced(),
  secretRef: enforced(),
  passthrough: enforced(),
  beta: enforced(BY.beta, {
    note: 'None of secretRef, managedIdentity, workloadIdentity set: the SDK default chain over the environment (docs/backend-auth.md).',
  }),
  cloudone: enforced(BY.cloudone),
  cloudtwo: enforced(BY.cloudtwo),
  oauthTokenExchange: enforced(BY.tokenExchange),
  location: enforced(),
  credentials: enforced(),
};

/** The targets of a virtual model: the GwModel named (modelRef) and the model name sent to it. */
const modelTarget = { modelRef: enforced(), 'modelRef.name': enforced(), model: enforced() };

// ---------------------------------------------------------------------------------------------
// Per named type.

type Declarations = Readonly<Record<string, Enforcement>>;

export const TYPE_DECLARATIONS: Readonly<Record<string, Declarations>> = {
  // ---- Frontend (spec document 2, "Frontend") ----
  Frontend: {
    tcp: enforced(BY.portListener),
    networkAuthorization: enforced(BY.networkAuthorization),
    tls: enforced(BY.frontendTls),
    http: enforced(BY.listenerOptions),
    proxyProtocol: enforced(BY.proxyProtocol),
    connect: enforced(BY.connect),
    accessLog: enforced(BY.accessLog),
    tracing: enforced(BY.tracing),
    metrics: enforced(BY.metrics),
  },
  FrontendTCP: { keepalive: enforced() },
  Keepalive: { retries: enforced(), time: enforced(), interval: enforced() },
  FrontendTLS: {
    handshakeTimeout: enforced(),
    alpnProtocols: enforced(undefined, {
      note: 'HTTPS listeners serve h2 and http/1.1; other protocols are not offered (the log says so), and a list with neither is refused.',
    }),
    minProtocolVersion: enforced(),
    maxProtocolVersion: enforced(),
    cipherSuites: enforced(),
    keyExchangeGroups: enforced(),
  },
  FrontendHTTP: {
    maxBufferSize: enforced(BY.bufferLimit),
    http1MaxHeaders: enforced(),
    http1IdleTimeout: enforced(),
    http1HeaderCase: enforced(BY.listenerOptions, {
      note: 'Preserve keeps the client’s spelling of request header names towards HTTP backends; response header names come back lowercase.',
    }),
    http2WindowSize: enforced(),
    http2ConnectionWindowSize: enforced(),
    http2FrameSize: enforced(),
    http2MaxHeaderSize: enforced(),
    http2KeepaliveInterval: enforced(BY.portListener),
    http2KeepaliveTimeout: enforced(BY.portListener),
    maxConnectionDuration: enforced(BY.portListener),
  },
  FrontendProxyProtocol: { version: enforced(), mode: enforced() },
  FrontendConnect: { mode: enforced() },
  AccessLog: {
    filter: enforced(),
    attributes: enforced(),
    otlp: enforced(`${DP}/telemetry/otlp/access-log-export.ts`),
  },
  OtlpAccessLog: {
    ...endpointReference,
    filter: enforced(),
    attributes: enforced(),
    protocol: enforced(),
    path: enforced(),
  },
  LogTracingAttributes: { remove: enforced(), add: enforced() },
  AttributeAdd: { name: enforced(), expression: enforced() },
  Tracing: {
    ...endpointReference,
    protocol: enforced(),
    path: enforced(),
    attributes: enforced(),
    resources: enforced(),
    randomSampling: enforced(),
    clientSampling: enforced(),
    filter: enforced(),
  },
  MetricLabels: { attributes: enforced() },
  MetricAttributes: { add: enforced() },

  // ---- Traffic (spec document 2, "Traffic-level building blocks"): a module per field ----
  Traffic: {
    phase: enforced(BY.phase, { note: 'Not a policy: it chooses when the rest runs (before or after routing).' }),
    transformation: enforced(BY.transformation),
    extProc: enforced(BY.extProc),
    extAuth: enforced(BY.extAuth),
    rateLimit: enforced(BY.rateLimit),
    cors: enforced(BY.cors),
    csrf: enforced(BY.csrf),
    headerModifiers: enforced(BY.headerModifiers),
    hostRewrite: enforced(BY.hostRewrite),
    timeouts: enforced(BY.timeouts),
    retry: enforced(BY.retry),
    authorization: enforced(BY.authorization),
    jwtAuthentication: enforced(BY.jwt),
    basicAuthentication: enforced(BY.basicAuth),
    apiKeyAuthentication: enforced(BY.apiKey),
    directResponse: enforced(BY.directResponse),
    buffer: enforced(BY.buffer),
    delay: enforced(BY.delay),
  },
  TransformationOrConditional: { request: enforced(), response: enforced(), conditional: enforced() },
  TransformationConditional: conditionalEntry,
  Transformation: { request: enforced(), response: enforced() },
  Transform: { set: enforced(), add: enforced(), remove: enforced(), body: enforced(), metadata: enforced() },
  HeaderTransformation: { name: enforced(), value: enforced() },
  ExtProcOrConditional: {
    ...endpointReference,
    failureMode: enforced(),
    processingOptions: enforced(),
    metadataContext: enforced(),
    requestAttributes: enforced(),
    responseAttributes: enforced(),
    conditional: enforced(),
  },
  ExtProcConditional: conditionalEntry,
  ExtProc: {
    ...endpointReference,
    failureMode: enforced(),
    processingOptions: enforced(),
    metadataContext: enforced(),
    requestAttributes: enforced(),
    responseAttributes: enforced(),
  },
  ProcessingOptions: {
    requestBodyMode: enforced(),
    responseBodyMode: enforced(),
    requestHeaderMode: enforced(),
    responseHeaderMode: enforced(),
    requestTrailerMode: enforced(undefined, { note: TRAILERS }),
    responseTrailerMode: enforced(undefined, { note: TRAILERS }),
    allowModeOverride: enforced(),
  },
  ExtAuthOrConditional: {
    ...endpointReference,
    failureMode: enforced(),
    grpc: enforced(`${DP}/policies/ext-authz/grpc-mode.ts`),
    http: enforced(`${DP}/policies/ext-authz/http-mode.ts`),
    forwardBody: enforced(),
    cache: enforced(`${DP}/policies/ext-authz/cache.ts`),
    conditional: enforced(),
  },
  ExtAuthConditional: conditionalEntry,
  ExtAuth: {
    ...endpointReference,
    failureMode: enforced(),
    grpc: enforced(`${DP}/policies/ext-authz/grpc-mode.ts`),
    http: enforced(`${DP}/policies/ext-authz/http-mode.ts`),
    forwardBody: enforced(),
    cache: enforced(`${DP}/policies/ext-authz/cache.ts`),
  },
  AgentExtAuthGRPC: { contextExtensions: enforced(), requestMetadata: enforced() },
  AgentExtAuthHTTP: {
    path: enforced(),
    redirect: enforced(),
    body: enforced(),
    allowedRequestHeaders: enforced(),
    addRequestHeaders: enforced(),
    allowedResponseHeaders: enforced(),
    responseMetadata: enforced(),
  },
  ExtAuthBody: { maxSize: enforced() },
  ExtAuthCache: { key: enforced(), ttl: enforced(), maxEntries: enforced() },
  RateLimitsOrConditional: {
    local: enforced(`${DP}/policies/rate-limit/local.ts`),
    global: enforced(`${DP}/policies/rate-limit/global.ts`),
    conditional: enforced(),
  },
  RateLimitsConditional: conditionalEntry,
  RateLimits: {
    local: enforced(`${DP}/policies/rate-limit/local.ts`),
    global: enforced(`${DP}/policies/rate-limit/global.ts`),
  },
  LocalRateLimit: {
    requests: enforced(),
    tokens: enforced(undefined, {
      note: 'Charged the LLM tokens (input and output) of requests to ai backends and GwModels once they are done; other requests carry no tokens and are only checked against the bucket (which a policy attached above both kinds of rule shares).',
    }),
    unit: enforced(),
    burst: enforced(),
  },
  GlobalRateLimit: { ...endpointReference, failureMode: enforced(), domain: enforced(), descriptors: enforced() },
  RateLimitDescriptor: { entries: enforced(), unit: enforced(), cost: enforced(), limitOverride: enforced() },
  RateLimitDescriptorEntry: { name: enforced(), expression: enforced() },
  CORS: {
    allowOrigins: enforced(),
    allowCredentials: enforced(),
    allowMethods: enforced(),
    allowHeaders: enforced(),
    exposeHeaders: enforced(),
    maxAge: enforced(),
  },
  CSRF: { additionalOrigins: enforced() },
  HeaderModifiers: { request: enforced(), response: enforced() },
  HTTPHeaderFilter: { set: enforced(), add: enforced(), remove: enforced() },
  HTTPHeader: { name: enforced(), value: enforced() },
  HostnameRewrite: { mode: enforced() },
  Timeouts: { request: enforced() },
  Retry: {
    codes: enforced(),
    attempts: enforced(),
    backoff: enforced(),
    precondition: enforced(),
    condition: enforced(),
  },
  DirectResponseOrConditional: {
    status: enforced(),
    body: enforced(),
    bodyExpression: enforced(),
    headers: enforced(),
    conditional: enforced(),
  },
  DirectResponseConditional: conditionalEntry,
  DirectResponse: { status: enforced(), body: enforced(), bodyExpression: enforced(), headers: enforced() },
  DirectResponseHeader: { name: enforced(), value: enforced() },
  Buffer: { request: enforced(), response: enforced() },
  BufferBody: { maxBytes: enforced(), failureMode: enforced() },
  Delay: { duration: enforced() },

  // ---- Inbound authentication and authorization ----
  Authorization: { policy: enforced(), action: enforced() },
  AuthorizationPolicy: { matchExpressions: enforced() },
  JWTAuthentication: {
    mode: enforced(),
    providers: enforced(),
    location: enforced(`${DP}/policies/auth/credential-location.ts`),
    mcp: enforced(BY.mcpOAuth),
  },
  JWTProvider: { issuer: enforced(), audiences: enforced(), jwks: enforced(`${DP}/policies/auth/jwks.ts`) },
  JWKS: { remote: enforced(), inline: enforced() },
  RemoteJWKS: { ...endpointReference, jwksPath: enforced(), cacheDuration: enforced() },
  JWTMCPConfig: { resourceMetadata: enforced(), provider: enforced(), clientId: enforced() },
  BasicAuthentication: {
    users: enforced(),
    secretRef: enforced(),
    mode: enforced(),
    realm: enforced(),
    location: enforced(`${DP}/policies/auth/credential-location.ts`),
  },
  APIKeyAuthentication: {
    secretRef: enforced(),
    secretSelector: enforced(BY.selectors, {
      note: 'The controller lists the Secrets the selector chooses; the data plane reads their keys.',
    }),
    configMapSelector: enforced(BY.selectors, {
      note: 'The controller lists the ConfigMaps the selector chooses; the data plane reads their key hashes.',
    }),
    mode: enforced(),
    location: enforced(`${DP}/policies/auth/credential-location.ts`),
  },
  AuthorizationExtractionLocation: {
    header: enforced(),
    queryParameter: enforced(),
    cookie: enforced(),
    expression: enforced(),
  },
  AuthorizationLocation: { header: enforced(), queryParameter: enforced(), cookie: enforced() },
  AuthorizationHeaderLocation: { name: enforced(), prefix: enforced() },
  AuthorizationQueryParameterLocation: { name: enforced() },
  AuthorizationCookieLocation: { name: enforced() },

  // ---- References ----
  // A custom provider's backendRef (CUSTOM_BACKEND_REF_NOTE): a Service or an InferencePool,
  // resolved in dataplane/ai/providers/custom.ts.
  LocalBackendObjectReference: { group: enforced(), kind: enforced(), name: enforced(), port: enforced() },
  BackendObjectReference: {
    group: enforced(undefined, {
      note: 'Only the core group (a Service) and gw.dev (a GwBackend) are resolved; a reference of another group is not found and the policy is refused.',
    }),
    kind: enforced(),
    name: enforced(),
    namespace: refused(ENDPOINT_NAMESPACE),
    port: enforced(),
  },
  LocalSecretKeyRef: { name: enforced(), group: enforced(), kind: enforced(), key: enforced() },
  LocalSecretObjectRef: { name: enforced(), group: enforced(), kind: enforced() },
  LocalCACertificateRef: { name: enforced(), kind: enforced() },
  SecretSelector: { matchLabels: enforced() },
  ConfigMapSelector: { matchLabels: enforced() },

  // ---- Backend policies (spec document 2, "Backend connection settings") ----
  BackendFull: {
    tcp: enforced(BY.connection),
    tls: enforced(BY.connection),
    http: enforced(BY.connection),
    tunnel: enforced(BY.tunnel),
    auth: enforced(BY.backendAuth),
    ai: enforced(BY.aiBackend),
    transformation: enforced(BY.backendPolicies, { note: BACKEND_REQUEST_POLICY_NOTE }),
    health: enforced(BY.health),
    mcp: enforced(BY.mcpPolicy),
    extAuth: enforced(BY.backendPolicies, { note: BACKEND_REQUEST_POLICY_NOTE }),
  },
  BackendTCP: { keepalive: enforced(), connectTimeout: enforced() },
  BackendTunnel: {
    backendRef: enforced(BY.tunnelProxy, {
      note: 'A Service (plain TCP to it), or a static GwBackend whose policies tcp, tls and auth (a key or secretRef, sent on each CONNECT as Proxy-Authorization: Bearer unless auth.location says otherwise) apply to the proxy; other policies on it are refused.',
    }),
    url: enforced(BY.tunnelProxy, {
      note: "http:// or https:// (TLS to the proxy) with host and port; a path is refused. Every connection to the backend goes through the proxy with CONNECT, the backend's own TLS inside; a proxy that cannot be reached or refuses is a connection gw could not make (503). Decision 0039.",
    }),
  },
  BackendTLS: {
    mtlsCertificateRef: enforced(),
    caCertificateRefs: enforced(),
    insecureSkipVerify: enforced(),
    sni: enforced(),
    verifySubjectAltNames: enforced(),
    alpnProtocols: enforced(undefined, {
      note: 'Offered in its order, less what the connection cannot speak (http/1.1; h2 with http.version HTTP2); a list of none of them is refused.',
    }),
    keyExchangeGroups: enforced(),
  },
  BackendHTTP: { version: enforced(), requestTimeout: enforced() },
  Health: { unhealthyCondition: enforced(), eviction: enforced() },
  BackendEviction: {
    duration: enforced(),
    restoreHealth: enforced(),
    consecutiveFailures: enforced(),
    healthThreshold: enforced(),
  },
  BackendAuth: {
    ...backendAuthFields,
    crossAppAccess: enforced(BY.crossAppAccess),
    jwtSign: enforced(),
  },
  ModelBackendAuth: backendAuthFields,
  BackendAuthCredential: { location: enforced(), secretRef: enforced() },
  BetaAuth: {
    secretRef: enforced(BY.beta),
    managedIdentity: enforced(BY.beta),
    workloadIdentity: enforced(BY.beta, {
      note: 'Needs AZURE_CLIENT_ID, AZURE_TENANT_ID and AZURE_FEDERATED_TOKEN_FILE in the environment; without them the backend is refused.',
    }),
  },
  BetaManagedIdentity: {
    clientId: enforced(BY.beta, {
      note: 'The API requires all three ids: "" leaves one out, all empty is the system-assigned identity, two non-empty are refused.',
    }),
    objectId: enforced(BY.beta),
    resourceId: enforced(BY.beta),
  },
  CloudtwoAuth: {
    type: enforced(BY.cloudtwo),
    secretRef: enforced(BY.cloudtwo, {
      note: 'service_account and authorized_user credentials JSON; other types are refused (docs/decisions/0016-cloudtwo-credentials.md). Unset: ambient credentials.',
    }),
    audience: enforced(BY.cloudtwo, {
      note: "Unset: https:// and the backend's hostname; a backend without a hostname (an IP address) needs it set.",
    }),
  },
  OAuthTokenExchange: {
    ...endpointReference,
    path: enforced(BY.tokenEndpoint, {
      note: "Appended to the url's own path: url https://idp.example/oauth2/token with the default / posts to /oauth2/token.",
    }),
    grantType: enforced(BY.tokenExchange),
    subjectToken: enforced(BY.tokenExchange),
    actorToken: enforced(BY.tokenExchange),
    audiences: enforced(BY.tokenExchange),
    scopes: enforced(BY.tokenExchange),
    resources: enforced(BY.tokenExchange),
    requestedTokenType: enforced(BY.tokenExchange, {
      note: 'Refused with grantType JwtBearer, which has no such parameter.',
    }),
    additionalParams: enforced(BY.tokenExchange, {
      note: 'A parameter gw sets itself (grant_type, scope, client_id...) is refused; an expression that fails or yields no string rejects the request with 400.',
    }),
    clientAuth: enforced(BY.oauthClientAuth),
    location: enforced(BY.tokenExchange, {
      note: 'Setting both location and oauthTokenExchange.location is refused.',
    }),
    cache: enforced(BY.exchangeCache),
  },
  OAuthTokenSpec: { source: enforced(BY.tokenExchange), tokenType: enforced(BY.tokenExchange) },
  OAuthActorToken: {
    source: enforced(BY.tokenExchange),
    tokenType: enforced(BY.tokenExchange),
    mayAct: enforced(`${DP}/auth/backend/oauth/may-act.ts`, {
      note: 'A subject token whose may_act does not name the actor is refused with 403 before any exchange.',
    }),
  },
  OAuthClientAuth: {
    clientId: enforced(BY.oauthClientAuth),
    secretRef: enforced(BY.oauthClientAuth),
    privateKeyJwt: enforced(BY.oauthClientAuth),
    method: enforced(BY.oauthClientAuth),
  },
  OAuthPrivateKeyJWT: {
    signingKeyRef: enforced(BY.oauthClientAuth),
    certificateRef: enforced(BY.oauthClientAuth, {
      note: 'A leaf certificate that does not certify the signing key is a warning in the log, as the spec says.',
    }),
    certificateHeader: enforced(BY.oauthClientAuth),
    alg: enforced(BY.oauthClientAuth),
    kid: enforced(BY.oauthClientAuth),
    assertionAudience: enforced(BY.oauthClientAuth),
  },
  OAuthTokenCache: { inMemory: enforced(BY.exchangeCache) },
  OAuthInMemoryTokenCache: { maxEntries: enforced(BY.exchangeCache), defaultTtl: enforced(BY.exchangeCache) },
  CrossAppAccessAuth: {
    identityProvider: enforced(BY.crossAppAccess),
    resourceAuthorizationServer: enforced(BY.crossAppAccess),
    audience: enforced(BY.crossAppAccess),
    resources: enforced(BY.crossAppAccess, {
      note: 'Sent to the identity provider, which binds them into the ID-JAG; the jwt-bearer request carries none.',
    }),
    scopes: enforced(BY.crossAppAccess),
    subjectToken: enforced(BY.crossAppAccess),
    cache: enforced(BY.exchangeCache),
  },
  CrossAppAccessEndpoint: {
    ...endpointReference,
    path: enforced(BY.tokenEndpoint),
    clientAuth: enforced(BY.oauthClientAuth),
  },
  CrossAppAccessSubjectToken: { source: enforced(BY.crossAppAccess), tokenType: enforced(BY.crossAppAccess) },
  JwtSignAuth: {
    signingKeyRef: enforced(BY.jwtSign),
    alg: enforced(BY.jwtSign),
    kid: enforced(BY.jwtSign),
    claims: enforced(BY.jwtSign, {
      note: 'iat, exp and nbf are set by the signer: naming one is refused at admission and at translation.',
    }),
    ttl: enforced(BY.jwtSign),
    location: enforced(BY.jwtSign, { note: 'Setting both location and jwtSign.location is refused.' }),
  },
  CloudoneAuth: {
    secretRef: enforced(BY.cloudone),
    assumeRole: enforced(BY.cloudoneAssumeRole),
    serviceName: enforced(BY.cloudone, {
      note: 'Unset: bedrock for a Bedrock (zeta) provider, else the service of an AWS host name <service>.<region>.amazonaws.com; otherwise the backend is refused.',
    }),
    region: enforced(BY.cloudone, {
      note: 'Unset: the typed backend region, the region of an AWS host name, then the AWS SDK ambient region; none found refuses the backend.',
    }),
  },
  CloudoneAssumeRole: {
    roleId: enforced(BY.cloudoneAssumeRole),
    sessionName: enforced(BY.cloudoneAssumeRole),
    sessionNameExpression: enforced(BY.cloudoneAssumeRole, {
      note: 'A request whose name is not 2-64 characters of [A-Za-z0-9_+=,.@-] is answered 400.',
    }),
    tags: enforced(BY.cloudoneAssumeRole),
  },
  CloudoneSessionTag: {
    key: enforced(BY.cloudoneAssumeRole),
    value: enforced(BY.cloudoneAssumeRole),
    expression: enforced(BY.cloudoneAssumeRole, {
      note: 'A request whose value is empty, longer than 256 characters, holds characters STS refuses, or is no string, number or boolean is answered 400.',
    }),
  },

  // ---- AI settings (spec document 2, "AI settings") ----
  BackendAI: {
    prompt: enforced(BY.promptEnrichment),
    promptGuard: enforced(BY.promptGuards),
    defaults: enforced(BY.aiRequestPolicy),
    overrides: enforced(BY.aiRequestPolicy),
    transformations: enforced(BY.aiRequestPolicy),
    finalTransformations: enforced(BY.aiRequestPolicy),
    modelAliases: enforced(BY.modelAliases),
    promptCaching: enforced(BY.promptCaching, {
      note: 'Cache markers go on Anthropic Messages bodies (gamma, Claude on Vertex and on Foundry, a custom Messages server: cache_control) and Bedrock Converse bodies of Claude and Nova models (zeta: cachePoint); OpenAI and Gemini cache prompts automatically, so no markers are needed and none are sent. Chat requests only; at most 4 markers, the client’s counted first and never moved.',
    }),
    routes: enforced(BY.routeTypes),
  },
  AIPromptEnrichment: { prepend: enforced(), append: enforced() },
  PromptCachingConfig: {
    cacheSystem: enforced(BY.promptCaching, { note: 'A marker after the system prompt.' }),
    cacheMessages: enforced(BY.promptCaching, { note: 'A marker after the message chosen by cacheMessageOffset.' }),
    cacheTools: enforced(BY.promptCaching, { note: 'A marker after the last tool definition.' }),
    minTokens: enforced(BY.promptCaching, {
      note: 'Compared with gw’s estimate of the prompt (system, messages and tools): their characters / 4, inline media left out; a smaller prompt gets no marker.',
    }),
    cacheMessageOffset: enforced(BY.promptCaching, {
      note: 'Counted back from the second-to-last message, stopping at the first; a request of one message gets no message marker.',
    }),
  },
  AIPromptGuard: {
    streaming: enforced(`${DP}/ai/guards/stream-guard.ts`, {
      note: 'Regex Reject response guards read streamed answers as they pass; guards that call a service check them in windows (stream-window.ts), the events held until their window passes. A rejection ends the stream with an error event; Mask does not change streamed content.',
    }),
    request: enforced(BY.promptGuards, {
      note: 'Before the request is planned: a mask reaches what the provider receives, translated or not.',
    }),
    response: enforced(BY.promptGuards, {
      note: 'On whole answers in the client format; streamed answers only with streaming: Enabled.',
    }),
  },
  PromptguardRequest: {
    regex: enforced(BY.regexGuard),
    webhook: enforced(BY.webhookGuard),
    alphaModeration: enforced(BY.alphaModerationGuard, {
      note: 'Every text of the request (system, user, assistant, tool results) in one call to OpenAI’s moderations API (OPENAI_BASE_URL overrides https://api.openai.com/v1); a flagged one is rejected; a failed call refuses the request with 503.',
    }),
    zetaGuardrails: enforced(BY.zetaGuardrails),
    cloudtwoModelArmor: enforced(BY.modelArmorGuard),
    response: enforced(BY.promptGuards, { note: WEBHOOK_OWN_ANSWER }),
  },
  PromptguardResponse: {
    regex: enforced(BY.regexGuard),
    webhook: enforced(BY.webhookGuard),
    zetaGuardrails: enforced(BY.zetaGuardrails),
    cloudtwoModelArmor: enforced(BY.modelArmorGuard),
    response: enforced(BY.promptGuards, { note: WEBHOOK_OWN_ANSWER }),
  },
  CloudtwoModelArmor: {
    templateId: enforced(),
    projectId: enforced(),
    location: enforced(undefined, {
      note: `The regional endpoint modelarmor.<location>.rep.googleapis.com and the template's path; CLOUDSDK_API_ENDPOINT_OVERRIDES_MODELARMOR in gw's environment (gcloud's) replaces the endpoint.`,
    }),
    policies: enforced(BY.guardService),
  },
  CloudtwoModelArmorPolicies: {
    tcp: enforced(BY.connection),
    tls: enforced(BY.connection),
    http: enforced(BY.connection, { note: 'requestTimeout is the deadline of each call (default 10s).' }),
    tunnel: enforced(BY.tunnel),
    auth: enforced(BY.backendAuth, { note: 'Unset: an access token of the ambient Google credentials.' }),
  },
  CloudtwoModelArmorAuth: {
    cloudtwo: enforced(BY.cloudtwo, {
      note: 'An access token (type IdToken is refused: Model Armor accepts access tokens only).',
    }),
  },
  AlphaModeration: {
    model: enforced(BY.alphaModerationGuard, { note: 'Unset: omni-moderation-latest.' }),
    policies: enforced(BY.guardService),
  },
  AlphaModerationPolicies: {
    tcp: enforced(BY.connection),
    tls: enforced(BY.connection),
    http: enforced(BY.guardService, { note: 'requestTimeout is the deadline of each call (unset: 10 s).' }),
    tunnel: enforced(BY.tunnel),
    auth: enforced(BY.backendAuth),
  },
  AlphaModerationAuth: {
    key: enforced(BY.backendAuth),
    secretRef: enforced(BY.backendAuth),
    location: enforced(BY.backendAuth, { note: 'Unset: the Authorization header with prefix "Bearer ".' }),
  },
  Regex: { action: enforced(), matches: enforced(), builtins: enforced(`${DP}/ai/guards/builtins.ts`) },
  ZetaGuardrails: {
    identifier: enforced(BY.zetaGuardrails),
    version: enforced(BY.zetaGuardrails),
    region: enforced(BY.zetaGuardrails, {
      note: 'Bedrock Runtime of the region (bedrock-runtime.<region>.amazonaws.com, unless AWS_ENDPOINT_URL_BEDROCK_RUNTIME or AWS_ENDPOINT_URL says otherwise), and the SigV4 signing region.',
    }),
    policies: enforced(BY.guardService),
  },
  ZetaGuardrailsPolicies: {
    tcp: enforced(BY.connection),
    tls: enforced(BY.connection),
    http: enforced(BY.guardService, { note: 'requestTimeout is the guard call’s deadline (10 s unset).' }),
    tunnel: enforced(BY.tunnel),
    auth: enforced(BY.backendAuth, {
      note: 'Unset: SigV4 with the ambient AWS credentials (cloudone: {}), for bedrock in the guard’s region.',
    }),
  },
  ZetaGuardrailsAuth: {
    key: enforced(BY.backendAuth, {
      note: 'A Bedrock API key, sent as Authorization: Bearer unless location says otherwise.',
    }),
    secretRef: enforced(BY.backendAuth),
    cloudone: enforced(BY.cloudone, {
      note: 'Signs for bedrock in the guard’s region unless serviceName or region say otherwise.',
    }),
    location: enforced(BY.backendAuth),
  },
  RegexMatch: { pattern: enforced(), name: enforced() },
  Webhook: {
    backendRef: enforced(BY.webhookGuard, {
      note: 'A Service, or a static GwBackend whose tcp, tls, http and auth policies apply to the call (others are refused).',
    }),
    headers: enforced(BY.webhookGuard, {
      note: 'Evaluated per call against the client request; a failing expression leaves the header off. Pseudo-headers and the headers gw writes itself (content-type, content-length, host, connection-level ones) are refused.',
    }),
    forwardHeaderMatches: enforced(BY.webhookGuard, {
      note: 'A client header is forwarded, every value, when one of its values matches an entry.',
    }),
    failureMode: enforced(BY.webhookGuard, {
      note: 'A webhook that cannot be reached, times out (http.requestTimeout of its GwBackend, else 10 s), answers non-2xx or an answer gw cannot read: FailClosed answers 503, FailOpen lets the text through.',
    }),
  },
  // A webhook's forwardHeaderMatches (Gateway API's header match: Exact, or a full-match RegularExpression).
  HTTPHeaderMatch: { type: enforced(), name: enforced(), value: enforced() },
  CustomResponse: { message: enforced(), statusCode: enforced() },
  Message: { role: enforced(), content: enforced() },
  FieldDefault: { field: enforced(), value: enforced() },
  FieldTransformation: { field: enforced(), expression: enforced() },

  // ---- MCP policy (spec document 2, "MCP types") ----
  BackendMCP: {
    authorization: enforced(BY.mcpAuthorization),
    authentication: enforced(BY.mcpBackendAuthentication, {
      note: 'Deprecated: runs as a request step after the rule’s traffic policies; traffic.jwtAuthentication.mcp runs before them.',
    }),
    guardrails: enforced(BY.mcpGuardrails),
  },
  MCPAuthentication: {
    resourceMetadata: enforced(),
    provider: enforced(),
    issuer: enforced(),
    audiences: enforced(),
    jwks: enforced(),
    mode: enforced(),
    clientId: enforced(),
    clientSecretRef: enforced(),
  },
  MCPGuardrails: { processors: enforced() },
  MCPGuardrailsProcessor: { remote: enforced(), methods: enforced(`${DP}/mcp/policies/method-phases.ts`) },
  MCPGuardrailsRemote: {
    ...endpointReference,
    failureMode: enforced(),
    metadata: enforced(),
    allowedRequestHeaders: enforced(`${DP}/mcp/policies/processor-headers.ts`),
    disallowedRequestHeaders: enforced(`${DP}/mcp/policies/processor-headers.ts`),
  },

  // ---- GwModel policies (spec document 2, "Model resource types") ----
  ModelPolicies: {
    transformations: enforced(BY.aiRequestPolicy),
    finalTransformations: enforced(BY.aiRequestPolicy),
    authorization: enforced(BY.models),
    auth: enforced(BY.backendAuth),
    health: enforced(BY.health),
    tls: enforced(BY.connection),
    // Replaces a tunnel the GwPolicies' backend policy gives (ai/models.ts endpointPolicy).
    tunnel: enforced(BY.tunnel),
    headers: enforced(BY.llmRequest),
    promptGuard: enforced(BY.promptGuards, {
      note: "Replaces a promptGuard the GwPolicies' backend.ai gives (the model's own policies win field by field).",
    }),
  },

  // ---- GwBackend spec (spec document 1, "GwBackend") ----
  GwBackendSpec: {
    ai: enforced(BY.aiBackend),
    static: enforced(BY.httpTargets),
    dynamicForwardProxy: enforced(BY.forwardProxy),
    mcp: enforced(BY.mcpBackend),
    aws: enforced(BY.agentCore),
    a2a: enforced(BY.a2a, {
      note: 'Both bindings (JSON-RPC, HTTP+JSON) of A2A v1.0 and v0.3; the agent card names gw; backend policies apply as to a static backend.',
    }),
  },
  A2ABackend: { host: enforced(BY.a2a), port: enforced(BY.a2a) },
  CloudoneBackend: { agentCore: enforced(BY.agentCore) },
  CloudoneAgentCore: {
    agentRuntimeId: enforced(BY.agentCoreRuntime, {
      note: "The runtime's ARN (its region picks the endpoint bedrock-agentcore.<region>.amazonaws.com), or a runtime id sent with accountId from AWS_ACCOUNT_ID and the region of cloudone.region, AWS_REGION or AWS_DEFAULT_REGION; AWS_ENDPOINT_URL_BEDROCK_AGENTCORE, then AWS_ENDPOINT_URL, replace the endpoint.",
    }),
    qualifier: enforced(BY.agentCoreRuntime, { note: 'Sent as the qualifier query parameter of every invocation.' }),
  },
  StaticBackend: { host: enforced(), port: enforced(), unixPath: enforced() },
  DynamicForwardProxyBackend: {
    allowedAddresses: enforced(BY.destinationRules),
    allowedHosts: enforced(BY.destinationRules),
    deniedAddresses: enforced(BY.destinationRules),
  },
  AIBackend: { provider: enforced(), groups: enforced(BY.priorityGroups) },
  PriorityGroup: { providers: enforced() },
  LLMProvider: llmProviderFields,
  NamedLLMProvider: { name: enforced(BY.aiBackend), ...llmProviderFields },
  AlphaConfig: {
    model: enforced(),
    moderation: enforced(BY.inlineModeration, {
      note: 'The `moderation` parameter of every Chat Completions and Responses request gw sends the provider (the client’s replaced); gw reads the results of the answer (access log gw.ai.moderation, CEL llm.moderation). Other requests (embeddings, model listing) are not chat and carry none; Passthrough, Detect and Realtime requests are refused (400).',
    }),
  },
  AlphaInlineModeration: {
    model: enforced(BY.inlineModeration, { note: 'Unset: omni-moderation-latest.' }),
    policy: enforced(BY.inlineModeration),
    'policy.input': enforced(),
    'policy.input.mode': enforced(undefined, {
      note: 'Block: gw refuses a flagged request (403) and one without input results (503), and refuses streamed requests (400).',
    }),
    'policy.output': enforced(),
    'policy.output.mode': enforced(undefined, {
      note: 'Block: gw refuses a flagged answer (403) and one without output results (503), and refuses streamed requests (400); Score: recorded, streams included.',
    }),
  },
  GammaConfig: { model: enforced() },
  ZetaConfig: { region: ZETA_REGION, guardrail: ZETA_GUARDRAIL, model: enforced() },
  CloudoneGuardrailConfig: { identifier: enforced(BY.zeta), version: enforced(BY.zeta) },
  DeltaConfig: { model: enforced() },
  EpsilonConfig: { projectId: EPSILON_PROJECT, region: EPSILON_REGION, model: enforced() },
  BetaAlphaConfig: {
    endpoint: enforced(BY.betaalpha, { note: 'The host requests go to (scheme and trailing slash stripped).' }),
    deploymentName: enforced(BY.betaalpha, {
      note: 'The model override; in the path of chat completions and embeddings with a dated apiVersion.',
    }),
    apiVersion: enforced(BY.betaalpha, {
      note: 'v1: the /openai/v1 paths; preview: the same with ?api-version=preview; any other: deployment paths with ?api-version=<it>.',
    }),
  },
  BetaConfig: { ...betaResource, model: enforced(BY.betaFamily, { note: BETA_MODEL }) },
  CustomProvider: {
    backendRef: enforced(BY.custom, { note: CUSTOM_BACKEND_REF_NOTE }),
    formats: enforced(),
    model: enforced(),
  },
  ProviderFormatConfig: { type: enforced(), path: enforced() },
  MCPBackend: {
    targets: enforced(BY.mcpTargets),
    sessionRouting: enforced(BY.mcpSession),
    failureMode: enforced(BY.mcpMultiplexer),
    prefixMode: enforced(BY.mcpNaming),
  },
  McpTargetSelector: {
    name: enforced(),
    selector: enforced(BY.selectors, {
      note: 'The controller lists the Services the selectors choose; the data plane serves their MCP ports.',
    }),
    static: enforced(),
  },
  McpSelector: { namespaces: enforced(), services: enforced() },
  LabelSelector: { matchLabels: enforced(), matchExpressions: enforced() },
  LabelSelectorRequirement: { key: enforced(), operator: enforced(), values: enforced() },
  McpTarget: {
    host: enforced(),
    backendRef: enforced(),
    'backendRef.name': enforced(),
    port: enforced(),
    path: enforced(),
    protocol: enforced(),
  },

  // ---- GwModel spec (spec document 1, "GwModel") ----
  GwModelSpec: {
    match: enforced(BY.models),
    visibility: enforced(BY.models),
    provider: enforced(BY.models, {
      note: 'Every ModelProvider value is served (docs/providers.md, GwModel providers).',
    }),
    beta: enforced(BY.modelProvider, { note: "The beta (Azure AI) provider's resource: see BetaSettings." }),
    epsilon: enforced(BY.modelProvider, { note: "The epsilon (Vertex AI) provider's projectId and region." }),
    zeta: enforced(BY.modelProvider, { note: "The zeta (Amazon Bedrock) provider's region and guardrail." }),
    custom: enforced(BY.custom),
    baseURL: enforced(BY.models, {
      note: "Scheme, host and port address the provider; the path takes the place of the API's /v1 base (Custom models: in each format's usual path; a format's own path is kept).",
    }),
    virtualModel: enforced(BY.virtualModels),
  },
  ModelMatch: { model: enforced() },
  BetaSettings: betaResource,
  CustomProviderSettings: {
    backendRef: enforced(BY.custom, { note: CUSTOM_BACKEND_REF_NOTE }),
    formats: enforced(),
  },
  EpsilonSettings: { projectId: EPSILON_PROJECT, region: EPSILON_REGION },
  ZetaSettings: { region: ZETA_REGION, guardrail: ZETA_GUARDRAIL },
  VirtualModel: { weighted: enforced(), failover: enforced(), conditional: enforced() },
  WeightedModelRouting: { targets: enforced() },
  WeightedModelTarget: { ...modelTarget, weight: enforced() },
  FailoverModelRouting: { targets: enforced() },
  FailoverModelTarget: { ...modelTarget, priority: enforced() },
  ConditionalModelRouting: { targets: enforced() },
  ConditionalModelTarget: { ...modelTarget, when: enforced() },
};

// ---------------------------------------------------------------------------------------------
// Per place: what differs from the types' declarations.

/**
 * The response side of traffic on rules whose backend is not plain HTTP (ai, mcp, GwModels):
 * applied by the one response path every backend kind shares.
 */
const RESPONSE_SIDE: Declarations = {
  'transformation.response': enforced(BY.responsePath),
  'transformation.conditional.policy.response': enforced(BY.responsePath),
  'extProc.processingOptions.responseHeaderMode': enforced(BY.responsePath),
  'extProc.processingOptions.responseBodyMode': enforced(BY.responsePath),
  'extProc.processingOptions.responseTrailerMode': enforced(BY.responsePath),
  'extProc.responseAttributes': enforced(BY.responsePath),
  'extProc.conditional.policy.processingOptions.responseHeaderMode': enforced(BY.responsePath),
  'extProc.conditional.policy.processingOptions.responseBodyMode': enforced(BY.responsePath),
  'extProc.conditional.policy.processingOptions.responseTrailerMode': enforced(BY.responsePath),
  'extProc.conditional.policy.responseAttributes': enforced(BY.responsePath),
  'headerModifiers.response': enforced(BY.responsePath),
  'buffer.response': enforced(BY.responsePath),
};

/**
 * A traffic place whose backend is not plain HTTP: the response side in the response path, the
 * extProc response phase there too, no host rewrite, and its own retry refusal and deadline.
 */
function notHttpTraffic(retry: string, timeouts: Enforcement, host: string): Declarations {
  return {
    ...RESPONSE_SIDE,
    extProc: enforced(BY.extProc, {
      note: 'The request phase runs in the traffic pipeline; the response phase (on unless processingOptions turn it off) in the response path.',
    }),
    retry: refused(retry),
    hostRewrite: enforced(host, {
      note: "Auto is what gw does for these backends: the provider's or target's own Host.",
    }),
    'hostRewrite.mode': enforced(undefined, { refusedValues: { None: HOST_REWRITE_NONE } }),
    timeouts,
  };
}

export const PLACE_DECLARATIONS: Readonly<Partial<Record<PlaceName, Declarations>>> = {
  'traffic:aws': {
    hostRewrite: enforced(BY.agentCore, {
      note: 'Auto is what gw does for an AgentCore runtime: the Host is always its endpoint’s, which the signature covers.',
    }),
    'hostRewrite.mode': enforced(undefined, { refusedValues: { None: HOST_REWRITE_NONE_AGENTCORE } }),
  },
  'traffic:ai': notHttpTraffic(
    RETRY_AI,
    enforced(BY.llmRequest, {
      note: 'The whole request from its arrival: every provider attempt of a failover included.',
    }),
    BY.llmRequest,
  ),
  'traffic:mcp': notHttpTraffic(
    RETRY_MCP,
    enforced(`${DP}/mcp/client-input.ts`, {
      note: 'The deadline of each call to a target (a client request can make several).',
    }),
    `${DP}/mcp/upstream-http.ts`,
  ),
  'traffic:models': notHttpTraffic(
    RETRY_MODELS,
    enforced(BY.llmRequest, {
      note: 'The whole request from its arrival: every attempt of a failover virtual model included.',
    }),
    BY.llmRequest,
  ),
  'backend:http': {
    health: enforced(`${DP}/backends/http.ts`, {
      note: "Per backendRef: an evicted backend gets a rule's requests only while every backend of the rule is evicted.",
    }),
    ai: enforced(BY.appliesTo, { note: AI_ONLY }),
    mcp: enforced(BY.appliesTo, { note: MCP_ONLY }),
  },
  'backend:dynamic': {
    health: refused(FORWARD_PROXY_HEALTH),
  },
  'backend:aws': {
    auth: enforced(BY.agentCore, {
      note: 'Unset: SigV4 (cloudone) with the ambient AWS credentials, for bedrock-agentcore in the runtime’s region. A bearer credential (key, secretRef, passthrough...) suits a runtime configured for JWT inbound authorization.',
    }),
  },
  'backend:ai': {
    mcp: enforced(BY.appliesTo, { note: MCP_ONLY }),
    health: enforced(BY.priorityGroups, {
      note: 'Per provider: health scores and eviction weigh the priority groups.',
    }),
  },
  'backend:ai-provider': {
    'ai.routes': refused(ROUTES_PER_BACKEND),
    transformation: enforced(BY.providerRequestPolicies, { note: PROVIDER_REQUEST_POLICY_NOTE }),
    extAuth: enforced(BY.providerRequestPolicies, { note: PROVIDER_REQUEST_POLICY_NOTE }),
  },
  'backend:mcp': {
    ai: enforced(BY.appliesTo, { note: AI_ONLY }),
    health: refused(MCP_HEALTH),
  },
  'backend:mcp-target': {
    mcp: refused(MCP_WHOLE_BACKEND),
    transformation: enforced(BY.targetRequestPolicies, { note: TARGET_REQUEST_POLICY_NOTE }),
    'transformation.response': refused(TARGET_RESPONSE_TRANSFORM),
    extAuth: enforced(BY.targetRequestPolicies, { note: TARGET_REQUEST_POLICY_NOTE }),
  },
  'backend:models': {
    tcp: enforced(BY.models, { note: "Under the GwModel's own spec.policies, which win field by field." }),
    tls: enforced(BY.models, { note: "Under the GwModel's own spec.policies.tls, which wins." }),
    http: enforced(BY.models),
    auth: enforced(BY.models, { note: "Under the GwModel's own spec.policies.auth, which wins." }),
    health: enforced(BY.models, { note: "Under the GwModel's own spec.policies.health, which wins." }),
    ai: enforced(BY.models, {
      note: "Applied with the GwModel's own transformations and finalTransformations (its own run after).",
    }),
    'ai.routes': refused(MODEL_ROUTES),
    mcp: enforced(BY.appliesTo, { note: MCP_ONLY }),
  },
};
