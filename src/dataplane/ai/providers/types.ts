// The contract between a compiled LLM provider and the proxy: what the proxy asks (the client's
// format, route type and body) and what it gets back (where to send, what to send, and how to
// treat the answer). docs/providers.md describes every rule.
import type { IncomingHttpHeaders } from 'node:http';
import type { RouteType } from '../../../api/types/ai.ts';
import type { KeyStyle } from '../../auth/backend/index.ts';
import type { Destination } from '../../upstream/connection-settings.ts';
import type {
  ClientChatFormat,
  ExchangeTranslation,
  JsonObject,
  ProviderChatFormat,
  TranslationWarning,
} from '../formats/index.ts';
import type { ClientFormat, PlanError } from './errors.ts';

/** What a client speaks: one of the LLM API formats, or the model listing (`GET …/models`). */

/** The provider families this data plane serves. */
export type ProviderFamily = 'alpha' | 'betaalpha' | 'beta' | 'gamma' | 'delta' | 'epsilon' | 'zeta' | 'custom';

/**
 * What a provider is sent: a client format, or a vendor API no client speaks to gw: Gemini
 * generateContent (and its countTokens, batchEmbedContents), Bedrock Converse (and its
 * CountTokens), Vertex AI's predict, Bedrock InvokeModel (their embedding models).
 */
export type UpstreamFormat = ClientFormat | 'gemini' | 'converse' | 'vertex-predict' | 'bedrock-invoke';

/**
 * Where a provider expects its key when the backend auth names no location: `bearer` is
 * `Authorization: Bearer <key>`; `x-api-key` is the gamma (Anthropic) header;
 * `x-goog-api-key` the delta (Gemini API) one; `api-key` the betaalpha and beta (Azure) one. Hand it to
 * `compileBackendAuth` (src/dataplane/auth/backend/).
 */
export type ProviderKeyStyle = KeyStyle;

/** The scheme, host and port of the provider. `host` is as configured (no brackets around IPv6). */
export interface Origin {
  protocol: 'http:' | 'https:';
  host: string;
  port: number;
}

/**
 * A custom provider's `backendRef`, resolved: the Service and where gw reaches it (its address as
 * upstream/destinations.ts reads it from the Service's spec, TLS as the backend policy says); or
 * an InferencePool, whose member each request goes to is picked per request (../inference-pool/).
 */
export type ProviderService =
  | { kind: 'Service'; namespace: string; name: string; port: number; destination: Destination }
  | { kind: 'InferencePool'; namespace: string; name: string };

/**
 * Whether an InferencePool of the provider's namespace exists, with the port that stands for it in
 * the provider's origin (its first target port), or why it cannot be used.
 */
export type PoolResolver = (name: string) => { port: number } | string;

/**
 * Where a Service of the provider's namespace is reached at `port`, or why it cannot be (it does
 * not exist, lacks the port, has no address): the caller resolves it from the configuration.
 */
export type ServiceResolver = (name: string, port: number) => Destination | string;

export interface PlanInput {
  clientFormat: ClientFormat;
  routeType: RouteType;
  /** The client's decoded JSON body; `undefined` for a GET or an unparsed passthrough body. */
  body: JsonObject | undefined;
  /** The client asked for an SSE response (see `isStreaming` in formats/). */
  stream: boolean;
  /** The client's headers; read for `anthropic-version` only. */
  headers?: IncomingHttpHeaders;
  /** The model a Realtime client names in its query (`?model=`). */
  realtimeModel?: string;
  /** The client's method and path (no query); needed for the Passthrough and Detect route types only. */
  method?: string;
  path?: string;
}

