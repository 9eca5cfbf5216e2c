// The request planning every family shares: pick the provider format that serves the client's
// (the same one, else the other chat format by translation), translate the body with formats/,
// apply the model override, ask for stream usage, and set the provider's headers. A family only
// says which formats it speaks, at which paths, with which headers.

import type { RouteType } from '../../../api/types/ai.ts';
import { familyLabel, vendorName } from '../../../api/vendors.ts';
import { translateGeminiCountTokens } from '../formats/gemini/count-tokens.ts';
import type { GeminiMethod } from '../formats/gemini/path.ts';
import {
  type ClientChatFormat,
  type ExchangeTranslation,
  type JsonObject,
  type ProviderChatFormat,
  type RequestTranslation,
  requestModel,
  streamIncludesUsage,
  TranslationError,
  translateRequest,
  withStreamUsage,
} from '../formats/index.ts';
import type { ClientFormat } from './errors.ts';
import { PlanError } from './errors.ts';
import type { FamilyAddress } from './family-address.ts';
import { type ConfiguredPath, plainPath, prefixedClientPath } from './paths.ts';
import type {
  CompiledProvider,
  Origin,
  PlanInput,
  ProviderFamily,
  ProviderKeyStyle,
  ProviderService,
  ResponseHandling,
  UpstreamFormat,
  UpstreamPlan,
} from './types.ts';

/** The Messages API version gw's translations are written for (https://docs.anthropic.com/en/api/versioning). */
export const ANTHROPIC_VERSION = '2023-06-01';

/** The client format each route type carries (the rest are not LLM formats gw translates). */
export const ROUTE_CLIENT_FORMAT: Partial<Record<RouteType, ClientFormat>> = {
  Completions: 'completions',
  Messages: 'messages',
  Responses: 'responses',
  Embeddings: 'embeddings',
  GammaTokenCount: 'count_tokens',
  GenerateContent: 'gemini',
  DeltaCountTokens: 'gemini_count_tokens',
  Models: 'models',
  Rerank: 'rerank',
  Realtime: 'realtime',
};

/** Route types whose requests are forwarded as they are (no format, no model override). */
export const FORWARDED_AS_IS: ReadonlySet<RouteType> = new Set(['Passthrough', 'Detect']);

const FORWARDED_RESPONSE: ResponseHandling = Object.freeze({ kind: 'same', dropUsageOnlyChunk: false });
const DETECT_RESPONSE: ResponseHandling = Object.freeze({ kind: 'detect' });
const PASSTHROUGH_RESPONSE: ResponseHandling = Object.freeze({ kind: 'passthrough' });

const ANTHROPIC_FORMATS: ReadonlySet<UpstreamFormat> = new Set(['messages', 'count_tokens']);

export interface ProviderDefinition {
  name: string | undefined;
  family: ProviderFamily;
  origin: Origin;
  service: ProviderService | undefined;
  keyStyle: ProviderKeyStyle;
  model: string | undefined;
  /** The formats the provider speaks, each at its path. */
  routes: ReadonlyMap<UpstreamFormat, ConfiguredPath>;
  /**
   * For a provider whose URL names the model and whether to stream (Gemini): the path and query
   * of one request, from the format's route, the model, and the client's wish to stream; a
   * string says why the model cannot be sent (the client is answered 400).
   */
  modelRoute?: (route: ConfiguredPath, model: string | undefined, method: GeminiMethod) => ConfiguredPath | string;
  /** The path of a Passthrough or Detect request, from the client's. */
  forwardedPath: (clientPath: string) => ConfiguredPath;
  /** Whether forwarded (Passthrough, Detect) requests carry `anthropic-version` (the gamma family). */
  forwardedAnthropicVersion: boolean;
  /** The provider's region (zeta): its host's, and the signing region of its backend auth. */
  region?: string;
  /** The host whose credentials the provider takes, when not the origin's (CompiledProvider.credentialHost). */
  credentialHost?: string;
  /** The provider speaks Bedrock Converse (zeta): every chat format is translated to it. */
  converse?: ConverseTarget;
  /** Client formats served by one whole exchange with an API of the family's own (embeddings, count_tokens). */
  exchanges?: ReadonlyMap<ClientFormat, ExchangePlanner>;
  /** Origins other than `origin` that exchanges send to (CompiledProvider.routeOrigins). */
  routeOrigins?: readonly Origin[];
}

