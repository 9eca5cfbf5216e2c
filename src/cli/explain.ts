// gw explain -f DIR route NS/NAME[/RULE] | backend NS/NAME[/SECTION]: the effective frontend,
// traffic and backend policy at an attachment point, field by field, each with the object that
// set it and the objects it overrode, and a backend authentication whose Secret lacks what it reads.
import { parseArgs } from 'node:util';
import type { ServiceSpec } from '../api/kinds/core/service.ts';
import type { HTTPRouteSpec } from '../api/kinds/gateway-api/http-route.ts';
import type { GwBackendSpec } from '../api/kinds/gw-backend.ts';
import type { BackendObjectConfig } from '../contract/dataplane-config.ts';
import { backendPlace, sectionPlace, trafficPlaces } from '../contract/enforcement/consumers.ts';
import type { PlaceName } from '../contract/enforcement/places.ts';
import { refusalsIn } from '../contract/enforcement/walk.ts';
import type { EffectiveListener, RouteRule } from '../controller/gateway-api/types.ts';
import {
  type AttachmentPoint,
  backendTargetKeys,
  effectivePolicy,
  indexPolicies,
} from '../controller/policies/attachments.ts';
import { type EffectiveSection, mergeSection, type Provenance } from '../controller/policies/merge.ts';
import { backendAuthSecretProblems } from '../controller/secret-contents.ts';
import { type Snapshot, snapshotFromStore } from '../controller/snapshot.ts';
import { argsErrorText } from './args.ts';
import type { Io } from './io.ts';
import { WORLD_OPTIONS, WORLD_USAGE, type World, worldOf } from './world.ts';

function provenanceText(p: Provenance): string {
  return `${p.source} (${p.level}, on ${p.target})`;
}

/**
 * A section field by field: its value, who set it and whom it overrode — and, for a field the data
 * plane refuses at `places` (docs/enforcement.md), that it is refused and why: such a field is not
 * in effect, the traffic it covers is answered 500.
 */
