// GwModels on the request path (spec document 1, "GwModel"): the models attached to a listener or
// to a route rule, matched by the body's `model` (exact name, `prefix-*`, `*-suffix`, `*`, or the
// GwModel's own name), concrete models sent to their provider, virtual models routed to their
// targets (weighted, failover, conditional), and the model discovery endpoint listing the Public
// ones. docs/dataplane.md describes the rules.

import type { GwModelSpec } from '../../api/kinds/gw-model.ts';
import type { RouteType } from '../../api/types/ai.ts';
import type { LLMProvider } from '../../api/types/llm-provider.ts';
import { EndpointHealth } from '../balancing/endpoint-health.ts';
import { createVirtualModelRouter, type VirtualModelRouter, type VirtualTarget } from '../balancing/virtual-models.ts';
import { compileExpression, ExpressionError, toCelValue } from '../cel/expression.ts';
import type { CompileContext } from '../config/compile.ts';
import { sendJson } from '../proxy/direct-response.ts';
import type { RoutedRequest } from '../proxy/request-handler.ts';
import { celContext } from '../telemetry/cel-context.ts';
import type { UpstreamClient } from '../upstream/client.ts';
import type { ConnectionSettings, DataLookup } from '../upstream/connection-settings.ts';
import { compileEndpoint, type ProviderEndpoint } from './ai-backend.ts';
import { sendClientError } from './exchange.ts';
import { type Candidate, readLlmRequest, runAttempts } from './llm-request.ts';

/** The provider family field of LLMProvider for each ModelProvider value gw serves. */
const FAMILY: Partial<Record<string, 'alpha' | 'gamma' | 'custom'>> = {
  Alpha: 'alpha',
  Gamma: 'gamma',
  Custom: 'custom',
};

/** Route types of a GwModel route, by the standard API path suffixes (GwModels have no `routes`). */
const MODEL_ROUTES: [string, RouteType][] = [
  ['/messages/count_tokens', 'GammaTokenCount'],
  ['/chat/completions', 'Completions'],
  ['/messages', 'Messages'],
  ['/responses', 'Responses'],
  ['/embeddings', 'Embeddings'],
  ['/models', 'Models'],
];

function modelRouteType(path: string): RouteType | undefined {
  for (const [suffix, routeType] of MODEL_ROUTES) if (path.endsWith(suffix)) return routeType;
  return undefined;
}

interface ModelTarget {
  model: CompiledModel;
  /** The model name sent upstream (a target's `model`, needed for wildcard models). */
  upstreamModel: string | undefined;
}

export type CompiledModel =
  | {
      kind: 'concrete';
      key: string;
      spec: GwModelSpec;
      pattern: string;
      public: boolean;
      endpoint: ProviderEndpoint;
      health: EndpointHealth;
    }
  | {
      kind: 'virtual';
      key: string;
      spec: GwModelSpec;
      pattern: string;
      public: boolean;
      router: VirtualModelRouter<ModelTarget, Record<string, unknown>>;
      targetCount: number;
    }
  | { kind: 'error'; key: string; spec: GwModelSpec; pattern: string; public: boolean; message: string };

/** Compiles every GwModel of a configuration; virtual models after the concrete ones they name. */
export function compileModels(
  models: Record<string, GwModelSpec>,
  context: CompileContext,
  data: DataLookup,
  client: (settings: ConnectionSettings) => UpstreamClient,
): Map<string, CompiledModel> {
  const compiled = new Map<string, CompiledModel>();
  const keys = Object.keys(models).sort();
  for (const key of keys)
    if (!models[key]!.virtualModel) compiled.set(key, compileConcrete(key, models[key]!, context, data, client));
  for (const key of keys) if (models[key]!.virtualModel) compiled.set(key, compileVirtual(key, models[key]!, compiled));
  return compiled;
}

function base(key: string, spec: GwModelSpec) {
  const name = key.slice(key.indexOf('/') + 1);
  return { key, spec, pattern: spec.match?.model ?? name, public: (spec.visibility ?? 'Public') === 'Public' };
}

