// The effective frontend, traffic and backend policy at an attachment point — a route (or one
// rule of it) on each listener it is attached to, or a backend (or one section of it) by itself
// and from every route rule that sends it traffic — field by field: its value, the object that
// set it, the ones it overrode, whether the data plane refuses it there (docs/enforcement.md) and
// a backend authentication whose Secret lacks what it reads. gw explain prints it
// (src/cli/explain.ts); the web UI's Routes & backends page shows it (src/admin/ui/api/).
import type { ServiceSpec } from '../../api/kinds/core/service.ts';
import type { HTTPRouteSpec } from '../../api/kinds/gateway-api/http-route.ts';
import type { GwBackendSpec } from '../../api/kinds/gw-backend.ts';
import type { BackendObjectConfig } from '../../contract/dataplane-config.ts';
import { backendPlace, sectionPlace, trafficPlaces } from '../../contract/enforcement/consumers.ts';
import type { PlaceName } from '../../contract/enforcement/places.ts';
import { refusalsIn } from '../../contract/enforcement/walk.ts';
import type { EffectiveListener, RouteRule } from '../gateway-api/types.ts';
import { backendAuthSecretProblems } from '../secret-contents.ts';
import type { Snapshot } from '../snapshot.ts';
import { type AttachmentPoint, backendTargetKeys, effectivePolicy, indexPolicies } from './attachments.ts';
import { type EffectiveSection, mergeSection, type Provenance } from './merge.ts';

export interface ExplainedField {
  field: string;
  value: unknown;
  setBy: Provenance;
  overrides: Provenance[];
  /** Why the data plane refuses it at this place ("path: reason"); the traffic it covers is answered 500. */
  refused: { path: string; reason: string }[];
  /** A backend authentication whose Secret lacks what it reads (InvalidCredentialRef). */
  unresolved: string[];
}

export interface ExplainedSection {
  title: string;
  /** Which policy section it is: the GwPolicy section its fields are of. */
  policy: 'frontend' | 'traffic' | 'backend';
  fields: ExplainedField[];
}

/** A route on one listener it is attached to. */
export interface RoutePlacement {
  heading: string;
  gateway: string;
  listener: string;
  port: number;
  sections: ExplainedSection[];
}

export type Explanation =
  | { what: 'route'; key: string; placements: RoutePlacement[] }
  | { what: 'backend'; key: string; sections: ExplainedSection[] }
  | { problem: string };

export interface ExplainTarget {
  namespace: string;
  name: string;
  /** A route's rule name, a GwBackend's target, a Service's port. */
  section?: string;
}

/**
 * A section field by field: its value, who set it and whom it overrode — and, for a field the data
 * plane refuses at `places`, that it is refused and why.
 */
function explainSection(
  title: string,
  policy: ExplainedSection['policy'],
  section: EffectiveSection,
  places: readonly PlaceName[],
  /** For a backend section: the backend's namespace, whose Secrets the data plane reads. */
  secrets?: { namespace: string; snapshot: Snapshot },
): ExplainedSection {
  const fields = Object.keys(section)
    .sort()
    .map((field): ExplainedField => {
      const effective = section[field]!;
      const refused = new Map<string, { path: string; reason: string }>();
      for (const place of places)
        for (const refusal of refusalsIn(place, { [field]: effective.value }))
          refused.set(`${refusal.path}\n${refusal.reason}`, { path: refusal.path, reason: refusal.reason });
      const unresolved =
        field === 'auth' && secrets !== undefined
          ? backendAuthSecretProblems(effective.value, 'auth', secrets.namespace, secrets.snapshot)
          : [];
      return {
        field,
        value: effective.value,
        setBy: effective.from,
        overrides: effective.overridden,
        refused: [...refused.values()],
        unresolved,
      };
    });
  return { title, policy, fields };
}

/** A backend as the configuration has it, from the snapshot (undefined when missing). */
function backendObject(snapshot: Snapshot, kind: string, key: string): BackendObjectConfig | undefined {
  if (kind === 'GwBackend') {
    const object = snapshot.backends.get(key);
    return object && { kind: 'GwBackend', spec: object.spec as GwBackendSpec };
  }
  const service = snapshot.services.get(key);
  return service && { kind: 'Service', spec: service.spec as ServiceSpec };
}

/** The places a route's traffic policy is checked at: one per kind of backend its rules serve. */
function routeTrafficPlaces(snapshot: Snapshot, rules: readonly RouteRule[]): PlaceName[] {
  const places = new Set<PlaceName>();
  for (const rule of rules) {
    const backends: Record<string, BackendObjectConfig> = {};
    const refs = rule.backendRefs.filter((ref) => ref.kind === 'Service' || ref.kind === 'GwBackend');
    for (const ref of refs) {
      const key = `${ref.kind} ${ref.namespace}/${ref.name}`;
      const object = backendObject(snapshot, ref.kind, `${ref.namespace}/${ref.name}`);
      if (object) backends[key] = object;
    }
    const serves = rule.backendRefs.some((ref) => ref.kind === 'GwModel') ? { keys: [], policy: {} } : undefined;
    const config = {
      matches: [],
      traffic: {},
      backendRefs: refs.map((ref) => ({ backend: `${ref.kind} ${ref.namespace}/${ref.name}`, weight: 1, policy: {} })),
      ...(serves && { models: serves }),
    };
    for (const place of trafficPlaces(config, backends)) places.add(place);
  }
  return [...places];
}