/**
 * The request a family sends for one client request it serves by an exchange of its own, from
 * the client's body, the model (the override, else the client's) and the family's routes; a
 * string says why it cannot be sent (the client is answered 400). May throw TranslationError (400).
 */
export type ExchangePlanner = (
  body: JsonObject,
  model: string | undefined,
  routes: ReadonlyMap<UpstreamFormat, ConfiguredPath>,
) => PlannedExchange | string;

export interface PlannedExchange {
  route: ConfiguredPath;
  providerFormat: UpstreamFormat;
  /** The model sent (in the path): the one shown to the client and recorded. */
  model: string;
  translation: ExchangeTranslation;
  /** Where the exchange goes when not the provider's origin (a rerank API on a host of its own); one of `routeOrigins`. */
  origin?: Origin;
}

/** Where a Converse provider takes a request, and the fields its configuration adds to each body. */
export interface ConverseTarget {
  /** The path for a model id (it goes in the path, not the body) and a streaming or whole answer. */
  path(model: string, stream: boolean): ConfiguredPath;
  /** Top-level fields of every request (the guardrailConfig). */
  fields?: JsonObject;
}

/** The client formats a Converse provider serves, by translation. */
const CONVERSE_CLIENTS: ReadonlySet<ClientFormat> = new Set(['completions', 'messages', 'responses', 'gemini']);

const JSON_HEADERS = {
  'content-type': 'application/json',
  // gw reads every answer (usage, translation): a compressed one would have to be inflated first.
  'accept-encoding': 'identity',
} as const;

/**
 * The provider formats a client format is translated to when the provider does not speak it, in
 * order of preference (the Responses API is closest to Chat Completions). A provider's Responses
 * API comes last: it serves Chat Completions, Messages and Gemini clients only when the provider has no
 * other chat format (a server that speaks only the Responses API), since its conversation state
 * and built-in tools mean nothing to a translated request (docs/llm-formats.md).
 */
const TRANSLATION_TARGETS: Partial<Record<ClientFormat, readonly ProviderChatFormat[]>> = {
  completions: ['messages', 'gemini', 'responses'],
  messages: ['completions', 'gemini', 'responses'],
  responses: ['completions', 'messages', 'gemini'],
  gemini: ['completions', 'messages', 'responses'],
};

/** A Gemini body without the `model` and `stream` gw read into it from the client's path (the URL says them). */
function withoutPathFields(body: JsonObject): JsonObject {
  if (!('model' in body) && !('stream' in body)) return body;
  const { model: _model, stream: _stream, ...rest } = body;
  return rest;
}

/** The client's `anthropic-version` when it sent one, else the version gw's translations target. */
function anthropicVersion(input: PlanInput, clientSpeaksAnthropic: boolean): string {
  const sent = clientSpeaksAnthropic ? input.headers?.['anthropic-version'] : undefined;
  const value = Array.isArray(sent) ? sent[0] : sent;
  return value !== undefined && value !== '' ? value : ANTHROPIC_VERSION;
}

export class ProviderPlanner implements CompiledProvider {
  readonly name: string | undefined;
  readonly family: ProviderFamily;
  readonly formats: readonly UpstreamFormat[];
  readonly origin: Origin;
  readonly service: ProviderService | undefined;
  readonly keyStyle: ProviderKeyStyle;
  readonly model: string | undefined;
  readonly region: string | undefined;
  readonly credentialHost: string | undefined;
  readonly routeOrigins: readonly Origin[];
  readonly #definition: ProviderDefinition;
  readonly #label: string;

