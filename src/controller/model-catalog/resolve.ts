// GwParameters `spec.modelCatalog` (spec document 1: "model cost catalog sources; effective only
// on Gateway-level parameters"): the ConfigMaps of each source read and parsed (parse.ts), their
// prices merged in order for the data plane (DataPlaneConfig.modelCatalog), and the
// ModelCatalogResolved condition that says on the GwParameters what was read or why not.
//
// A catalog guards no traffic, so it fails open: a source that is missing or invalid contributes
// no prices (the others still do) and requests keep flowing, unpriced where its prices were
// missing; the condition names the ConfigMap, the key and the JSON path, the data plane logs the
// same, and `gw_ai_cost_catalog_lookups_total{status="missing"}` counts the unpriced requests.
// Parsing is cached per ConfigMap version (objects are immutable): a full translation, which
// runs after every change, does not parse a large catalog again.
import type { GatewayClassSpec } from '../../api/kinds/gateway-api/gateway-class.ts';
import type { Condition } from '../../api/kinds/gateway-api/shared.ts';
import type { GwParametersStatus } from '../../api/kinds/gw-parameters.ts';
import type { GwParametersSpec } from '../../api/types/provisioning.ts';
import type { KubeObject } from '../../api/validate/admission.ts';
import type { ModelCatalogConfig } from '../../contract/dataplane-config.ts';
import { condition, contextOf, sortConditions } from '../gateway-api/conditions.ts';
import { CONTROLLER_NAME } from '../gateway-api/types.ts';
import { objectData } from '../object-data.ts';
import { classParameters, gatewayParameters } from '../provisioning/parameters.ts';
import type { Snapshot } from '../snapshot.ts';
import { type CatalogParse, type CatalogPrices, mergeCatalogs, parseModelCatalog } from './parse.ts';

/** The condition type on GwParameters that set spec.modelCatalog. */
export const MODEL_CATALOG_CONDITION = 'ModelCatalogResolved';
/** Its reasons. */
export const MODEL_CATALOG_REASONS = {
  resolved: 'Resolved',
  refNotFound: 'RefNotFound',
  invalid: 'InvalidModelCatalog',
  ignored: 'Ignored',
} as const;

/** ModelCatalogConfigMapRef.key's default (spec document 2). */
export const DEFAULT_CATALOG_KEY = 'catalog.json';

/** One GwParameters' catalog as read now. */
export interface ModelCatalogResolution {
  config: ModelCatalogConfig;
  /** Models priced, over all sources (a model in two sources counts once). */
  models: number;
  /** Sources that could not be used, in source order, each with why. */
  problems: string[];
  /** Whether any of them is missing (its ConfigMap or key) rather than invalid. */
  missing: boolean;
}

const parsed = new WeakMap<KubeObject, Map<string, CatalogParse>>();

/** The catalog at `key` of a ConfigMap, parsed once per version of the object. */
function parseConfigMapKey(configMap: KubeObject, text: string, key: string): CatalogParse {
  let byKey = parsed.get(configMap);
  if (!byKey) {
    byKey = new Map();
    parsed.set(configMap, byKey);
  }
  let result = byKey.get(key);
  if (!result) {
    result = parseModelCatalog(text);
    byKey.set(key, result);
  }
  return result;
}

/** The "ConfigMap ns/name" keys a GwParameters' catalog reads (what a configuration depends on). */
export function catalogConfigMapKeys(spec: GwParametersSpec | undefined, namespace: string): string[] {
  return (spec?.modelCatalog?.sources ?? []).map((source) => `ConfigMap ${namespace}/${source.configMap.name}`);
}

/** Reads and merges the sources of `parameters`' modelCatalog; undefined when it sets none. */
export function resolveModelCatalog(parameters: KubeObject, snapshot: Snapshot): ModelCatalogResolution | undefined {
  const spec = parameters.spec as GwParametersSpec | undefined;
  if (spec?.modelCatalog === undefined) return undefined;
  // The ConfigMaps are in the Gateway's namespace; a Gateway-level GwParameters is in it too
  // (a LocalParametersReference), so the parameters' own namespace is the Gateway's.
  const namespace = parameters.metadata.namespace ?? 'default';
  const problems: string[] = [];
  let missing = false;
  const sources: string[] = [];
  const catalogs: CatalogPrices[] = [];
  (spec.modelCatalog.sources ?? []).forEach((source, index) => {
    const name = source.configMap.name;
    const key = source.configMap.key ?? DEFAULT_CATALOG_KEY;
    const where = `spec.modelCatalog.sources[${index}]: ConfigMap ${namespace}/${name}`;
    const configMap = snapshot.configMaps.get(`${namespace}/${name}`);
    if (!configMap) {
      problems.push(`${where} not found`);
      missing = true;
      return;
    }
    const data = objectData(configMap);
    const text = data[key];
    if (text === undefined) {
      const keys = Object.keys(data).sort();
      missing = true;
      problems.push(
        `${where} has no key ${key}${keys.length > 0 ? ` (its keys: ${keys.join(', ')})` : ' (it holds no data)'}`,
      );
      return;
    }
    const result = parseConfigMapKey(configMap, text, key);
    if (!result.ok) {
      problems.push(`${where} key ${key}: ${result.problems.join('; ')}`);
      return;
    }
    sources.push(`ConfigMap ${namespace}/${name} ${key}`);
    catalogs.push(result.providers);
  });
  const providers = mergeCatalogs(catalogs);
  const config: ModelCatalogConfig = { parameters: `${namespace}/${parameters.metadata.name}`, sources, providers };
  if (problems.length > 0) config.problems = problems;
  const models = Object.values(providers).reduce((sum, byModel) => sum + Object.keys(byModel).length, 0);
  return { config, models, problems, missing };
}

