// Builds the data-plane configuration of each gw Gateway (the contract: src/contract/
// dataplane-config.ts) from a snapshot and the controller's translation: effective listeners and
// routes, the effective policy at every attachment point with where each field came from, the specs
// of the backends and models they reach, the data of every Secret and ConfigMap named, and the
// model cost catalog of the Gateway's own GwParameters (model-catalog/resolve.ts).
import type { ServiceSpec } from '../api/kinds/core/service.ts';
import type { GwBackendSpec } from '../api/kinds/gw-backend.ts';
import type { GwModelSpec } from '../api/kinds/gw-model.ts';
import { pickerServiceName } from '../api/kinds/inference/inference-pool.ts';
import type { KubeObject } from '../api/validate/admission.ts';
import {
  type ApiKeyAuthenticationConfig,
  type BackendObjectConfig,
  type BackendPolicyConfig,
  type BackendRefConfig,
  DATAPLANE_CONFIG_VERSION,
  type DataPlaneConfig,
  type FieldNamespaces,
  type ListenerConfig,
  MCP_PATH_ANNOTATION,
  MCP_TARGET_NAME_ANNOTATION,
  type McpSelectedService,
  type ModelsConfig,
  type RouteConfig,
  type RuleConfig,
  type TrafficConfig,
} from '../contract/dataplane-config.ts';
import { selectorMatches } from './gateway-api/selectors.ts';
import type { EffectiveListener, GatewayApiResult, RouteBackendRef, RouteRule } from './gateway-api/types.ts';
import { poolConfig } from './inference-pools.ts';
import { type GatewayMesh, gatewayMesh, serviceMesh } from './mesh-endpoints.ts';
import { gatewayModelCatalog } from './model-catalog/resolve.ts';
import type { ModelAttachment } from './models/status.ts';
import { objectData } from './object-data.ts';
import { type AttachmentPoint, effectivePolicy, type PolicyIndex } from './policies/attachments.ts';
import { type EffectiveSection, namespacesOf, sourcesOf, valuesOf } from './policies/merge.ts';
import { findReferences } from './references.ts';
import type { Snapshot } from './snapshot.ts';

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
function withApiKeySelection(
  traffic: TrafficConfig,
  home: string,
  namespaces: FieldNamespaces | undefined,
  snapshot: Snapshot,
): TrafficConfig {
  const auth = traffic.apiKeyAuthentication;
  const namespace = namespaces?.apiKeyAuthentication ?? home;
  if (!auth || (!auth.secretSelector && !auth.configMapSelector)) return traffic;
  const selected = selectedObjects(auth, namespace, snapshot)
    .map((object) => `${object.kind} ${namespace}/${object.metadata.name}`)
    .sort();
  const resolved: ApiKeyAuthenticationConfig = { ...auth, selected };
  return { ...traffic, apiKeyAuthentication: resolved };
}

/** The sub-backends a policy can target by sectionName: AI providers in groups, MCP targets. */
function subBackendNames(backend: KubeObject): string[] {
  const spec = backend.spec as GwBackendSpec;
  if (spec.mcp) return spec.mcp.targets.map((target) => target.name);
  return (spec.ai?.groups ?? []).flatMap((group) => group.providers.map((provider) => provider.name));
}

/** Labels of a namespace as selectors see them (the API server's kubernetes.io/metadata.name included). */
function labelsOfNamespace(snapshot: Snapshot, namespace: string): Record<string, string> {
  return { ...snapshot.namespaces.get(namespace)?.metadata.labels, 'kubernetes.io/metadata.name': namespace };
}

/**
 * The Services each selector target of an MCP GwBackend chooses: by the services label selector
 * (unset: every Service) in the backend's namespace, or in the namespaces the namespaces selector
 * matches. Sorted by key, so the configuration is stable.
 */