  constructor(definition: ProviderDefinition) {
    this.#definition = definition;
    this.name = definition.name;
    this.family = definition.family;
    this.formats = Object.freeze([...definition.routes.keys()]);
    this.origin = Object.freeze({ ...definition.origin });
    this.service = definition.service && Object.freeze({ ...definition.service });
    this.keyStyle = definition.keyStyle;
    this.model = definition.model;
    this.region = definition.region;
    this.credentialHost = definition.credentialHost;
    this.routeOrigins = Object.freeze((definition.routeOrigins ?? []).map((origin) => Object.freeze({ ...origin })));
    // The vendor goes with the family: "provider gamma (Anthropic)", "provider claude (gamma, Anthropic)".
    const vendor = vendorName(definition.family);
    this.#label =
      definition.name === undefined
        ? `provider ${familyLabel(definition.family)}`
        : `provider ${definition.name} (${definition.family}${vendor === undefined ? '' : `, ${vendor}`})`;
  }

  plan(input: PlanInput): UpstreamPlan | PlanError {
    if (FORWARDED_AS_IS.has(input.routeType)) return this.#forwarded(input);
    if (input.clientFormat === 'gemini_count_tokens') return this.#geminiCountTokens(input);
    const route = this.#definition.routes.get(input.clientFormat);
    if (route !== undefined) {
      if (input.clientFormat === 'realtime') return this.#realtime(input, route);
      return input.clientFormat === 'gemini' ? this.#sameGemini(input, route) : this.#sameFormat(input, route);
    }
    const exchange = this.#definition.exchanges?.get(input.clientFormat);
    if (exchange !== undefined) return this.#exchange(input, exchange);
    const converse = this.#definition.converse;
    if (converse !== undefined && CONVERSE_CLIENTS.has(input.clientFormat)) return this.#converse(input, converse);
    for (const target of TRANSLATION_TARGETS[input.clientFormat] ?? []) {
      const translatedRoute = this.#definition.routes.get(target);
      if (translatedRoute) return this.#translated(input, target, translatedRoute);
    }
    return new PlanError(
      400,
      input.clientFormat,
      `The ${input.clientFormat} API is not supported by ${this.#label}; it serves ${this.#servedList()}.`,
    );
  }

  #servedList(): string {
    const exchanges = [...(this.#definition.exchanges?.keys() ?? [])];
    if (this.#definition.converse !== undefined) return [...CONVERSE_CLIENTS, ...exchanges].join(', ');
    const served: string[] = [...this.formats, ...exchanges];
    for (const [client, targets] of Object.entries(TRANSLATION_TARGETS) as [
      ClientFormat,
      readonly ProviderChatFormat[],
    ][]) {
      if (!served.includes(client) && targets.some((target) => this.formats.includes(target))) served.push(client);
    }
    return served.join(', ');
  }

  #plan(
    input: PlanInput,
    route: ConfiguredPath,
    providerFormat: UpstreamFormat,
    body: JsonObject | undefined,
    response: ResponseHandling,
    warnings: RequestTranslation['warnings'],
  ): UpstreamPlan {
    const clientModel = requestModel(input.body);
    const headers: Record<string, string> = body === undefined ? {} : { ...JSON_HEADERS };
    // Anthropic's model listing takes the version header too (the gamma family's forwarded requests carry it).
    const anthropic =
      ANTHROPIC_FORMATS.has(providerFormat) ||
      (providerFormat === 'models' && this.#definition.forwardedAnthropicVersion);
    if (anthropic) {
      headers['anthropic-version'] = anthropicVersion(input, ANTHROPIC_FORMATS.has(input.clientFormat));
    }
    const plan: UpstreamPlan = {
      origin: this.origin,
      path: route.path,
      query: route.query,
      method: providerFormat === 'models' ? 'GET' : 'POST',
      headers,
      body,
      providerFormat,
      response,
      requestModel: clientModel,
      upstreamModel: body === undefined ? clientModel : requestModel(body),
    };
    if (this.service) plan.service = this.service;
    if (warnings && warnings.length > 0) plan.warnings = warnings;
    return plan;
  }

  #requireBody(input: PlanInput): JsonObject | PlanError {
    if (input.body === undefined) {
      return new PlanError(400, input.clientFormat, 'The request body must be a JSON object.');
    }
    return input.body;
  }

  /** The model override replaces the body's model; `owned` says the body is already a copy. */
  #withModel(body: JsonObject, owned: boolean): JsonObject {
    const model = this.model;
    if (model === undefined || body.model === model) return body;
    if (owned) {
      body.model = model;
      return body;
    }
    return { ...body, model };
  }