function sectionLines(
  title: string,
  section: EffectiveSection,
  places: readonly PlaceName[],
  /** For a backend section: the backend's namespace, whose Secrets the data plane reads. */
  secrets?: { namespace: string; snapshot: Snapshot },
): string[] {
  const fields = Object.keys(section).sort();
  if (fields.length === 0) return [`${title}: nothing set`];
  const lines = [`${title}:`];
  for (const field of fields) {
    const effective = section[field]!;
    lines.push(`  ${field}: ${JSON.stringify(effective.value)}`);
    lines.push(`    set by ${provenanceText(effective.from)}`);
    for (const overridden of effective.overridden) lines.push(`    overrides ${provenanceText(overridden)}`);
    const refused = new Set<string>();
    for (const place of places)
      for (const refusal of refusalsIn(place, { [field]: effective.value }))
        refused.add(
          `    REFUSED by the data plane (the traffic it covers is answered 500): ${refusal.path}: ${refusal.reason}`,
        );
    lines.push(...refused);
    // A backend authentication whose Secret exists but lacks what it reads: the object's
    // ResolvedRefs says so too (controller/secret-contents.ts).
    if (field === 'auth' && secrets !== undefined) {
      for (const problem of backendAuthSecretProblems(effective.value, 'auth', secrets.namespace, secrets.snapshot))
        lines.push(`    UNRESOLVED (InvalidCredentialRef; the traffic it covers is answered 500): ${problem}`);
    }
  }
  return lines;
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

function parseTarget(text: string | undefined): { namespace: string; name: string; section?: string } | undefined {
  if (!text) return undefined;
  const parts = text.split('/');
  if (parts.length < 2 || parts.length > 3 || parts.some((p) => p === '')) return undefined;
  return { namespace: parts[0]!, name: parts[1]!, section: parts[2] };
}

interface Placement {
  gateway: string;
  listener: EffectiveListener;
}

export const EXPLAIN_USAGE = `usage: gw explain (-f FILE|DIR [-f ...] [-R] | --kubeconfig FILE [--context NAME]) route NAMESPACE/NAME[/RULE]
       gw explain (-f FILE|DIR [-f ...] [-R] | --kubeconfig FILE [--context NAME]) backend NAMESPACE/NAME[/SECTION]
  The effective frontend, traffic and backend policy at a route (or one rule of it) or a backend
  (or one section: a GwBackend's target, a Service's port), field by field: its value, the object
  that set it, what it overrode, and whether the data plane refuses it there; from files, or from
  the objects on an API server (a cluster, or a running gw's).
${WORLD_USAGE}`;

export async function explainCommand(args: string[], io: Io): Promise<number> {
  let parsed: {
    values: { filename?: string[]; recursive?: boolean; kubeconfig?: string; context?: string };
    positionals: string[];
  };
  try {
    parsed = parseArgs({ args, options: WORLD_OPTIONS, allowPositionals: true });
  } catch (error) {
    io.stderr(`gw explain: ${argsErrorText(error, WORLD_OPTIONS)}\n${EXPLAIN_USAGE}`);
    return 2;
  }
  const [what, targetText] = parsed.positionals;
  const target = parseTarget(targetText);
  if ((what !== 'route' && what !== 'backend') || !target) {
    io.stderr(EXPLAIN_USAGE);
    return 2;
  }
  const world = await worldOf(parsed.values);
  if ('error' in world) {
    io.stderr(`gw explain: ${world.error}\n${world.usage ? EXPLAIN_USAGE : ''}`);
    return world.usage ? 2 : 1;
  }
  try {
    return explain(world, what, target, io);
  } finally {
    await world.close();
  }
}

function explain(
  world: World,
  what: 'route' | 'backend',
  target: { namespace: string; name: string; section?: string },
  io: Io,
): number {
  for (const problem of world.problems) io.stderr(`${problem.message}\n`);
  const snapshot = snapshotFromStore(world.store);
  const index = indexPolicies(snapshot);
  const listeners = world.report.gatewayApi.listeners;
  const out: string[] = [];

  if (what === 'route') {
    const key = `${target.namespace}/${target.name}`;
    const route = snapshot.httpRoutes.get(key);
    if (!route) {
      io.stderr(`gw explain: HTTPRoute ${key} is not ${world.where}\n`);
      return 1;
    }
    const rules = (route.spec as HTTPRouteSpec).rules ?? [];
    if (target.section !== undefined && !rules.some((r) => r.name === target.section)) {
      io.stderr(`gw explain: HTTPRoute ${key} has no rule named "${target.section}"\n`);
      return 1;
    }
    const placements: Placement[] = [];
    for (const [gateway, gatewayListeners] of listeners) {
      for (const listener of gatewayListeners) {
        if (listener.routes.some((r) => `${r.namespace}/${r.name}` === key)) placements.push({ gateway, listener });
      }
    }
    if (placements.length === 0) out.push(`HTTPRoute ${key} is not attached to any gw Gateway (see gw status).`);
    for (const { gateway, listener } of placements) {
      const routePoint = { namespace: target.namespace, name: target.name, rule: target.section };
      const point: AttachmentPoint = { gateway, listener, route: routePoint };
      const effective = effectivePolicy(index, point);
      const attached = listener.routes.find((r) => `${r.namespace}/${r.name}` === key)!;
      const explained = attached.rules.filter((rule) => target.section === undefined || rule.name === target.section);
      const routePlaces = routeTrafficPlaces(snapshot, explained);
      out.push(
        `HTTPRoute ${key}${target.section ? ` rule ${target.section}` : ''} on Gateway ${gateway} listener ${listener.name} (port ${listener.port})`,
        ...sectionLines('frontend', effective.frontend, ['frontend']),
        ...sectionLines('traffic', effective.traffic, routePlaces),
      );
      for (const rule of explained) {
        for (const ref of rule.backendRefs) {
          if (ref.kind !== 'Service' && ref.kind !== 'GwBackend') continue;
          const backendPoint: AttachmentPoint = {
            ...point,
            route: { ...routePoint, rule: rule.name },
            backend: { kind: ref.kind, namespace: ref.namespace, name: ref.name, port: ref.port },
          };
          const object = backendObject(snapshot, ref.kind, `${ref.namespace}/${ref.name}`);
          out.push(
            ...sectionLines(
              `backend ${ref.kind} ${ref.namespace}/${ref.name}`,
              effectivePolicy(index, backendPoint).backend,
              [backendPlace(object)],
              { namespace: ref.namespace, snapshot },
            ),
          );
        }
      }
      out.push('');
    }
  } else {
    const key = `${target.namespace}/${target.name}`;
    const kind = snapshot.backends.has(key) ? 'GwBackend' : snapshot.services.has(key) ? 'Service' : undefined;
    if (!kind) {
      io.stderr(`gw explain: no GwBackend or Service ${key} ${world.where}\n`);
      return 1;
    }
    const port = kind === 'Service' && target.section !== undefined ? Number(target.section) : undefined;
    const backend = {
      kind,
      namespace: target.namespace,
      name: target.name,
      port,
      section: kind === 'GwBackend' ? target.section : undefined,
    } as const;
    // The backend's own policies, then the policy on every route rule that sends traffic to it.
    const own = backendTargetKeys(backend);
    const object = backendObject(snapshot, kind, key);
    const places: PlaceName[] = [(target.section !== undefined && sectionPlace(object)) || backendPlace(object)];
    const title = `${kind} ${key}${target.section ? ` ${target.section}` : ''}`;
    out.push(
      ...sectionLines(
        `${title} (its own policies)`,
        mergeSection(
          own.flatMap((k) => index.byTarget.get(k) ?? []),
          'backend',
        ),
        places,
        { namespace: target.namespace, snapshot },
      ),
    );
    for (const [gateway, gatewayListeners] of listeners) {
      for (const listener of gatewayListeners) {
        for (const route of listener.routes) {
          for (const rule of route.rules) {
            if (
              !rule.backendRefs.some(
                (r) => r.kind === kind && r.namespace === target.namespace && r.name === target.name,
              )
            )
              continue;
            const point: AttachmentPoint = {
              gateway,
              listener,
              route: { namespace: route.namespace, name: route.name, rule: rule.name },
              backend,
            };
            out.push(
              '',
              ...sectionLines(
                `${title} reached from HTTPRoute ${route.namespace}/${route.name}${rule.name ? ` rule ${rule.name}` : ''} on Gateway ${gateway} listener ${listener.name}`,
                effectivePolicy(index, point).backend,
                places,
                { namespace: target.namespace, snapshot },
              ),
            );
          }
        }
      }
    }
  }
  io.stdout(`${out.join('\n')}\n`);
  return 0;
}
