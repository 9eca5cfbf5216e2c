// The configuration the controller hands to the data plane, one per gw Gateway: plain,
// versioned JSON (it will travel to proxy replicas) with everything resolved — listeners with
// their effective frontend policy, routes and rules with their effective traffic policy,
// backend references with their effective backend policy, the backends' specs, the programmed
// models, and the data of every Secret and ConfigMap the configuration names. The data plane
// never looks anything up on the hot path.
import type { LabelSelector } from '../api/kinds/gateway-api/shared.ts';
import type { GwModelSpec } from '../api/kinds/gw-model.ts';
import type { APIKeyAuthentication } from '../api/types/inbound-auth.ts';
import type { KubeObject } from '../api/validate/admission.ts';
import { selectorMatches } from './gateway-api/selectors.ts';
import type { GatewayApiResult, RouteBackendRef, RouteMatch } from './gateway-api/types.ts';
import type { ModelAttachment } from './models/status.ts';
import { type AttachmentPoint, effectivePolicy, type PolicyIndex } from './policies/attachments.ts';
import { type EffectiveSection, valuesOf } from './policies/merge.ts';
import { findReferences } from './references.ts';
import type { Snapshot } from './snapshot.ts';

export const DATAPLANE_CONFIG_VERSION = 'gw.dev/dataplane/v1alpha1';

type Values = Record<string, unknown>;

export interface BackendRefConfig {
  /** Key into `backends`: "GwBackend ns/name" or "Service ns/name". */
  backend: string;
  port?: number;
  weight: number;
  filters?: unknown[];
  /** Why the reference cannot be used (its share of requests is answered with 500). */
  problem?: string;
  /** The effective backend policy on this path (rule to backend). */
  policy: Values;
  /**
   * For a GwBackend with AI provider groups or MCP targets: the effective backend policy on this
   * path for each provider or target, by name (GwPolicies on that section and its inline policies
   * included).
   */
  sections?: Record<string, Values>;
  /**
   * For a GwBackend with MCP selector targets: the Services each selector target chose, by target
   * name (sorted by key; their specs are in `backends`), with what their annotations say.
   */
  mcpServices?: Record<string, McpSelectedService[]>;
}

/** A Service an MCP selector target chose (docs/mcp.md "Selector targets"). */
export interface McpSelectedService {
  /** "Service ns/name": a key into `backends`. */
  service: string;
  /** The gw.dev/mcp-path annotation: the MCP path on the Service's ports. */
  path?: string;
  /** The gw.dev/mcp-target-name annotation: the target name its tools are prefixed with. */
  targetName?: string;
}

/** Service annotations of MCP selector targets. */
export const MCP_PATH_ANNOTATION = 'gw.dev/mcp-path';
export const MCP_TARGET_NAME_ANNOTATION = 'gw.dev/mcp-target-name';

/**
 * traffic.apiKeyAuthentication as the data plane receives it. With a secretSelector or
 * configMapSelector, `selected` lists the objects the selector chose ("Kind ns/name", by name;
 * their data is in `data`): the data plane has no labels to match.
 */
export type ApiKeyAuthenticationConfig = APIKeyAuthentication & { selected?: string[] };

export interface RuleConfig {
  name?: string;
  matches: RouteMatch[];
  filters?: unknown[];
  timeouts?: unknown;
  traffic: Values;
  /**
   * For each traffic field, the policy it came from and what that policy targets ("GwPolicy
   * ns/p on Gateway ns/gw"): state a policy keeps (rate-limit buckets) is shared by every rule
   * the same attachment reaches.
   */
  trafficSources?: Record<string, string>;
  backendRefs: BackendRefConfig[];
  /** For a rule whose backend is GwModel "*": the models attached to it (keys into `models`). */
  models?: string[];
}

export interface RouteConfig {
  route: string;
  hostnames: string[];
  rules: RuleConfig[];
}

export interface ListenerConfig {
  name: string;
  port: number;
  protocol: string;
  hostname?: string;
  tls?: { mode: string; certificates: string[] };
  frontend: Values;
  /** The effective PreRouting traffic policy: runs on every request before a route is chosen. */
  preRouting: Values;
  /** Where each PreRouting field came from (as RuleConfig.trafficSources). */
  preRoutingSources?: Record<string, string>;
  routes: RouteConfig[];
  /** Models attached to the listener directly (Gateway or ListenerSet parents). */
  models: string[];
}