function mcpSelections(backend: KubeObject, snapshot: Snapshot): Map<string, KubeObject[]> {
  const namespace = backend.metadata.namespace!;
  const targets = (backend.spec as GwBackendSpec).mcp?.targets;
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

/** Which models attach where: listener keys "Kind ns/name|section|port" and rule keys "ns/route|rule". */
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

type Placements = ReturnType<typeof modelPlacements>;

/**
 * The effective backend section for a backend of `kind` ('models' for GwModels): backend.ai applies
 * only to ai backends and GwModels, backend.mcp only to mcp backends (spec document 2, BackendFull),
 * so a Gateway- or route-wide policy that sets them leaves them out of every other backend's.
 */
function applicableTo(kind: 'ai' | 'mcp' | 'models' | 'other', section: EffectiveSection): EffectiveSection {
  const dropAi = kind !== 'ai' && kind !== 'models' && section.ai !== undefined;
  const dropMcp = kind !== 'mcp' && section.mcp !== undefined;
  if (!dropAi && !dropMcp) return section;
  const { ai, mcp, ...rest } = section;
  return { ...rest, ...(dropAi ? {} : ai && { ai }), ...(dropMcp ? {} : mcp && { mcp }) };
}

/** Which backend.ai / backend.mcp rule a backend object falls under. */
function backendKind(object: KubeObject | undefined): 'ai' | 'mcp' | 'other' {
  const spec = object?.spec as GwBackendSpec | undefined;
  return spec?.ai ? 'ai' : spec?.mcp ? 'mcp' : 'other';
}

/** A section's sources, or nothing for an empty section (the configuration stays small). */
function sourcesIfAny(section: EffectiveSection): Record<string, string> | undefined {
  const sources = sourcesOf(section);
  return Object.keys(sources).length > 0 ? sources : undefined;
}

/** An object named by the configuration, in the namespace its referrer resolves it in. */
interface Referenced {
  kind: string;
  namespace: string;
  name: string;
}

/** One Gateway's configuration while it is built, and the objects it names. */
interface Building {
  readonly snapshot: Snapshot;
  readonly index: PolicyIndex;
  readonly placements: Placements;
  readonly config: DataPlaneConfig;
  readonly referenced: Referenced[];
  /** The Gateway's mesh (GwParameters mesh, on), if any: Services in the ambient mesh carry their pods. */
  readonly mesh: GatewayMesh | undefined;
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
    const building: Building = {
      snapshot,
      index,
      placements,
      referenced: [],
      mesh: gatewayMesh(snapshot, gatewayKey),
      config: {
        apiVersion: DATAPLANE_CONFIG_VERSION,
        gateway: { namespace, name },
        revision,
        listeners: [],
        backends: {},
        models: {},
        data: {},
      },
    };
    for (const listener of listeners) {
      if (listener.programmed) building.config.listeners.push(listenerConfig(building, gatewayKey, listener));
    }
    resolveReferenced(building);
    const modelCatalog = gatewayModelCatalog(gatewayKey, snapshot);
    if (modelCatalog) building.config.modelCatalog = modelCatalog;
    configs.set(gatewayKey, building.config);
  }
  return configs;
}

/** A listener: its frontend and PreRouting policies, its routes, and the models attached to it. */
function listenerConfig(building: Building, gatewayKey: string, listener: EffectiveListener): ListenerConfig {
  const namespace = gatewayKey.split('/')[0]!;
  const point: AttachmentPoint = { gateway: gatewayKey, listener };
  const policy = effectivePolicy(building.index, point);
  const frontendNamespaces = namespacesOf(policy.frontend, namespace);
  const preRoutingNamespaces = namespacesOf(policy.preRouting, namespace);
  const config: ListenerConfig = {
    name: listener.name,
    port: listener.port,
    protocol: listener.protocol,
    frontend: valuesOf(policy.frontend),
    preRouting: withApiKeySelection(valuesOf(policy.preRouting), namespace, preRoutingNamespaces, building.snapshot),
    routes: [],
  };
  const frontendSources = sourcesIfAny(policy.frontend);
  if (frontendSources) config.frontendSources = frontendSources;
  if (frontendNamespaces) config.frontendNamespaces = frontendNamespaces;
  const preRoutingSources = sourcesIfAny(policy.preRouting);
  if (preRoutingSources) config.preRoutingSources = preRoutingSources;
  if (preRoutingNamespaces) config.preRoutingNamespaces = preRoutingNamespaces;
  if (listener.hostname) config.hostname = listener.hostname;
  if (listener.tls) {
    config.tls = {
      mode: listener.tls.mode,
      certificates: listener.tls.certificateRefs.map((ref) => `Secret ${ref.namespace}/${ref.name}`),
    };
    for (const ref of listener.tls.certificateRefs) building.referenced.push({ kind: 'Secret', ...ref });
  }
  const modelKeys = listenerModels(building.placements, listener);
  if (modelKeys.length > 0) {
    // The listener's models serve what no route matches, under the listener's PostRouting policy.
    const trafficNamespaces = namespacesOf(policy.traffic, namespace);
    const rule: RuleConfig = {
      matches: [],
      traffic: withApiKeySelection(valuesOf(policy.traffic), namespace, trafficNamespaces, building.snapshot),
      backendRefs: [],
      models: modelsConfig(building, modelKeys, policy.backend),
    };
    const trafficSources = sourcesIfAny(policy.traffic);
    if (trafficSources) rule.trafficSources = trafficSources;
    if (trafficNamespaces) rule.trafficNamespaces = trafficNamespaces;
    config.modelRule = rule;
    referencedByRule(building, rule, namespace);
  }
  for (const route of listener.routes) {
    const routeConfig: RouteConfig = {
      route: `${route.namespace}/${route.name}`,
      hostnames: route.hostnames,
      rules: [],
    };
    for (const rule of route.rules) {
      routeConfig.rules.push(ruleConfig(building, point, route.namespace, route.name, route.rules.length, rule));
    }
    config.routes.push(routeConfig);
  }
  referenceSection(building, config.frontend, 'frontend', namespace, frontendNamespaces);
  referenceSection(building, config.preRouting, 'traffic', namespace, preRoutingNamespaces);
  return config;
}