function compileConcrete(
  key: string,
  spec: GwModelSpec,
  context: CompileContext,
  data: DataLookup,
  client: (settings: ConnectionSettings) => UpstreamClient,
): CompiledModel {
  const namespace = key.slice(0, key.indexOf('/'));
  const family = spec.provider ? FAMILY[spec.provider] : undefined;
  if (!family)
    return {
      kind: 'error',
      ...base(key, spec),
      message: `provider ${spec.provider} is not served by this data plane yet`,
    };
  const provider: Record<string, unknown> = { [family]: family === 'custom' ? (spec.custom ?? {}) : {} };
  let tls = false;
  if (spec.baseURL) {
    const url = new URL(spec.baseURL);
    tls = url.protocol === 'https:';
    provider.host = url.hostname.replace(/^\[|\]$/g, '');
    provider.port = url.port ? Number(url.port) : tls ? 443 : 80;
    if (url.pathname !== '/' && family !== 'custom') provider.pathPrefix = url.pathname.replace(/\/$/, '');
  }
  const policies = spec.policies ?? {};
  const policy: Record<string, unknown> = {
    auth: policies.auth,
    health: policies.health,
    tls: policies.tls ?? (tls ? {} : undefined),
  };
  const name = key.slice(key.indexOf('/') + 1);
  const endpoint = compileEndpoint(
    { ...(provider as unknown as LLMProvider), name },
    policy,
    { namespace, data, context, client },
    policies,
  );
  if ('message' in endpoint)
    return { kind: 'error', ...base(key, spec), message: `${endpoint.field}: ${endpoint.message}` };
  const health = new EndpointHealth(policies.health ?? {}, { now: () => performance.now() });
  return { kind: 'concrete', ...base(key, spec), endpoint, health };
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
      return {
        kind: 'error',
        ...base(key, spec),
        message: `virtualModel.${kind}.targets[${index}]: GwModel ${namespace}/${target.modelRef.name} is not a programmed concrete model`,
      };
    let when: ((r: Record<string, unknown>) => boolean) | undefined;
    if (target.when) {
      const expression = compileExpression(target.when);
      if (expression instanceof ExpressionError)
        return {
          kind: 'error',
          ...base(key, spec),
          message: `virtualModel.conditional.targets[${index}].when: ${expression.message}`,
        };
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
    now: () => performance.now(),
  });
  return { kind: 'virtual', ...base(key, spec), router, targetCount: targets.length };
}

/** The model a request's `model` selects among `keys`: exact, then longest wildcard, then `*`. Public only. */
function matchModel(
  models: ReadonlyMap<string, CompiledModel>,
  keys: readonly string[],
  requested: string,
): CompiledModel | undefined {
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

/** Serves a request on a rule or listener that offers GwModels. */
export async function serveModels(
  routed: RoutedRequest,
  models: ReadonlyMap<string, CompiledModel>,
  keys: readonly string[],
): Promise<void> {
  const routeType = modelRouteType(routed.forward.path);
  if (routeType === undefined)
    return sendClientError(routed.res, 'completions', 404, 'This path is not an LLM API path gw serves for models.');
  if (routeType === 'Models') return listModels(routed, models, keys);
  const request = await readLlmRequest(routed, routeType, routed.listener.maxBufferBytes);
  if (!request) return;
  const requested = request.llm.requestModel;
  if (!requested) return sendClientError(routed.res, request.format, 400, 'The request names no model.');
  const model = matchModel(models, keys, requested);
  if (!model) return sendClientError(routed.res, request.format, 400, `The model ${requested} is not offered here.`);
  if (model.kind === 'error')
    return sendClientError(
      routed.res,
      request.format,
      500,
      `The model ${requested} cannot be served: ${model.message}`,
    );
  if (model.kind === 'concrete') {
    return runAttempts(
      routed,
      request,
      1,
      once(() => ({
        endpoint: model.endpoint,
        report: (outcome) => model.health.record(outcome),
      })),
    );
  }
  const variables = celContext(routed.record, { llmRequest: toCelValue(request.body) });
  let route: ReturnType<typeof model.router.route>;
  try {
    route = model.router.route(variables);
  } catch {
    return sendClientError(routed.res, request.format, 500, `The model ${requested} could not choose a target.`);
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
      report: (outcome) => model.router.report(target, outcome),
    };
    if (upstreamModel !== undefined) candidate.model = upstreamModel;
    return candidate;
  });
}

function once<T>(make: () => T): () => T | undefined {
  let used = false;
  return () => {
    if (used) return undefined;
    used = true;
    return make();
  };
}

/** The model discovery endpoint: the Public models here, in the OpenAI list shape. */
function listModels(routed: RoutedRequest, models: ReadonlyMap<string, CompiledModel>, keys: readonly string[]): void {
  const data = keys
    .map((key) => models.get(key))
    .filter((model): model is CompiledModel => model?.public === true)
    .map((model) => ({
      id: model.pattern,
      object: 'model',
      created: 0,
      owned_by: model.key.slice(0, model.key.indexOf('/')),
    }));
  sendJson(routed.res, 200, JSON.stringify({ object: 'list', data }));
}
