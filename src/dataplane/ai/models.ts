// GwModels on the request path (spec document 1, "GwModel"): the models attached to a listener or
// to a route rule, matched by the body's `model` (exact name, `prefix-*`, `*-suffix`, `*`, or the
// GwModel's own name), concrete models sent to their provider, virtual models routed to their
// targets (weighted, failover, conditional), and the model discovery endpoint listing the Public
// ones. docs/dataplane.md describes the rules.

import type { GwModelSpec } from '../../api/kinds/gw-model.ts';
import type { RouteType } from '../../api/types/ai.ts';
import type { BackendFull } from '../../api/types/backend-policies.ts';
import type { ModelPolicies } from '../../api/types/model.ts';
import { MODEL_PROVIDERS } from '../../api/vendors.ts';
import type { FieldNamespaces } from '../../contract/dataplane-config.ts';
import { refusalsIn } from '../../contract/enforcement/walk.ts';
import { systemClock } from '../../util/clock.ts';
import type { Backend, BackendCompileContext, BackendKind, ModelsInput, RoutedRequest } from '../backends/backend.ts';
import { EndpointHealth } from '../balancing/endpoint-health.ts';
import { type BackendHealthReport, healthView, type ModelHealthView } from '../balancing/health-report.ts';
import { createVirtualModelRouter, type VirtualModelRouter, type VirtualTarget } from '../balancing/virtual-models.ts';
import { compileExpression, ExpressionError, toCelValue } from '../cel/expression.ts';
import { type AuthorizationRule, compileAuthorizationRule } from '../policies/auth/authorization.ts';
import { isProblem } from '../policies/types.ts';
import { sendJson } from '../proxy/direct-response.ts';
import { type CelVariables, celContext } from '../telemetry/cel-context.ts';
import { compileEndpoint, type ProviderEndpoint } from './endpoint.ts';
import { answersByRouteType, sendClientError, sendGatewayError } from './llm-answers.ts';
import { type Candidate, type LlmRequest, readLlmRequest, runAttempts } from './llm-request.ts';
import { modelProvider } from './model-provider.ts';

/** Route types of a GwModel route, by the standard API path suffixes (GwModels have no `routes`). */
const MODEL_ROUTES: [string, RouteType][] = [
  ['/messages/count_tokens', 'GammaTokenCount'],
  ['/chat/completions', 'Completions'],
  ['/messages', 'Messages'],
  ['/responses', 'Responses'],
  ['/embeddings', 'Embeddings'],
  ['/rerank', 'Rerank'],
  ['/models', 'Models'],
  [':generateContent', 'GenerateContent'],
  [':streamGenerateContent', 'GenerateContent'],
  [':countTokens', 'DeltaCountTokens'],
];

/** Where a GwModel route's route type comes from, for the refusals that name it. */
const MODEL_ROUTES_SOURCE = 'the API paths of GwModel routes (docs/dataplane.md)';

function modelRouteType(path: string): RouteType | undefined {
  for (const [suffix, routeType] of MODEL_ROUTES) if (path.endsWith(suffix)) return routeType;
  return undefined;
}

interface ModelTarget {
  model: CompiledModel;
  /** The model name sent upstream (a target's `model`, needed for wildcard models). */
  upstreamModel: string | undefined;
}

/** What every compiled model has: its spec, how it is matched, and its authorization rule. */
interface ModelBase {
  key: string;
  spec: GwModelSpec;
  pattern: string;
  public: boolean;
  /** policies.authorization: whether a request may use this model (403 otherwise). */
  authorization: AuthorizationRule | undefined;
}

export type CompiledModel =
  | (ModelBase & { kind: 'concrete'; endpoint: ProviderEndpoint; health: EndpointHealth })
  | (ModelBase & {
      kind: 'virtual';
      router: VirtualModelRouter<ModelTarget, Record<string, unknown>>;
      targetCount: number;
      routing: 'weighted' | 'failover' | 'conditional';
      /** The targets as configured, with the health they share with every route to their model. */
      targets: readonly {
        model: string;
        upstreamModel?: string;
        weight?: number;
        priority?: number;
        health: EndpointHealth;
      }[];
    })
  | (ModelBase & { kind: 'error'; message: string });

/** A configuration's models compiled under one effective backend policy (the GwPolicies on the way). */
type ModelCatalog = ReadonlyMap<string, CompiledModel>;

/**
 * The catalog for `policy` in this configuration: the models are compiled once per distinct
 * backend policy that reaches them (usually one, the empty policy), and their problems reported once.
 */
const catalogs = new WeakMap<BackendCompileContext, Map<string, ModelCatalog>>();