/** The programmed models whose parentRef selects this listener (its Gateway or ListenerSet, section, port). */
function listenerModels(placements: Placements, listener: EffectiveListener): string[] {
  const source = `${listener.source.kind} ${listener.source.namespace}/${listener.source.name}`;
  const keys = [
    ...(placements.byListenerSource.get(`${source}||`) ?? []),
    ...(placements.byListenerSource.get(`${source}|${listener.name}|`) ?? []),
    ...(placements.byListenerSource.get(`${source}||${listener.port}`) ?? []),
    ...(placements.byListenerSource.get(`${source}|${listener.name}|${listener.port}`) ?? []),
  ];
  return [...new Set(keys)].sort();
}

/** The models a rule or listener serves, with the backend policy on the way to them; their specs join the configuration. */
function modelsConfig(building: Building, keys: string[], backend: EffectiveSection): ModelsConfig {
  for (const key of keys) {
    const model = building.snapshot.models.get(key)!;
    building.config.models[key] = model.spec as GwModelSpec;
    for (const ref of findReferences(model.spec, 'spec'))
      building.referenced.push({ kind: ref.kind, namespace: model.metadata.namespace!, name: ref.name });
  }
  const applicable = applicableTo('models', backend);
  const models: ModelsConfig = { keys, policy: valuesOf(applicable) };
  const policySources = sourcesIfAny(applicable);
  if (policySources) models.policySources = policySources;
  // Models are of many namespaces: every field says its own.
  const policyNamespaces = namespacesOf(applicable);
  if (policyNamespaces) models.policyNamespaces = policyNamespaces;
  return models;
}

/** A route rule: its matches, filters, effective traffic policy, and its backendRefs or models. */
function ruleConfig(
  building: Building,
  listenerPoint: AttachmentPoint,
  routeNamespace: string,
  routeName: string,
  ruleCount: number,
  rule: RouteRule,
): RuleConfig {
  const routeKey = `${routeNamespace}/${routeName}`;
  const point: AttachmentPoint = {
    ...listenerPoint,
    route: { namespace: routeNamespace, name: routeName, rule: rule.name },
  };
  const policy = effectivePolicy(building.index, point);
  const trafficNamespaces = namespacesOf(policy.traffic, routeNamespace);
  const config: RuleConfig = {
    matches: rule.matches,
    traffic: withApiKeySelection(valuesOf(policy.traffic), routeNamespace, trafficNamespaces, building.snapshot),
    backendRefs: [],
  };
  const trafficSources = sourcesIfAny(policy.traffic);
  if (trafficSources) config.trafficSources = trafficSources;
  if (trafficNamespaces) config.trafficNamespaces = trafficNamespaces;
  if (rule.name) config.name = rule.name;
  if (rule.filters) config.filters = rule.filters;
  if (rule.timeouts) config.timeouts = rule.timeouts;
  const placed = building.placements.byRule;
  const modelKeys = [
    ...(placed.get(`${routeKey}|${rule.name ?? ''}`) ?? []),
    // A model without sectionName attaches to a route of one rule, named or not.
    ...(ruleCount === 1 && rule.name ? (placed.get(`${routeKey}|`) ?? []) : []),
  ];
  if (modelKeys.length > 0) config.models = modelsConfig(building, [...new Set(modelKeys)].sort(), policy.backend);
  for (const ref of rule.backendRefs) {
    const refConfig = backendRefConfig(building, point, ref);
    if (refConfig) config.backendRefs.push(refConfig);
  }
  referencedByRule(building, config, routeNamespace);
  return config;
}