/** The GwParameters a Gateway names in spec.infrastructure.parametersRef, if it resolves. */
function ownParameters(gateway: KubeObject, snapshot: Snapshot): KubeObject | undefined {
  const resolved = gatewayParameters(snapshot, gateway);
  return resolved.ok && resolved.level ? snapshot.parameters.get(resolved.level.parameters) : undefined;
}

/** The model catalog of a Gateway's configuration: its own GwParameters' (never its class's). */
export function gatewayModelCatalog(gatewayKey: string, snapshot: Snapshot): ModelCatalogConfig | undefined {
  const gateway = snapshot.gateways.get(gatewayKey);
  const parameters = gateway && ownParameters(gateway, snapshot);
  return parameters && resolveModelCatalog(parameters, snapshot)?.config;
}

/** Who names a GwParameters: gw's Gateways (effective) and gw's GatewayClasses (modelCatalog ignored). */
function parametersUsers(snapshot: Snapshot, gwGateways: ReadonlySet<string>) {
  const byGateways = new Map<string, string[]>();
  const byClasses = new Map<string, string[]>();
  const push = (map: Map<string, string[]>, key: string, user: string) => map.set(key, [...(map.get(key) ?? []), user]);
  for (const key of gwGateways) {
    const gateway = snapshot.gateways.get(key);
    const parameters = gateway && ownParameters(gateway, snapshot);
    if (parameters) push(byGateways, `${parameters.metadata.namespace}/${parameters.metadata.name}`, key);
  }
  for (const gatewayClass of snapshot.gatewayClasses.values()) {
    if ((gatewayClass.spec as GatewayClassSpec).controllerName !== CONTROLLER_NAME) continue;
    const resolved = classParameters(snapshot, gatewayClass);
    if (resolved.ok && resolved.level) push(byClasses, resolved.level.parameters, gatewayClass.metadata.name!);
  }
  return { byGateways, byClasses };
}

function plural(count: number, one: string, many = `${one}s`): string {
  return `${count} ${count === 1 ? one : many}`;
}

/** The ModelCatalogResolved condition of one GwParameters that sets spec.modelCatalog. */
function catalogCondition(
  parameters: KubeObject,
  snapshot: Snapshot,
  now: string,
  gateways: readonly string[],
  classes: readonly string[],
): Condition {
  const context = contextOf(parameters, now);
  const classNote =
    classes.length > 0
      ? `spec.modelCatalog is ignored as the parameters of GatewayClass ${classes.join(', ')}: modelCatalog is effective only on Gateway-level parameters (Gateway spec.infrastructure.parametersRef)`
      : '';
  if (gateways.length === 0 && classes.length > 0)
    return condition(
      context,
      MODEL_CATALOG_CONDITION,
      false,
      MODEL_CATALOG_REASONS.ignored,
      `${classNote}; set it on the GwParameters each Gateway names instead`,
    );
  const resolution = resolveModelCatalog(parameters, snapshot)!;
  const note = classNote === '' ? '' : `; ${classNote}`;
  if (resolution.problems.length > 0) {
    const reason = resolution.missing ? MODEL_CATALOG_REASONS.refNotFound : MODEL_CATALOG_REASONS.invalid;
    const used =
      resolution.config.sources.length > 0
        ? ` The other sources price ${plural(resolution.models, 'model')}.`
        : ' No model is priced.';
    return condition(
      context,
      MODEL_CATALOG_CONDITION,
      false,
      reason,
      `${resolution.problems.join('; ')}.${used} Requests are served; those of unpriced models have no cost${note}`,
    );
  }
  const providers = Object.keys(resolution.config.providers).length;
  if (resolution.config.sources.length === 0)
    return condition(
      context,
      MODEL_CATALOG_CONDITION,
      true,
      MODEL_CATALOG_REASONS.resolved,
      `spec.modelCatalog.sources is empty: no model is priced${note}`,
    );
  return condition(
    context,
    MODEL_CATALOG_CONDITION,
    true,
    MODEL_CATALOG_REASONS.resolved,
    `${plural(resolution.models, 'model')} of ${plural(providers, 'provider')} priced from ${resolution.config.sources.join(', ')}${note}`,
  );
}

/**
 * The status of every GwParameters as far as the model catalog goes: the ModelCatalogResolved
 * condition when spec.modelCatalog is set, no condition otherwise (so one that drops the field
 * loses the condition). `gwGateways` are the keys of gw's Gateways.
 */
function hasCatalogCondition(parameters: KubeObject): boolean {
  const status = parameters.status as GwParametersStatus | undefined;
  return status?.conditions?.some((entry) => entry.type === MODEL_CATALOG_CONDITION) ?? false;
}

export function parametersCatalogStatuses(
  snapshot: Snapshot,
  gwGateways: ReadonlySet<string>,
  now: string,
): Map<string, GwParametersStatus> {
  const { byGateways, byClasses } = parametersUsers(snapshot, gwGateways);
  const statuses = new Map<string, GwParametersStatus>();
  for (const key of [...snapshot.parameters.keys()].sort()) {
    const parameters = snapshot.parameters.get(key)!;
    if ((parameters.spec as GwParametersSpec | undefined)?.modelCatalog !== undefined) {
      const condition = catalogCondition(
        parameters,
        snapshot,
        now,
        byGateways.get(key) ?? [],
        byClasses.get(key) ?? [],
      );
      statuses.set(key, { conditions: sortConditions([condition]) });
    } else if (hasCatalogCondition(parameters)) {
      // The catalog was removed: its condition goes. Parameters that never had one get no status
      // from here (a controller that does not provision writes none).
      statuses.set(key, { conditions: [] });
    }
  }
  return statuses;
}