export interface DataPlaneConfig {
  apiVersion: typeof DATAPLANE_CONFIG_VERSION;
  gateway: { namespace: string; name: string };
  /** The store revision the configuration was made from. */
  revision: string;
  listeners: ListenerConfig[];
  /**
   * GwBackend specs and Service specs, by "Kind ns/name": those routes send to, and those policy
   * endpoint references name (ExtAuth, ExtProc, rate limit services, JWKS, OTLP collectors).
   */
  backends: Record<string, { kind: string; spec: unknown }>;
  /** Programmed GwModels, by "ns/name". */
  models: Record<string, GwModelSpec>;
  /** Decoded data of the Secrets and ConfigMaps named anywhere above, by "Kind ns/name". */
  data: Record<string, Record<string, string>>;
}

/** A Secret's or ConfigMap's data as text: base64 fields decoded, stringData applied last. */
function objectData(object: KubeObject): Record<string, string> {
  const out: Record<string, string> = {};
  const decode = (fields: unknown) => {
    for (const [key, value] of Object.entries((fields ?? {}) as Record<string, string>)) {
      out[key] = Buffer.from(value, 'base64').toString('utf8');
    }
  };
  if (object.kind === 'Secret') {
    decode(object.data);
    Object.assign(out, object.stringData ?? {});
  } else {
    Object.assign(out, object.data ?? {});
    decode(object.binaryData);
  }
  return out;
}

/** Secrets and ConfigMaps chosen by label (API key secretSelector / configMapSelector) in `values`. */
function selectedObjects(
  values: unknown,
  namespace: string,
  snapshot: Snapshot,
  found: KubeObject[] = [],
): KubeObject[] {
  if (Array.isArray(values)) {
    for (const item of values) selectedObjects(item, namespace, snapshot, found);
  } else if (values !== null && typeof values === 'object') {
    for (const [field, child] of Object.entries(values)) {
      const matchLabels = (child as { matchLabels?: Record<string, string> } | undefined)?.matchLabels;
      if ((field === 'secretSelector' || field === 'configMapSelector') && matchLabels) {
        const pool = field === 'secretSelector' ? snapshot.secrets : snapshot.configMaps;
        for (const object of pool.values()) {
          if (
            object.metadata.namespace === namespace &&
            selectorMatches({ matchLabels }, object.metadata.labels ?? {})
          ) {
            found.push(object);
          }
        }
      } else {
        selectedObjects(child, namespace, snapshot, found);
      }
    }
  }
  return found;
}

/** `traffic` with its apiKeyAuthentication's label selector resolved into `selected` (a copy: merged values are shared). */
function withApiKeySelection(traffic: Values, namespace: string, snapshot: Snapshot): Values {
  const auth = traffic.apiKeyAuthentication as APIKeyAuthentication | undefined;
  if (!auth || (!auth.secretSelector && !auth.configMapSelector)) return traffic;
  const selected = selectedObjects(auth, namespace, snapshot)
    .map((object) => `${object.kind} ${namespace}/${object.metadata.name}`)
    .sort();
  const resolved: ApiKeyAuthenticationConfig = { ...auth, selected };
  return { ...traffic, apiKeyAuthentication: resolved };
}

/** The sub-backends a policy can target by sectionName: AI providers in groups, MCP targets. */
function subBackendNames(backend: KubeObject): string[] {
  const spec = backend.spec as {
    ai?: { groups?: { providers: { name: string }[] }[] };
    mcp?: { targets: { name: string }[] };
  };
  if (spec.mcp) return spec.mcp.targets.map((target) => target.name);
  return (spec.ai?.groups ?? []).flatMap((group) => group.providers.map((provider) => provider.name));
}

/** Labels of a namespace as selectors see them (the API server's kubernetes.io/metadata.name included). */
function labelsOfNamespace(snapshot: Snapshot, namespace: string): Record<string, string> {
  return { ...snapshot.namespaces.get(namespace)?.metadata.labels, 'kubernetes.io/metadata.name': namespace };
}