  #sameFormat(input: PlanInput, route: ConfiguredPath): UpstreamPlan | PlanError {
    const format = input.clientFormat;
    if (format === 'models') {
      return this.#plan(input, route, format, undefined, { kind: 'same', dropUsageOnlyChunk: false }, undefined);
    }
    const clientBody = this.#requireBody(input);
    if (clientBody instanceof PlanError) return clientBody;
    let body = clientBody;
    let added = false;
    // Chat Completions reports usage in a stream only when asked; gw needs it to count tokens.
    if (format === 'completions' && input.stream) ({ body, added } = withStreamUsage(clientBody));
    body = this.#withModel(body, body !== clientBody);
    return this.#plan(input, route, format, body, { kind: 'same', dropUsageOnlyChunk: added }, undefined);
  }

  /**
   * A Gemini client's request to a Gemini provider (delta, epsilon): sent as it is, but for the
   * model and the method, which go in the URL (the override, else the client's model, which gw
   * read from its path into the body's `model`: Gemini refuses a body with one).
   */
  #sameGemini(input: PlanInput, route: ConfiguredPath): UpstreamPlan | PlanError {
    const clientBody = this.#requireBody(input);
    if (clientBody instanceof PlanError) return clientBody;
    const routed = this.#geminiRoute(
      input,
      route,
      clientBody,
      input.stream ? 'streamGenerateContent' : 'generateContent',
    );
    if (routed instanceof PlanError) return routed;
    const plan = this.#plan(input, routed, 'gemini', withoutPathFields(clientBody), FORWARDED_RESPONSE, undefined);
    plan.upstreamModel = this.model ?? plan.requestModel;
    return plan;
  }

  /** The Gemini method's path for the request's model (a Gemini provider only). */
  #geminiRoute(
    input: PlanInput,
    route: ConfiguredPath,
    body: JsonObject,
    method: GeminiMethod,
  ): ConfiguredPath | PlanError {
    const modelRoute = this.#definition.modelRoute;
    if (modelRoute === undefined) return route;
    const routed = modelRoute(route, this.model ?? requestModel(body), method);
    return typeof routed === 'string' ? new PlanError(400, input.clientFormat, routed) : routed;
  }

  /**
   * Gemini countTokens: as it is to a Gemini provider; to an Anthropic one (gamma) as a
   * count_tokens request of the same conversation, answered back as Gemini's {totalTokens}.
   * Nothing else counts tokens without generating.
   */
  #geminiCountTokens(input: PlanInput): UpstreamPlan | PlanError {
    const body = this.#requireBody(input);
    if (body instanceof PlanError) return body;
    const gemini = this.#definition.routes.get('gemini');
    if (gemini !== undefined) {
      const routed = this.#geminiRoute(input, gemini, body, 'countTokens');
      if (routed instanceof PlanError) return routed;
      const plan = this.#plan(
        input,
        routed,
        'gemini_count_tokens',
        withoutPathFields(body),
        FORWARDED_RESPONSE,
        undefined,
      );
      plan.upstreamModel = this.model ?? plan.requestModel;
      return plan;
    }
    const anthropic = this.#definition.routes.get('count_tokens');
    if (anthropic === undefined) {
      return new PlanError(
        400,
        'gemini_count_tokens',
        `Gemini countTokens is not supported by ${this.#label}: gw counts tokens with a Gemini provider (delta, epsilon) as it is, and with an Anthropic one (gamma) by translation.`,
      );
    }
    let translation: RequestTranslation;
    try {
      translation = translateGeminiCountTokens(body);
    } catch (error) {
      if (error instanceof TranslationError) return new PlanError(400, input.clientFormat, error.message);
      throw error;
    }
    const response: ResponseHandling = { kind: 'token-count' };
    return this.#plan(
      input,
      anthropic,
      'count_tokens',
      this.#withModel(translation.body, true),
      response,
      translation.warnings,
    );
  }

  #translated(input: PlanInput, providerFormat: ProviderChatFormat, route: ConfiguredPath): UpstreamPlan | PlanError {
    const clientFormat = input.clientFormat as ClientChatFormat;
    const clientBody = this.#requireBody(input);
    if (clientBody instanceof PlanError) return clientBody;
    const modelRoute = this.#definition.modelRoute;
    let upstreamRoute = route;
    if (modelRoute !== undefined) {
      const method = input.stream ? 'streamGenerateContent' : 'generateContent';
      const routed = modelRoute(route, this.model ?? requestModel(clientBody), method);
      if (typeof routed === 'string') return new PlanError(400, clientFormat, routed);
      upstreamRoute = routed;
    }
    let translation: RequestTranslation;
    try {
      // A Chat Completions request written from the form also asks a stream for its usage chunk.
      translation = translateRequest(clientFormat, providerFormat, clientBody);
    } catch (error) {
      if (error instanceof TranslationError) return new PlanError(400, clientFormat, error.message);
      throw error;
    }
    // A provider whose URL names the model gets no model in its body.
    const body = modelRoute === undefined ? this.#withModel(translation.body, true) : translation.body;
    const response: ResponseHandling = {
      kind: 'translate',
      from: providerFormat,
      to: clientFormat,
      includeUsage: clientFormat === 'completions' && streamIncludesUsage(clientBody),
    };
    const plan = this.#plan(input, upstreamRoute, providerFormat, body, response, translation.warnings);
    if (modelRoute !== undefined) plan.upstreamModel = this.model ?? plan.requestModel;
    return plan;
  }

  /**
   * A chat request translated to Converse: the model (the override, else the client's) goes in
   * the path, the configured fields (guardrailConfig) into the body.
   */
  #converse(input: PlanInput, target: ConverseTarget): UpstreamPlan | PlanError {
    const clientFormat = input.clientFormat as ClientChatFormat;
    const clientBody = this.#requireBody(input);
    if (clientBody instanceof PlanError) return clientBody;
    const model = this.model ?? requestModel(clientBody);
    if (model === undefined || model === '') {
      return new PlanError(400, clientFormat, `The request must name a model: ${this.#label} has no model override.`);
    }
    let translation: RequestTranslation;
    try {
      translation = translateRequest(clientFormat, 'converse', clientBody, { model });
    } catch (error) {
      if (error instanceof TranslationError) return new PlanError(400, clientFormat, error.message);
      throw error;
    }
    const body = target.fields === undefined ? translation.body : { ...translation.body, ...target.fields };
    const response: ResponseHandling = {
      kind: 'translate',
      from: 'converse',
      to: clientFormat,
      includeUsage: clientFormat === 'completions' && streamIncludesUsage(clientBody),
    };
    const plan = this.#plan(input, target.path(model, input.stream), 'converse', body, response, translation.warnings);
    plan.upstreamModel = model;
    return plan;
  }

  /**
   * A Realtime session's opening request (a WebSocket upgrade, GET): the model is in the query
   * (`?model=`), where the model override replaces the client's; a provider that names the model
   * elsewhere (Azure's `deployment`) has its route's query say so, and wins over the client's.
   */
  #realtime(input: PlanInput, route: ConfiguredPath): UpstreamPlan {
    const clientModel = input.realtimeModel;
    const routeNamesModel = route.query.some(([name]) => name === 'model' || name === 'deployment');
    const model = this.model ?? clientModel;
    const query: (readonly [string, string])[] = [...route.query];
    if (this.model !== undefined && !routeNamesModel) query.push(['model', this.model]);
    const plan: UpstreamPlan = {
      origin: this.origin,
      path: route.path,
      query,
      method: 'GET',
      headers: {},
      body: undefined,
      providerFormat: 'realtime',
      response: FORWARDED_RESPONSE,
      requestModel: clientModel,
      upstreamModel: model,
    };
    if (this.service) plan.service = this.service;
    return plan;
  }

  /** A request served by an exchange of the family's own: its planner says where and what; the answer is converted. */
  #exchange(input: PlanInput, exchange: ExchangePlanner): UpstreamPlan | PlanError {
    const clientBody = this.#requireBody(input);
    if (clientBody instanceof PlanError) return clientBody;
    let planned: PlannedExchange | string;
    try {
      planned = exchange(clientBody, this.model ?? requestModel(clientBody), this.#definition.routes);
    } catch (error) {
      if (error instanceof TranslationError) return new PlanError(400, input.clientFormat, error.message);
      throw error;
    }
    if (typeof planned === 'string') return new PlanError(400, input.clientFormat, planned);
    const { translation } = planned;
    const response: ResponseHandling = {
      kind: 'convert',
      errorsFrom: translation.errorsFrom,
      readAnswer: translation.readAnswer,
    };
    const plan = this.#plan(
      input,
      planned.route,
      planned.providerFormat,
      translation.body,
      response,
      translation.warnings,
    );
    plan.upstreamModel = planned.model;
    if (planned.origin !== undefined) plan.origin = planned.origin;
    return plan;
  }

  #forwarded(input: PlanInput): UpstreamPlan | PlanError {
    if (input.path === undefined) {
      return new PlanError(500, input.clientFormat, 'gw cannot forward this request: its path is unknown.');
    }
    const route = this.#definition.forwardedPath(input.path);
    const detect = input.routeType === 'Detect';
    // A Detect request's JSON body may have been changed by the body policies, and its answer is
    // read for usage: the same two headers as every LLM format. Other bodies keep the client's type.
    const headers: Record<string, string> = !detect
      ? {}
      : input.body === undefined
        ? { 'accept-encoding': 'identity' }
        : { ...JSON_HEADERS };
    if (this.#definition.forwardedAnthropicVersion) {
      headers['anthropic-version'] = anthropicVersion(input, true);
    }
    const model = requestModel(input.body);
    const plan: UpstreamPlan = {
      origin: this.origin,
      path: route.path,
      query: route.query,
      method: input.method ?? 'POST',
      headers,
      body: input.body,
      providerFormat: input.clientFormat,
      response: detect ? DETECT_RESPONSE : PASSTHROUGH_RESPONSE,
      requestModel: model,
      upstreamModel: model,
    };
    if (this.service) plan.service = this.service;
    return plan;
  }
}