/** The objects explained: a snapshot, the effective listeners of its translation, and where they are (for messages). */
export interface ExplainWorld {
  snapshot: Snapshot;
  listeners: ReadonlyMap<string, readonly EffectiveListener[]>;
  /** "in the given files", "at https://...": completes "HTTPRoute ns/name is not ...". */
  where: string;
}

/** The effective policy at a route (or rule) or a backend (or section), or why there is none. */
export function explain(world: ExplainWorld, what: 'route' | 'backend', target: ExplainTarget): Explanation {
  return what === 'route' ? explainRoute(world, target) : explainBackend(world, target);
}

/** The effective policy of a route (or one rule) on every gw listener it is attached to. */
function explainRoute({ snapshot, listeners, where }: ExplainWorld, target: ExplainTarget): Explanation {
  const index = indexPolicies(snapshot);
  const key = `${target.namespace}/${target.name}`;
  const route = snapshot.httpRoutes.get(key);
  if (!route) return { problem: `HTTPRoute ${key} is not ${where}` };
  const rules = (route.spec as HTTPRouteSpec).rules ?? [];
  if (target.section !== undefined && !rules.some((r) => r.name === target.section))
    return { problem: `HTTPRoute ${key} has no rule named "${target.section}"` };
  const placements: RoutePlacement[] = [];
  for (const [gateway, gatewayListeners] of listeners) {
    for (const listener of gatewayListeners) {
      const attached = listener.routes.find((r) => `${r.namespace}/${r.name}` === key);
      if (!attached) continue;
      const routePoint = { namespace: target.namespace, name: target.name, rule: target.section };
      const point: AttachmentPoint = { gateway, listener, route: routePoint };
      const effective = effectivePolicy(index, point);
      const explained = attached.rules.filter((rule) => target.section === undefined || rule.name === target.section);
      const sections = [
        explainSection('frontend', 'frontend', effective.frontend, ['frontend']),
        explainSection('traffic', 'traffic', effective.traffic, routeTrafficPlaces(snapshot, explained)),
      ];
      for (const rule of explained) {
        for (const ref of rule.backendRefs) {
          if (ref.kind !== 'Service' && ref.kind !== 'GwBackend') continue;
          const backendPoint: AttachmentPoint = {
            ...point,
            route: { ...routePoint, rule: rule.name },
            backend: { kind: ref.kind, namespace: ref.namespace, name: ref.name, port: ref.port },
          };
          const object = backendObject(snapshot, ref.kind, `${ref.namespace}/${ref.name}`);
          sections.push(
            explainSection(
              `backend ${ref.kind} ${ref.namespace}/${ref.name}`,
              'backend',
              effectivePolicy(index, backendPoint).backend,
              [backendPlace(object)],
              { namespace: ref.namespace, snapshot },
            ),
          );
        }
      }
      placements.push({
        heading: `HTTPRoute ${key}${target.section ? ` rule ${target.section}` : ''} on Gateway ${gateway} listener ${listener.name} (port ${listener.port})`,
        gateway,
        listener: listener.name,
        port: listener.port,
        sections,
      });
    }
  }
  return { what: 'route', key, placements };
}

/** The effective policy of a backend (or one section): its own policies, then from each route rule reaching it. */
function explainBackend({ snapshot, listeners, where }: ExplainWorld, target: ExplainTarget): Explanation {
  const index = indexPolicies(snapshot);
  const key = `${target.namespace}/${target.name}`;
  const kind = snapshot.backends.has(key) ? 'GwBackend' : snapshot.services.has(key) ? 'Service' : undefined;
  if (!kind) return { problem: `no GwBackend or Service ${key} ${where}` };
  const port = kind === 'Service' && target.section !== undefined ? Number(target.section) : undefined;
  const backend = {
    kind,
    namespace: target.namespace,
    name: target.name,
    port,
    section: kind === 'GwBackend' ? target.section : undefined,
  } as const;
  const own = backendTargetKeys(backend);
  const object = backendObject(snapshot, kind, key);
  const places: PlaceName[] = [(target.section !== undefined && sectionPlace(object)) || backendPlace(object)];
  const secrets = { namespace: target.namespace, snapshot };
  const title = `${kind} ${key}${target.section ? ` ${target.section}` : ''}`;
  const sections = [
    explainSection(
      `${title} (its own policies)`,
      'backend',
      mergeSection(
        own.flatMap((k) => index.byTarget.get(k) ?? []),
        'backend',
      ),
      places,
      secrets,
    ),
  ];
  for (const [gateway, gatewayListeners] of listeners) {
    for (const listener of gatewayListeners) {
      for (const route of listener.routes) {
        for (const rule of route.rules) {
          if (
            !rule.backendRefs.some((r) => r.kind === kind && r.namespace === target.namespace && r.name === target.name)
          )
            continue;
          const point: AttachmentPoint = {
            gateway,
            listener,
            route: { namespace: route.namespace, name: route.name, rule: rule.name },
            backend,
          };
          sections.push(
            explainSection(
              `${title} reached from HTTPRoute ${route.namespace}/${route.name}${rule.name ? ` rule ${rule.name}` : ''} on Gateway ${gateway} listener ${listener.name}`,
              'backend',
              effectivePolicy(index, point).backend,
              places,
              secrets,
            ),
          );
        }
      }
    }
  }
  return { what: 'backend', key, sections };
}