interface McpSelectorSpec {
  namespaces?: LabelSelector;
  services?: LabelSelector;
}

/**
 * The Services each selector target of an MCP GwBackend chooses: by the services label selector
 * (unset: every Service) in the backend's namespace, or in the namespaces the namespaces selector
 * matches. Sorted by key, so the configuration is stable.
 */
function mcpSelections(backend: KubeObject, snapshot: Snapshot): Map<string, KubeObject[]> {
  const namespace = backend.metadata.namespace!;
  const targets = (backend.spec as { mcp?: { targets: { name: string; selector?: McpSelectorSpec }[] } }).mcp?.targets;
  const selections = new Map<string, KubeObject[]>();
  for (const target of targets ?? []) {
    const selector = target.selector;
    if (!selector) continue;
    const chosen = [...snapshot.services.values()].filter((service) => {
      const serviceNamespace = service.metadata.namespace!;
      const inNamespace = selector.namespaces
        ? selectorMatches(selector.namespaces, labelsOfNamespace(snapshot, serviceNamespace))
        : serviceNamespace === namespace;
      return inNamespace && (!selector.services || selectorMatches(selector.services, service.metadata.labels ?? {}));
    });
    chosen.sort((a, b) => objectName(a).localeCompare(objectName(b)));
    selections.set(target.name, chosen);
  }
  return selections;
}

function objectName(object: KubeObject): string {
  return `${object.metadata.namespace}/${object.metadata.name}`;
}

function backendKey(ref: RouteBackendRef): string | undefined {
  if (ref.kind === 'Service' || ref.kind === 'GwBackend') return `${ref.kind} ${ref.namespace}/${ref.name}`;
  return undefined;
}

/** Which models attach where: listener keys "gateway|listener" and rule keys "route|rule". */
function modelPlacements(snapshot: Snapshot, models: ReadonlyMap<string, ModelAttachment>) {
  const byListenerSource = new Map<string, string[]>();
  const byRule = new Map<string, string[]>();
  const push = (map: Map<string, string[]>, key: string, model: string) =>
    map.set(key, [...(map.get(key) ?? []), model]);
  for (const [key, attachment] of models) {
    if (!attachment.programmed) continue;
    const model = snapshot.models.get(key)!;
    const namespace = model.metadata.namespace!;
    for (const parent of (model.spec as GwModelSpec).parentRefs) {
      const parentNamespace = parent.namespace ?? namespace;
      if (parent.kind === 'HTTPRoute') {
        push(byRule, `${parentNamespace}/${parent.name}|${parent.sectionName ?? ''}`, key);
      } else {
        push(
          byListenerSource,
          `${parent.kind ?? 'Gateway'} ${parentNamespace}/${parent.name}|${parent.sectionName ?? ''}|${parent.port ?? ''}`,
          key,
        );
      }
    }
  }
  return { byListenerSource, byRule };
}

/** `{ [name]: field → "source on target" }`, or nothing for an empty section. */
function sourcesField<N extends string>(name: N, section: EffectiveSection): { [K in N]?: Record<string, string> } {
  const sources: Record<string, string> = {};
  for (const [field, effective] of Object.entries(section)) {
    if (field !== 'phase') sources[field] = `${effective.from.source} on ${effective.from.target}`;
  }
  return (Object.keys(sources).length > 0 ? { [name]: sources } : {}) as { [K in N]?: Record<string, string> };
}