/** What a rule's traffic policy and its models' backend policy name, each field in its source's namespace. */
function referencedByRule(building: Building, rule: RuleConfig, namespace: string): void {
  referenceSection(building, rule.traffic, 'traffic', namespace, rule.trafficNamespaces);
  if (rule.models) referenceSection(building, rule.models.policy, 'policy', namespace, rule.models.policyNamespaces);
}

/**
 * The objects an effective section names, each resolved in the namespace of the object that set
 * its field (FieldNamespaces), else in `home` — the Secrets and ConfigMaps named, and those an
 * API key selector chose. A field set in another namespace never reads the home namespace's
 * objects: a Gateway-wide policy's Secret is its own, whatever a route's namespace holds.
 */
function referenceSection(
  building: Building,
  section: object,
  path: string,
  home: string,
  namespaces: FieldNamespaces | undefined,
): void {
  for (const [field, value] of Object.entries(section)) {
    const namespace = namespaces?.[field] ?? home;
    for (const found of findReferences(value, `${path}.${field}`))
      building.referenced.push({ kind: found.kind, namespace, name: found.name });
    for (const object of selectedObjects(value, namespace, building.snapshot))
      building.referenced.push({ kind: object.kind, namespace, name: object.metadata.name! });
  }
}

/**
 * A backendRef of a rule (GwModel "*" has none: the rule's models serve it). One with a problem
 * is answered 500 and never reached: nothing of its backend (spec, policies, the Secrets they
 * name — perhaps of a namespace that did not consent) goes into the configuration.
 */
function backendRefConfig(
  building: Building,
  rulePoint: AttachmentPoint,
  ref: RouteBackendRef,
): BackendRefConfig | undefined {
  if (ref.kind !== 'Service' && ref.kind !== 'GwBackend') return undefined;
  const key = `${ref.kind} ${ref.namespace}/${ref.name}`;
  if (ref.problem) {
    const port = ref.port !== undefined ? { port: ref.port } : {};
    const problem = ref.problemMessage ? `${ref.problem}: ${ref.problemMessage}` : ref.problem;
    return { backend: key, weight: ref.weight, policy: {}, ...port, problem };
  }
  const { snapshot, config, referenced } = building;
  const backendPoint: AttachmentPoint = {
    ...rulePoint,
    backend: { kind: ref.kind, namespace: ref.namespace, name: ref.name, port: ref.port },
  };
  const object =
    ref.kind === 'Service'
      ? snapshot.services.get(`${ref.namespace}/${ref.name}`)
      : snapshot.backends.get(`${ref.namespace}/${ref.name}`);
  const kind = ref.kind === 'GwBackend' ? backendKind(object) : 'other';
  const effective = applicableTo(kind, effectivePolicy(building.index, backendPoint).backend);
  const refConfig: BackendRefConfig = { backend: key, weight: ref.weight, policy: valuesOf(effective) };
  const policySources = sourcesIfAny(effective);
  if (policySources) refConfig.policySources = policySources;
  const policyNamespaces = namespacesOf(effective, ref.namespace);
  if (policyNamespaces) refConfig.policyNamespaces = policyNamespaces;
  if (ref.port !== undefined) refConfig.port = ref.port;
  if (ref.filters) refConfig.filters = ref.filters;
  const sections = ref.kind === 'GwBackend' && object ? subBackendNames(object) : [];
  if (sections.length > 0) {
    refConfig.sections = {};
    for (const section of sections) {
      const sectionPoint = { ...backendPoint, backend: { ...backendPoint.backend!, section } };
      const sectionPolicy = applicableTo(kind, effectivePolicy(building.index, sectionPoint).backend);
      refConfig.sections[section] = valuesOf<BackendPolicyConfig>(sectionPolicy);
      const sources = sourcesIfAny(sectionPolicy);
      if (sources) {
        refConfig.sectionSources ??= {};
        refConfig.sectionSources[section] = sources;
      }
      const namespaces = namespacesOf(sectionPolicy, ref.namespace);
      if (namespaces) {
        refConfig.sectionNamespaces ??= {};
        refConfig.sectionNamespaces[section] = namespaces;
      }
      referenceSection(building, refConfig.sections[section], 'policy', ref.namespace, namespaces);
    }
  }
  if (object) {
    if (ref.kind === 'GwBackend') addMcpSelections(building, refConfig, object);
    config.backends[key] = backendObject(ref.kind, object, building);
    for (const found of findReferences(object.spec, 'spec'))
      referenced.push({ kind: found.kind, namespace: ref.namespace, name: found.name });
  }
  referenceSection(building, refConfig.policy, 'policy', ref.namespace, policyNamespaces);
  return refConfig;
}