/**
 * What to do with the provider's answer. `same`: pass it on (an observer reads usage; with
 * `dropUsageOnlyChunk` it leaves out the Chat Completions usage chunk gw asked for on the client's
 * behalf; with `rewriteErrors` its error bodies are rewritten to the client's format, for a provider
 * that answers some errors in another shape than its format's: Vertex AI's, Google's, before
 * Anthropic's models). `translate`: the response, stream and errors go through the formats/ translators
 * from the provider's format to the client's; `includeUsage` is the client's own
 * `stream_options.include_usage` (for `createStreamTranslator`). The response's model is the one
 * the provider reports: pass no `model` option to the translators. `detect` (the Detect route
 * type): pass it on as it is, whatever it is; read usage and model from it when its shape is
 * one of the formats gw knows (`detectedResponseFormat`, a `detect` stream observer).
 * `token-count`: Anthropic's count_tokens answer ({input_tokens}) to a Gemini countTokens client,
 * answered as {totalTokens}, its errors in Google's shape.
 * `convert` (embeddings and count_tokens answered by another vendor's API): never a stream; a 2xx
 * JSON answer is rewritten by `readAnswer`, an error body from the `errorsFrom` vendor's shape to
 * the client's.
 * `passthrough` (the Passthrough route type): the answer goes back byte for byte as it comes,
 * whatever its content type (a Bedrock event stream, audio, JSON), read for nothing: not metered.
 */
export type ResponseHandling =
  | { kind: 'same'; dropUsageOnlyChunk: boolean; rewriteErrors?: true }
  | { kind: 'translate'; from: ProviderChatFormat; to: ClientChatFormat; includeUsage: boolean }
  | { kind: 'detect' }
  | { kind: 'passthrough' }
  | { kind: 'token-count' }
  | { kind: 'convert'; errorsFrom: ProviderChatFormat; readAnswer: ExchangeTranslation['readAnswer'] };

export interface UpstreamPlan {
  origin: Origin;
  /** Set for a custom provider with a backendRef: the Service; `origin` is its resolved address. */
  service?: ProviderService;
  /** The request path, without a query. */
  path: string;
  /** Query parameters written in a configured path; set them on top of the client's query. */
  query: readonly (readonly [string, string])[];
  method: string;
  /** Provider-specific headers; each replaces a client header of the same name. Names are lowercase. */
  headers: Record<string, string>;
  /**
   * The body to send as JSON: translated to the provider's format, model override applied, stream
   * usage requested where the format needs it. It may be the input object itself when nothing
   * changed. `undefined`: send no body (GET), or the client's bytes unchanged (Passthrough, and
   * Detect when the body is not a JSON object).
   */
  body: JsonObject | undefined;
  /** What the provider is sent: a client format, or a provider's own (Gemini generateContent, Bedrock Converse). */
  providerFormat: UpstreamFormat;
  response: ResponseHandling;
  /** The model the client asked for (the body's `model`). */
  requestModel: string | undefined;
  /** The model sent to the provider: the provider's model override, else the client's. */
  upstreamModel: string | undefined;
  /** What the request translation dropped or changed, for the log; present only when something was. */
  warnings?: TranslationWarning[];
}

export interface CompiledProvider {
  /** The NamedLLMProvider's name, when it has one. */
  readonly name: string | undefined;
  readonly family: ProviderFamily;
  /** The formats the provider speaks natively (others may be served by translation). */
  readonly formats: readonly UpstreamFormat[];
  readonly origin: Origin;
  readonly service: ProviderService | undefined;
  /** Default placement of the backend auth key; hand it to `compileBackendAuth`. */
  readonly keyStyle: ProviderKeyStyle;
  /** The configured model override, if any. */
  readonly model: string | undefined;
  /** The provider's region (zeta): the signing region of its backend auth. */
  readonly region: string | undefined;
  /**
   * The host whose credentials the provider takes when it is not the origin's (the Azure families:
   * their resource's host, whose suffix picks the Entra ID token scope, also when `host` sends the
   * requests elsewhere).
   */
  readonly credentialHost?: string | undefined;
  /**
   * Origins other than `origin` that some plans name (Bedrock's and Vertex AI's rerank APIs, on
   * hosts of their own): the endpoint opens a connection pool for each, with the same policy.
   */
  readonly routeOrigins?: readonly Origin[];
  /** The upstream request for one client request, or the error to answer with (never throws). */
  plan(input: PlanInput): UpstreamPlan | PlanError;
}
