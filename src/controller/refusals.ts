// The fields the data plane refuses (contract/enforcement), found by the controller so that they
// show in the status of the object that carries them, in `gw status`, `gw explain` and the
// controller's log — also when the controller runs apart from the proxies. The data plane finds the
// same ones at the same places (src/dataplane/config/compile.ts) and answers the traffic they
// cover with 500: both ask contract/enforcement/consumers.ts which place a value is checked at.
//
// What an object sets itself is checked on the object (a GwBackend's kind, providers and inline
// policies; a GwModel's spec and policies). What a GwPolicy sets is checked where the
// configurations apply it — a traffic field at the place of each kind of backend its rules serve —
// and reported on the policy's entry for that Gateway, with where it is refused.

import type { GwBackendSpec } from '../api/kinds/gw-backend.ts';
import type { GwModelSpec } from '../api/kinds/gw-model.ts';
import type { DataPlaneConfig, FieldSources, RuleConfig } from '../contract/dataplane-config.ts';
import { backendPlace, sectionOwnFields, sectionPlace, trafficPlaces } from '../contract/enforcement/consumers.ts';
import type { PlaceName } from '../contract/enforcement/places.ts';
import { type Refusal, refusalsIn } from '../contract/enforcement/walk.ts';
import type { GatewayApiResult } from './gateway-api/types.ts';
import { markListenersNotProgrammed } from './listener-programmed.ts';

/** A field an object sets that the data plane refuses. */
export interface ObjectRefusal {
  /** The field path in the object ("spec.traffic.retry"). */
  readonly path: string;
  readonly reason: string;
  /** Where it is refused, for a GwPolicy ("HTTPRoute default/llm rule chat"); undefined on the object itself. */
  readonly site?: string;
}

/** One line for a condition or the log: "spec.traffic.retry (at HTTPRoute default/llm rule chat): why". */
export function refusalText(refusal: ObjectRefusal): string {
  const reason = refusal.reason.endsWith('.') ? refusal.reason.slice(0, -1) : refusal.reason;
  return `${refusal.path}${refusal.site ? ` (at ${refusal.site})` : ''}: ${reason}`;
}

function atPath(prefix: string, refusals: readonly Refusal[]): ObjectRefusal[] {
  return refusals.map((refusal) => ({ path: `${prefix}.${refusal.path}`, reason: refusal.reason }));
}

/** What a GwBackend's own spec sets that is refused: its kind and providers, its inline policies, its providers' and targets'. */
export function backendRefusals(spec: GwBackendSpec): ObjectRefusal[] {
  const object = { kind: 'GwBackend' as const, spec };
  const found = atPath('spec', refusalsIn('backend-spec', spec));
  if (spec.policies) found.push(...atPath('spec.policies', refusalsIn(backendPlace(object), spec.policies)));
  for (const [groupIndex, group] of (spec.ai?.groups ?? []).entries()) {
    for (const [index, provider] of group.providers.entries()) {
      if (!provider.policies) continue;
      const path = `spec.ai.groups[${groupIndex}].providers[${index}].policies`;
      found.push(...atPath(path, refusalsIn('backend:ai-provider', provider.policies)));
    }
  }
  for (const [index, target] of (spec.mcp?.targets ?? []).entries()) {
    const policies = target.static?.policies;
    if (policies)
      found.push(...atPath(`spec.mcp.targets[${index}].static.policies`, refusalsIn('backend:mcp-target', policies)));
  }
  return found;
}

/** What a GwModel's spec sets that is refused (its provider, its settings, its policies). */
export function modelRefusals(spec: GwModelSpec): ObjectRefusal[] {
  return [
    ...atPath('spec', refusalsIn('model-spec', spec)),
    ...atPath('spec.policies', refusalsIn('model-policies', spec.policies ?? {})),
  ];
}

/** GwPolicy refusals per policy ("ns/name"), then per Gateway ("ns/name"). */
export type PolicyRefusals = Map<string, Map<string, ObjectRefusal[]>>;

/** The GwPolicy "ns/name" of a field source ("GwPolicy ns/p on HTTPRoute ns/r"), or undefined for inline policies. */
function policyOf(source: string | undefined): string | undefined {
  if (!source?.startsWith('GwPolicy ')) return undefined;
  const end = source.indexOf(' on ');
  return source.slice('GwPolicy '.length, end === -1 ? undefined : end);
}

/** Told about each part of a configuration the data plane checks: its place, values, their sources, and where. */
type ConsumerVisitor = (
  place: PlaceName,
  values: object,
  sources: FieldSources | undefined,
  /** The values' path in the object that sets them: "frontend", "traffic", "backend" of a GwPolicy, or "spec". */
  section: string,
  site: string,
) => void;