function catalogFor(
  context: BackendCompileContext,
  policy: BackendFull,
  namespaces: FieldNamespaces | undefined,
): ModelCatalog {
  let byPolicy = catalogs.get(context);
  if (!byPolicy) {
    byPolicy = new Map();
    catalogs.set(context, byPolicy);
  }
  const key = JSON.stringify([policy, namespaces]);
  let catalog = byPolicy.get(key);
  if (!catalog) {
    catalog = compileModels(context, policy, namespaces);
    byPolicy.set(key, catalog);
    for (const model of catalog.values())
      if (model.kind === 'error') context.report(`GwModel ${model.key}: ${model.message}`);
  }
  return catalog;
}

/** Compiles every GwModel of a configuration; virtual models after the concrete ones they name. */
function compileModels(
  context: BackendCompileContext,
  policy: BackendFull,
  namespaces: FieldNamespaces | undefined,
): Map<string, CompiledModel> {
  const models = context.models;
  const compiled = new Map<string, CompiledModel>();
  const keys = Object.keys(models).sort();
  for (const key of keys)
    if (!models[key]!.virtualModel) compiled.set(key, compileConcrete(key, models[key]!, context, policy, namespaces));
  for (const key of keys) if (models[key]!.virtualModel) compiled.set(key, compileVirtual(key, models[key]!, compiled));
  return compiled;
}

/** The model's base, or why it cannot be served (a field the registry refuses, an authorization that does not compile). */
function base(key: string, spec: GwModelSpec): ModelBase | string {
  const name = key.slice(key.indexOf('/') + 1);
  const refused = [
    ...refusalsIn('model-spec', spec).map((refusal) => `spec.${refusal.path}: ${refusal.reason}`),
    ...refusalsIn('model-policies', spec.policies ?? {}).map(
      (refusal) => `spec.policies.${refusal.path}: ${refusal.reason}`,
    ),
  ];
  if (refused.length > 0) return refused.join('; ');
  let authorization: AuthorizationRule | undefined;
  if (spec.policies?.authorization) {
    const rule = compileAuthorizationRule(spec.policies.authorization, 'policies.authorization');
    if (isProblem(rule)) return `${rule.field}: ${rule.message}`;
    authorization = rule;
  }
  return {
    key,
    spec,
    pattern: spec.match?.model ?? name,
    public: (spec.visibility ?? 'Public') === 'Public',
    authorization,
  };
}

/** A model that cannot be served: matched like the others, answered 500 with why. */
function failed(key: string, spec: GwModelSpec, message: string): CompiledModel {
  const name = key.slice(key.indexOf('/') + 1);
  const pattern = spec.match?.model ?? name;
  return {
    kind: 'error',
    key,
    spec,
    pattern,
    public: (spec.visibility ?? 'Public') === 'Public',
    authorization: undefined,
    message,
  };
}

/**
 * The effective backend policy of a concrete model's provider: the GwPolicies' backend section on
 * the way to it, with the model's own policies winning field by field (as a GwBackend's own
 * policies win over GwPolicies); a baseURL with https originates TLS.
 */
function endpointPolicy(backend: BackendFull, policies: ModelPolicies, https: boolean): BackendFull {
  const policy: BackendFull = { ...backend };
  if (policies.auth !== undefined) policy.auth = policies.auth;
  if (policies.health !== undefined) policy.health = policies.health;
  if (policies.tls !== undefined) policy.tls = policies.tls;
  if (policies.tunnel !== undefined) policy.tunnel = policies.tunnel;
  if (policy.tls === undefined && https) policy.tls = {};
  return policy;
}

function compileConcrete(
  key: string,
  spec: GwModelSpec,
  context: BackendCompileContext,
  backend: BackendFull,
  backendNamespaces: FieldNamespaces | undefined,
): CompiledModel {
  const namespace = key.slice(0, key.indexOf('/'));
  const modelBase = base(key, spec);
  if (typeof modelBase === 'string') return failed(key, spec, modelBase);
  const address = modelProvider(spec);
  if (typeof address === 'string') return failed(key, spec, address);
  const { provider, https } = address;
  const policies = spec.policies ?? {};
  const policy = endpointPolicy(backend, policies, https);
  const name = key.slice(key.indexOf('/') + 1);
  // The GwPolicies' fields resolve in their own namespaces; the model's own policies in its.
  const inherited = Object.entries(backendNamespaces ?? {}).filter(([field]) => !Object.hasOwn(policies, field));
  const namespaces = inherited.length > 0 ? Object.fromEntries(inherited) : undefined;
  const endpoint = compileEndpoint({ ...provider, name }, policy, { namespace, namespaces, context }, policies);
  if ('message' in endpoint) return failed(key, spec, `${endpoint.field}: ${endpoint.message}`);
  // The GwModel provider names the vendor better than its wire family does (Provider13, Groq, is a custom provider).
  endpoint.genAiProviderName = MODEL_PROVIDERS[spec.provider!].genAiProviderName;
  const health = new EndpointHealth(policy.health ?? {}, { now: systemClock.monotonicMs });
  return { kind: 'concrete', ...modelBase, endpoint, health };
}