/** What sets a hosted API family (alpha, gamma, delta) apart: its host, key placement and formats below its base path. */
export interface HostedFamily {
  family: ProviderFamily;
  defaultHost: string;
  keyStyle: ProviderKeyStyle;
  /** The version prefix of its paths, which a pathPrefix replaces; "/v1" when not given. */
  basePath?: string;
  /** Each served format's path below the base (basePath, or the provider's pathPrefix). */
  paths: readonly (readonly [UpstreamFormat, string])[];
  forwardedAnthropicVersion: boolean;
  modelRoute?: ProviderDefinition['modelRoute'];
  exchanges?: ProviderDefinition['exchanges'];
  routeOrigins?: ProviderDefinition['routeOrigins'];
}

const HOSTED_BASE_PATH = '/v1';

/** A hosted family's provider with the address overrides and model override applied. */
export function compileHosted(
  hosted: HostedFamily,
  address: FamilyAddress,
  name: string | undefined,
  model: string | undefined,
): ProviderPlanner {
  const hostedBase = hosted.basePath ?? HOSTED_BASE_PATH;
  const base = address.pathPrefix ?? hostedBase;
  const routes = new Map<UpstreamFormat, ConfiguredPath>(
    hosted.paths.map(([format, suffix]) => [format, address.path ?? plainPath(`${base}${suffix}`)]),
  );
  const definition: ProviderDefinition = {
    name,
    family: hosted.family,
    origin: address.origin(hosted.defaultHost),
    service: undefined,
    keyStyle: hosted.keyStyle,
    model,
    routes,
    forwardedPath: (clientPath) =>
      address.path ?? plainPath(prefixedClientPath(clientPath, address.pathPrefix, hostedBase)),
    forwardedAnthropicVersion: hosted.forwardedAnthropicVersion,
  };
  if (hosted.modelRoute !== undefined) definition.modelRoute = hosted.modelRoute;
  if (hosted.exchanges !== undefined) definition.exchanges = hosted.exchanges;
  if (hosted.routeOrigins !== undefined) definition.routeOrigins = hosted.routeOrigins;
  return new ProviderPlanner(definition);
}