export function buildDataPlaneConfigs(
  snapshot: Snapshot,
  gatewayApi: GatewayApiResult,
  models: ReadonlyMap<string, ModelAttachment>,
  revision: string,
  index: PolicyIndex,
): Map<string, DataPlaneConfig> {
  const placements = modelPlacements(snapshot, models);
  const configs = new Map<string, DataPlaneConfig>();
  for (const [gatewayKey, listeners] of gatewayApi.listeners) {
    const [namespace, name] = gatewayKey.split('/') as [string, string];
    const config: DataPlaneConfig = {
      apiVersion: DATAPLANE_CONFIG_VERSION,
      gateway: { namespace, name },
      revision,
      listeners: [],
      backends: {},
      models: {},
      data: {},
    };
    const referenced: { kind: string; namespace: string; name: string }[] = [];
    const useModel = (key: string) => {
      const model = snapshot.models.get(key)!;
      config.models[key] = model.spec as GwModelSpec;
      for (const ref of findReferences(model.spec, 'spec'))
        referenced.push({ kind: ref.kind, namespace: model.metadata.namespace!, name: ref.name });
    };
    for (const listener of listeners) {
      if (!listener.programmed) continue;
      const point: AttachmentPoint = { gateway: gatewayKey, listener };
      const sourceKey = `${listener.source.kind} ${listener.source.namespace}/${listener.source.name}`;
      const listenerModels = [
        ...(placements.byListenerSource.get(`${sourceKey}||`) ?? []),
        ...(placements.byListenerSource.get(`${sourceKey}|${listener.name}|`) ?? []),
        ...(placements.byListenerSource.get(`${sourceKey}||${listener.port}`) ?? []),
        ...(placements.byListenerSource.get(`${sourceKey}|${listener.name}|${listener.port}`) ?? []),
      ];
      for (const model of listenerModels) useModel(model);
      const listenerPolicy = effectivePolicy(index, point);
      const listenerConfig: ListenerConfig = {
        name: listener.name,
        port: listener.port,
        protocol: listener.protocol,
        frontend: valuesOf(listenerPolicy.frontend),
        preRouting: withApiKeySelection(valuesOf(listenerPolicy.preRouting), namespace, snapshot),
        ...sourcesField('preRoutingSources', listenerPolicy.preRouting),
        routes: [],
        models: [...new Set(listenerModels)].sort(),
      };
      if (listener.hostname) listenerConfig.hostname = listener.hostname;
      if (listener.tls) {
        listenerConfig.tls = {
          mode: listener.tls.mode,
          certificates: listener.tls.certificateRefs.map((ref) => `Secret ${ref.namespace}/${ref.name}`),
        };
        for (const ref of listener.tls.certificateRefs) referenced.push({ kind: 'Secret', ...ref });
      }
      for (const route of listener.routes) {
        const routeKey = `${route.namespace}/${route.name}`;
        const routeConfig: RouteConfig = { route: routeKey, hostnames: route.hostnames, rules: [] };
        const ruleCount = route.rules.length;
        for (const rule of route.rules) {
          const routePoint: AttachmentPoint = {
            ...point,
            route: { namespace: route.namespace, name: route.name, rule: rule.name },
          };
          const rulePolicy = effectivePolicy(index, routePoint).traffic;
          const ruleConfig: RuleConfig = {
            matches: rule.matches,
            traffic: withApiKeySelection(valuesOf(rulePolicy), route.namespace, snapshot),
            ...sourcesField('trafficSources', rulePolicy),
            backendRefs: [],
          };
          if (rule.name) ruleConfig.name = rule.name;
          if (rule.filters) ruleConfig.filters = rule.filters;
          if (rule.timeouts) ruleConfig.timeouts = rule.timeouts;
          const ruleModels = [
            ...(placements.byRule.get(`${routeKey}|${rule.name ?? ''}`) ?? []),
            ...(ruleCount === 1 && rule.name ? (placements.byRule.get(`${routeKey}|`) ?? []) : []),
          ];
          if (ruleModels.length > 0) {
            ruleConfig.models = [...new Set(ruleModels)].sort();
            for (const model of ruleModels) useModel(model);
          }
          for (const ref of rule.backendRefs) {
            const key = backendKey(ref);
            if (!key) continue; // GwModel "*": the rule's models serve it
            const backendPoint: AttachmentPoint = {
              ...routePoint,
              backend: {
                kind: ref.kind as 'Service' | 'GwBackend',
                namespace: ref.namespace,
                name: ref.name,
                port: ref.port,
              },
            };
            const policy = valuesOf(effectivePolicy(index, backendPoint).backend);
            const refConfig: BackendRefConfig = { backend: key, weight: ref.weight, policy };
            if (ref.port !== undefined) refConfig.port = ref.port;
            if (ref.filters) refConfig.filters = ref.filters;
            if (ref.problem) refConfig.problem = ref.problem;
            ruleConfig.backendRefs.push(refConfig);
            const object =
              ref.kind === 'Service'
                ? snapshot.services.get(`${ref.namespace}/${ref.name}`)
                : snapshot.backends.get(`${ref.namespace}/${ref.name}`);
            const sections = ref.kind === 'GwBackend' && object ? subBackendNames(object) : [];
            if (sections.length > 0) {
              refConfig.sections = {};
              for (const section of sections) {
                const sectionPoint = { ...backendPoint, backend: { ...backendPoint.backend!, section } };
                const sectionPolicy = valuesOf(effectivePolicy(index, sectionPoint).backend);
                refConfig.sections[section] = sectionPolicy;
                for (const found of findReferences(sectionPolicy, 'policy'))
                  referenced.push({ kind: found.kind, namespace: ref.namespace, name: found.name });
              }
            }
            if (object && !ref.problem && ref.kind === 'GwBackend') {
              const selections = mcpSelections(object, snapshot);
              if (selections.size > 0) refConfig.mcpServices = {};
              for (const [target, services] of selections) {
                refConfig.mcpServices![target] = services.map((service) => {
                  const serviceKey = `Service ${objectName(service)}`;
                  config.backends[serviceKey] = { kind: 'Service', spec: service.spec };
                  const annotations = service.metadata.annotations ?? {};
                  const selected: McpSelectedService = { service: serviceKey };
                  if (annotations[MCP_PATH_ANNOTATION]) selected.path = annotations[MCP_PATH_ANNOTATION];
                  if (annotations[MCP_TARGET_NAME_ANNOTATION])
                    selected.targetName = annotations[MCP_TARGET_NAME_ANNOTATION];
                  return selected;
                });
              }
            }
            if (object && !ref.problem) {
              config.backends[key] = { kind: ref.kind, spec: object.spec };
              for (const found of findReferences(object.spec, 'spec'))
                referenced.push({ kind: found.kind, namespace: ref.namespace, name: found.name });
            }
            for (const found of findReferences(policy, 'policy'))
              referenced.push({ kind: found.kind, namespace: ref.namespace, name: found.name });
          }
          routeConfig.rules.push(ruleConfig);
        }
        listenerConfig.routes.push(routeConfig);
      }
      for (const found of findReferences(listenerConfig.frontend, 'frontend'))
        referenced.push({ kind: found.kind, namespace, name: found.name });
      for (const found of findReferences(listenerConfig.preRouting, 'traffic'))
        referenced.push({ kind: found.kind, namespace, name: found.name });
      for (const object of selectedObjects(listenerConfig.preRouting, namespace, snapshot))
        referenced.push({ kind: object.kind, namespace, name: object.metadata.name! });
      for (const route of listenerConfig.routes) {
        const routeNamespace = route.route.split('/')[0]!;
        for (const rule of route.rules) {
          for (const found of findReferences(rule.traffic, 'traffic')) {
            referenced.push({ kind: found.kind, namespace: routeNamespace, name: found.name });
          }
          for (const object of selectedObjects(rule.traffic, routeNamespace, snapshot)) {
            referenced.push({ kind: object.kind, namespace: routeNamespace, name: object.metadata.name! });
          }
        }
      }
      config.listeners.push(listenerConfig);
    }
    for (const ref of referenced) {
      if (ref.kind === 'Service' || ref.kind === 'GwBackend') {
        // An endpoint reference of a policy (ExtAuth, rate limit service...): its spec is needed
        // to connect; a missing one is left out and the policy reports it.
        const key = `${ref.kind} ${ref.namespace}/${ref.name}`;
        const object = (ref.kind === 'Service' ? snapshot.services : snapshot.backends).get(
          `${ref.namespace}/${ref.name}`,
        );
        if (object && !config.backends[key]) config.backends[key] = { kind: ref.kind, spec: object.spec };
        continue;
      }
      if (ref.kind !== 'Secret' && ref.kind !== 'ConfigMap') continue;
      const object = (ref.kind === 'Secret' ? snapshot.secrets : snapshot.configMaps).get(
        `${ref.namespace}/${ref.name}`,
      );
      if (object) config.data[`${ref.kind} ${ref.namespace}/${ref.name}`] = objectData(object);
    }
    configs.set(gatewayKey, config);
  }
  return configs;
}