interface TargetSpec {
  modelRef: { name: string };
  model?: string;
  weight?: number;
  priority?: number;
  when?: string;
}

function compileVirtual(key: string, spec: GwModelSpec, compiled: Map<string, CompiledModel>): CompiledModel {
  const namespace = key.slice(0, key.indexOf('/'));
  const modelBase = base(key, spec);
  if (typeof modelBase === 'string') return failed(key, spec, modelBase);
  const virtual = spec.virtualModel!;
  const kind = virtual.weighted ? 'weighted' : virtual.failover ? 'failover' : 'conditional';
  const specs = ((virtual.weighted ?? virtual.failover ?? virtual.conditional)?.targets ?? []) as TargetSpec[];
  const targets: (VirtualTarget<ModelTarget> & {
    weight?: number;
    priority: number;
    when?: (r: Record<string, unknown>) => boolean;
  })[] = [];
  for (const [index, target] of specs.entries()) {
    const model = compiled.get(`${namespace}/${target.modelRef.name}`);
    if (model?.kind !== 'concrete')
      return failed(
        key,
        spec,
        `virtualModel.${kind}.targets[${index}]: GwModel ${namespace}/${target.modelRef.name} is not a programmed concrete model`,
      );
    let when: ((r: Record<string, unknown>) => boolean) | undefined;
    if (target.when) {
      const expression = compileExpression(target.when);
      if (expression instanceof ExpressionError)
        return failed(key, spec, `virtualModel.conditional.targets[${index}].when: ${expression.message}`);
      when = (variables) => expression.evaluate(variables) === true;
    }
    targets.push({
      target: { model, upstreamModel: target.model },
      health: model.health,
      weight: target.weight,
      priority: target.priority ?? 0,
      when,
    });
  }
  const routing =
    kind === 'weighted'
      ? { weighted: { targets } }
      : kind === 'failover'
        ? { failover: { targets } }
        : { conditional: { targets } };
  const router = createVirtualModelRouter<ModelTarget, Record<string, unknown>>(routing, {
    random: Math.random,
    now: systemClock.monotonicMs,
  });
  const described = targets.map((t) => ({
    model: t.target.model.key,
    ...(t.target.upstreamModel !== undefined && { upstreamModel: t.target.upstreamModel }),
    ...(kind === 'weighted' && { weight: t.weight ?? 1 }),
    ...(kind === 'failover' && { priority: t.priority }),
    health: t.health,
  }));
  return { kind: 'virtual', ...modelBase, router, targetCount: targets.length, routing: kind, targets: described };
}

/** The model a request's `model` selects among `keys`: exact, then longest wildcard, then `*`. Public only. */
function matchModel(models: ModelCatalog, keys: readonly string[], requested: string): CompiledModel | undefined {
  let best: CompiledModel | undefined;
  let bestRank = -1;
  for (const key of keys) {
    const model = models.get(key);
    if (!model?.public) continue;
    const rank = matchRank(model.pattern, requested);
    if (rank > bestRank) {
      best = model;
      bestRank = rank;
    }
  }
  return best;
}

/** How well a pattern matches: exact beats any wildcard, a longer wildcard beats a shorter, `*` last; -1 no match. */
function matchRank(pattern: string, model: string): number {
  if (pattern === '*') return 0;
  if (pattern.endsWith('*')) {
    const prefix = pattern.slice(0, -1);
    return model.startsWith(prefix) ? 1 + prefix.length : -1;
  }
  if (pattern.startsWith('*')) {
    const suffix = pattern.slice(1);
    return model.endsWith(suffix) ? 1 + suffix.length : -1;
  }
  return pattern === model ? 1_000_000 : -1;
}

/** gw's own answers on a GwModel route: in the format of the path's API (OpenAI's for any other path). */
export const MODEL_ANSWERS = answersByRouteType((path) => modelRouteType(path) ?? 'Completions');

/** The models kind: the GwModels a rule (GwModel "*") or a listener serves. */
export const modelsKind: BackendKind<ModelsInput> = {
  compile({ models, context }: ModelsInput): Backend {
    return new ModelsBackend(catalogFor(context, models.policy, models.policyNamespaces), models.keys);
  },
};

const FORBIDDEN_MODEL = 'The request is not allowed to use this model by its authorization policy.';

class ModelsBackend implements Backend {
  readonly type = 'ai';
  readonly #models: ModelCatalog;
  readonly #keys: readonly string[];

  constructor(models: ModelCatalog, keys: readonly string[]) {
    this.#models = models;
    this.#keys = keys;
  }

  readonly answersFor = MODEL_ANSWERS;