/** Every part of a configuration the data plane checks against the registry, as it checks it. */
function visitConsumers(gateway: string, config: DataPlaneConfig, visit: ConsumerVisitor): void {
  for (const listener of config.listeners) {
    const where = `Gateway ${gateway} listener ${listener.name}`;
    visit('frontend', listener.frontend, listener.frontendSources, 'frontend', where);
    visit('traffic', listener.preRouting, listener.preRoutingSources, 'traffic', `${where} PreRouting`);
    if (listener.modelRule) visitRule(config, listener.modelRule, `${where} GwModels`, visit);
    for (const route of listener.routes) {
      route.rules.forEach((rule, index) => {
        visitRule(config, rule, `HTTPRoute ${route.route} rule ${rule.name ?? index}`, visit);
      });
    }
  }
  for (const [key, spec] of Object.entries(config.models)) {
    visit('model-spec', spec, undefined, 'spec', `GwModel ${key}`);
    visit('model-policies', spec.policies ?? {}, undefined, 'spec.policies', `GwModel ${key}`);
  }
}

function visitRule(config: DataPlaneConfig, rule: RuleConfig, site: string, visit: ConsumerVisitor): void {
  for (const place of trafficPlaces(rule, config.backends))
    visit(place, rule.traffic, rule.trafficSources, 'traffic', site);
  if (rule.models) visit('backend:models', rule.models.policy, rule.models.policySources, 'backend', site);
  for (const ref of rule.backendRefs) {
    const object = config.backends[ref.backend];
    if (!object) continue;
    const where = `${site} backend ${ref.backend}`;
    if (object.kind === 'GwBackend') visit('backend-spec', object.spec, undefined, 'spec', where);
    visit(backendPlace(object), ref.policy, ref.policySources, 'backend', where);
    const place = sectionPlace(object);
    if (!place) continue;
    for (const [name, section] of Object.entries(ref.sections ?? {})) {
      const own = sectionOwnFields(section, ref.policy);
      visit(place, own, ref.sectionSources?.[name], 'backend', `${where} section ${name}`);
    }
  }
}

/** Every field a GwPolicy sets that the data plane refuses where the configurations apply it. */
export function policyRefusals(configs: ReadonlyMap<string, DataPlaneConfig>): PolicyRefusals {
  const out: PolicyRefusals = new Map();
  for (const [gateway, config] of configs) {
    const seen = new Set<string>();
    visitConsumers(gateway, config, (place, values, sources, section, site) => {
      for (const refusal of refusalsIn(place, values)) {
        const policy = policyOf(sources?.[refusal.path.split(/[.[]/)[0]!]);
        if (policy === undefined) continue; // an object's own: reported on that object
        const path = `spec.${section}.${refusal.path}`;
        const key = `${policy}|${path}|${site}`;
        if (seen.has(key)) continue;
        seen.add(key);
        let byGateway = out.get(policy);
        if (!byGateway) {
          byGateway = new Map();
          out.set(policy, byGateway);
        }
        const list = byGateway.get(gateway) ?? [];
        list.push({ path, reason: refusal.reason, site });
        byGateway.set(gateway, list);
      }
    });
  }
  return out;
}

/**
 * One line per field the data plane refuses in a configuration, as its log says it ("HTTPRoute
 * ns/r rule chat: traffic.retry: why (set by GwPolicy ns/p on ...)"): for the controller's own log
 * when it runs apart from the proxies (`gw controller`).
 */
export function refusalLines(gateway: string, config: DataPlaneConfig): string[] {
  const lines = new Set<string>();
  visitConsumers(gateway, config, (place, values, sources, section, site) => {
    for (const refusal of refusalsIn(place, values)) {
      const source = sources?.[refusal.path.split(/[.[]/)[0]!];
      lines.add(
        `${site}: ${section}.${refusal.path}: ${refusal.reason}${source ? ` (set by ${source})` : ''}; answered 500`,
      );
    }
  });
  return [...lines];
}

/** The listeners of a configuration that cannot be served (frontend or PreRouting fields refused), with why. */
function unservedListeners(config: DataPlaneConfig): Map<string, string> {
  const out = new Map<string, string>();
  for (const listener of config.listeners) {
    const refused = [
      ...atPath('frontend', refusalsIn('frontend', listener.frontend)),
      ...atPath('traffic', refusalsIn('traffic', listener.preRouting)),
    ];
    if (refused.length > 0)
      out.set(`${listener.name}|${listener.port}`, `${refused.map(refusalText).join('; ')}; the listener answers 500`);
  }
  return out;
}

/**
 * A listener the data plane cannot serve (a frontend or PreRouting policy field it refuses) is
 * Programmed False, and so is its Gateway (or ListenerSet), naming the listener and the fields.
 */
export function markUnservedListeners(
  gatewayApi: GatewayApiResult,
  configs: ReadonlyMap<string, DataPlaneConfig>,
): void {
  for (const [gateway, config] of configs) {
    const unserved = unservedListeners(config);
    if (unserved.size === 0) continue;
    markListenersNotProgrammed(gatewayApi, gateway, 'Invalid', (listener) =>
      unserved.get(`${listener.name}|${listener.port}`),
    );
  }
}
