// gw explain -f DIR route NS/NAME[/RULE] | backend NS/NAME[/SECTION]: the effective frontend,
// traffic and backend policy at an attachment point, field by field, each with the object that
// set it and the objects it overrode.
import { parseArgs } from 'node:util';
import type { HTTPRouteSpec } from '../api/kinds/gateway-api/http-route.ts';
import type { EffectiveListener } from '../controller/gateway-api/types.ts';
import {
  type AttachmentPoint,
  backendTargetKeys,
  effectivePolicy,
  indexPolicies,
} from '../controller/policies/attachments.ts';
import { type EffectiveSection, mergeSection, type Provenance } from '../controller/policies/merge.ts';
import { snapshotFromStore } from '../controller/snapshot.ts';
import type { Io } from './io.ts';
import { loadWorld } from './world.ts';

function provenanceText(p: Provenance): string {
  return `${p.source} (${p.level}, on ${p.target})`;
}

function sectionLines(title: string, section: EffectiveSection): string[] {
  const fields = Object.keys(section).sort();
  if (fields.length === 0) return [`${title}: nothing set`];
  const lines = [`${title}:`];
  for (const field of fields) {
    const effective = section[field]!;
    lines.push(`  ${field}: ${JSON.stringify(effective.value)}`);
    lines.push(`    set by ${provenanceText(effective.from)}`);
    for (const overridden of effective.overridden) lines.push(`    overrides ${provenanceText(overridden)}`);
  }
  return lines;
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

export function explainCommand(args: string[], io: Io): number {
  let parsed: { values: { filename?: string[]; recursive?: boolean }; positionals: string[] };
  try {
    parsed = parseArgs({
      args,
      options: { filename: { type: 'string', short: 'f', multiple: true }, recursive: { type: 'boolean', short: 'R' } },
      allowPositionals: true,
    });
  } catch (error) {
    io.stderr(`gw explain: ${(error as Error).message}\n`);
    return 2;
  }
  const [what, targetText] = parsed.positionals;
  const target = parseTarget(targetText);
  if (!parsed.values.filename?.length || (what !== 'route' && what !== 'backend') || !target) {
    io.stderr('usage: gw explain -f FILE|DIR route NAMESPACE/NAME[/RULE] | backend NAMESPACE/NAME[/SECTION]\n');
    return 2;
  }
  const world = loadWorld(parsed.values.filename, parsed.values.recursive ?? false);
  for (const problem of world.problems) io.stderr(`${problem.message}\n`);
  const snapshot = snapshotFromStore(world.store);
  const index = indexPolicies(snapshot);
  const listeners = world.report.gatewayApi.listeners;
  const out: string[] = [];

  if (what === 'route') {
    const key = `${target.namespace}/${target.name}`;
    const route = snapshot.httpRoutes.get(key);
    if (!route) {
      io.stderr(`gw explain: HTTPRoute ${key} is not in the given files\n`);
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
      out.push(
        `HTTPRoute ${key}${target.section ? ` rule ${target.section}` : ''} on Gateway ${gateway} listener ${listener.name} (port ${listener.port})`,
        ...sectionLines('frontend', effective.frontend),
        ...sectionLines('traffic', effective.traffic),
      );
      const attached = listener.routes.find((r) => `${r.namespace}/${r.name}` === key)!;
      for (const rule of attached.rules) {
        if (target.section !== undefined && rule.name !== target.section) continue;
        for (const ref of rule.backendRefs) {
          if (ref.kind !== 'Service' && ref.kind !== 'GwBackend') continue;
          const backendPoint: AttachmentPoint = {
            ...point,
            route: { ...routePoint, rule: rule.name },
            backend: { kind: ref.kind, namespace: ref.namespace, name: ref.name, port: ref.port },
          };
          out.push(
            ...sectionLines(
              `backend ${ref.kind} ${ref.namespace}/${ref.name}`,
              effectivePolicy(index, backendPoint).backend,
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
      io.stderr(`gw explain: no GwBackend or Service ${key} in the given files\n`);
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
    const title = `${kind} ${key}${target.section ? ` ${target.section}` : ''}`;
    out.push(
      ...sectionLines(
        `${title} (its own policies)`,
        mergeSection(
          own.flatMap((k) => index.byTarget.get(k) ?? []),
          'backend',
        ),
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