  health(): BackendHealthReport {
    const now = systemClock.monotonicMs();
    const models = this.#keys.map((key) => this.#models.get(key)).filter((m) => m !== undefined);
    return {
      discovery: discoveryList(this.#models, this.#keys).map((entry) => entry.id),
      models: models.map((model): ModelHealthView => {
        const view = { key: model.key, kind: model.kind, pattern: model.pattern, public: model.public };
        if (model.kind === 'concrete') return { ...view, health: healthView(model.health, now) };
        if (model.kind === 'error') return { ...view, message: model.message };
        return {
          ...view,
          routing: model.routing,
          targets: model.targets.map(({ health, ...target }) => ({ ...target, health: healthView(health, now) })),
        };
      }),
    };
  }

  async serve(routed: RoutedRequest): Promise<void> {
    const routeType = modelRouteType(routed.forward.path);
    if (routeType === undefined)
      return sendClientError(routed.res, 'completions', 404, 'This path is not an LLM API path gw serves for models.');
    if (routeType === 'Models') return listModels(routed, this.#models, this.#keys);
    const request = await readLlmRequest(routed, routeType, routed.route.maxBufferBytes, MODEL_ROUTES_SOURCE);
    if (!request) return;
    const requested = request.llm.requestModel;
    if (!requested) return sendClientError(routed.res, request.format, 400, 'The request names no model.');
    const model = matchModel(this.#models, this.#keys, requested);
    if (!model)
      return sendClientError(
        routed.res,
        request.format,
        404,
        `The model ${requested} does not exist here: no GwModel serves it.`,
        undefined,
        'model_not_found',
      );
    routed.record.backend = `GwModel ${model.key}`;
    if (model.kind === 'error')
      return sendGatewayError(
        routed.res,
        routed.record,
        request.format,
        500,
        `The model ${requested} cannot be served: ${model.message}`,
      );
    const variables = modelVariables(routed, request);
    if (model.authorization && !model.authorization.allows(variables))
      return sendClientError(routed.res, request.format, 403, FORBIDDEN_MODEL);
    if (model.kind === 'concrete') {
      return runAttempts(
        routed,
        request,
        1,
        once(() => ({ endpoint: model.endpoint, report: (outcome) => model.health.record(outcome) })),
      );
    }
    let route: ReturnType<typeof model.router.route>;
    try {
      route = model.router.route(variables);
    } catch {
      return sendGatewayError(
        routed.res,
        routed.record,
        request.format,
        500,
        `The model ${requested} could not choose a target.`,
      );
    }
    if (route.kind === 'noTarget')
      return sendClientError(
        routed.res,
        request.format,
        400,
        `The model ${requested} has no target for this request: ${route.reason}`,
      );
    const attempts = route.attempts;
    return runAttempts(routed, request, model.targetCount, () => {
      const target = attempts.next();
      if (!target) return undefined;
      const { model: targetModel, upstreamModel } = target.target;
      if (targetModel.kind !== 'concrete') return undefined;
      const candidate: Candidate = {
        endpoint: targetModel.endpoint,
        backend: `GwModel ${targetModel.key}`,
        report: (outcome) => model.router.report(target, outcome),
      };
      // A target's own authorization applies too: a request the target refuses is not sent there.
      if (targetModel.authorization && !targetModel.authorization.allows(variables))
        candidate.rejection = { status: 403, message: FORBIDDEN_MODEL };
      if (upstreamModel !== undefined) candidate.model = upstreamModel;
      return candidate;
    });
  }
}

/**
 * The CEL variables a model's authorization and a virtual model's conditions see: the request's
 * (with what traffic policies set, such as JWT claims and API key metadata) and `llmRequest`, the body.
 */
function modelVariables(routed: RoutedRequest, request: LlmRequest): CelVariables {
  const llmRequest = toCelValue(request.body);
  if (!routed.exchange) return celContext(routed.record, { llmRequest });
  routed.exchange.setVariable('llmRequest', llmRequest);
  return routed.exchange.cel();
}

function once<T>(make: () => T): () => T | undefined {
  let used = false;
  return () => {
    if (used) return undefined;
    used = true;
    return make();
  };
}

/** What the model discovery endpoint lists: the Public models here, in the OpenAI list shape. */
function discoveryList(models: ModelCatalog, keys: readonly string[]) {
  return keys
    .map((key) => models.get(key))
    .filter((model): model is CompiledModel => model?.public === true)
    .map((model) => ({
      id: model.pattern,
      object: 'model',
      created: 0,
      owned_by: model.key.slice(0, model.key.indexOf('/')),
    }));
}

/** The model discovery endpoint. */
function listModels(routed: RoutedRequest, models: ModelCatalog, keys: readonly string[]): void {
  sendJson(routed.res, 200, JSON.stringify({ object: 'list', data: discoveryList(models, keys) }));
}