function backendObject(kind: 'Service' | 'GwBackend', object: KubeObject, building: Building): BackendObjectConfig {
  if (kind === 'GwBackend') return { kind, spec: object.spec as GwBackendSpec };
  const mesh = building.mesh && serviceMesh(object, building.snapshot, building.mesh);
  return mesh ? { kind, spec: object.spec as ServiceSpec, mesh } : { kind, spec: object.spec as ServiceSpec };
}

/** The Services an MCP GwBackend's selector targets chose, with what their annotations say. */
function addMcpSelections(building: Building, refConfig: BackendRefConfig, object: KubeObject): void {
  const selections = mcpSelections(object, building.snapshot);
  if (selections.size === 0) return;
  refConfig.mcpServices = {};
  for (const [target, services] of selections) {
    refConfig.mcpServices[target] = services.map((service) => {
      const serviceKey = `Service ${objectName(service)}`;
      building.config.backends[serviceKey] = backendObject('Service', service, building);
      const annotations = service.metadata.annotations ?? {};
      const selected: McpSelectedService = { service: serviceKey };
      if (annotations[MCP_PATH_ANNOTATION]) selected.path = annotations[MCP_PATH_ANNOTATION];
      if (annotations[MCP_TARGET_NAME_ANNOTATION]) selected.targetName = annotations[MCP_TARGET_NAME_ANNOTATION];
      return selected;
    });
  }
}

/**
 * The specs and data of everything the configuration names: Services and GwBackends that policy
 * endpoint references need to connect (ExtAuth, rate limit services...; a missing one is left out
 * and the policy reports it) with the Secrets and ConfigMaps their own policies name, the
 * InferencePools custom providers send to (with their ready Pods and their picker's Service), and
 * the decoded data of Secrets and ConfigMaps.
 */
function resolveReferenced(building: Building): void {
  const { snapshot, config, referenced } = building;
  // The list grows while it is read: an endpoint's GwBackend names Secrets and ConfigMaps of its own.
  for (let i = 0; i < referenced.length; i++) {
    const ref = referenced[i]!;
    const name = `${ref.namespace}/${ref.name}`;
    const key = `${ref.kind} ${name}`;
    if (ref.kind === 'Service' || ref.kind === 'GwBackend') {
      const object = (ref.kind === 'Service' ? snapshot.services : snapshot.backends).get(name);
      if (!object || config.backends[key]) continue;
      config.backends[key] = backendObject(ref.kind, object, building);
      // (its CA bundle, client certificate... in its own namespace)
      for (const found of findReferences(object.spec, 'spec'))
        if (found.kind === 'Secret' || found.kind === 'ConfigMap')
          referenced.push({ kind: found.kind, namespace: ref.namespace, name: found.name });
    } else if (ref.kind === 'InferencePool') {
      const pool = snapshot.inferencePools.get(name);
      if (!pool || config.backends[key]) continue;
      const pooled = poolConfig(pool, snapshot);
      config.backends[key] = pooled;
      // Its endpoint picker's Service, which the data plane calls for every request.
      const picker = pickerServiceName(pooled.spec);
      if (picker !== undefined) referenced.push({ kind: 'Service', namespace: ref.namespace, name: picker });
    } else if (ref.kind === 'Secret' || ref.kind === 'ConfigMap') {
      const object = (ref.kind === 'Secret' ? snapshot.secrets : snapshot.configMaps).get(name);
      if (object) config.data[key] = objectData(object);
    }
  }
}
