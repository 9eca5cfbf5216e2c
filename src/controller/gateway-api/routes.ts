// HTTPRoute attachment: each parentRef that names a gw Gateway or ListenerSet selects listeners
// (sectionName, port), keeps those that admit the route (namespace, kind) and whose hostnames
// overlap the route's, attaches the route there and reports the outcome in the route's status.
import type {
  HTTPRouteMatch,
  HTTPRouteRule,
  HTTPRouteSpec,
  HTTPRouteStatus,
} from '../../api/kinds/gateway-api/http-route.ts';
import type { Condition, ParentReference, RouteParentStatus } from '../../api/kinds/gateway-api/shared.ts';
import type { KubeObject } from '../../api/validate/admission.ts';
import type { RouteMatch } from '../../contract/dataplane-config.ts';
import { effectiveHostnames } from '../../contract/hostnames.ts';
import { objectKey } from '../../store/store.ts';
import { byCreationThenKey } from '../ordering.ts';
import type { Snapshot } from '../snapshot.ts';
import { resolveBackendRef } from './backend-refs.ts';
import { type ConditionContext, condition, contextOf, sortConditions } from './conditions.ts';
import type { GatewayState, ListenerSetState, ListenerState } from './listeners.ts';
import { namespaceAllowed } from './selectors.ts';
import { CONTROLLER_NAME, GATEWAY_GROUP, type RouteRule } from './types.ts';

interface Outcome {
  ok: boolean;
  reason: string;
  message: string;
}

function normaliseMatch(match: HTTPRouteMatch): RouteMatch {
  const result: RouteMatch = {
    path: { type: match.path?.type ?? 'PathPrefix', value: match.path?.value ?? '/' },
  };
  if (match.headers && match.headers.length > 0) {
    result.headers = match.headers.map((h) => ({ type: h.type ?? 'Exact', name: h.name, value: h.value }));
  }
  if (match.queryParams && match.queryParams.length > 0) {
    result.queryParams = match.queryParams.map((q) => ({ type: q.type ?? 'Exact', name: q.name, value: q.value }));
  }
  if (match.method !== undefined) result.method = match.method;
  return result;
}

/** The route's rules with defaults filled and backendRefs resolved, plus its ResolvedRefs outcome. */
function translateRules(snapshot: Snapshot, route: KubeObject): { rules: RouteRule[]; resolvedRefs: Outcome } {
  const namespace = route.metadata.namespace ?? '';
  const specRules: HTTPRouteRule[] = (route.spec as HTTPRouteSpec).rules ?? [{}];
  const problems: Outcome[] = [];
  const rules = specRules.map((specRule) => {
    const matches = specRule.matches && specRule.matches.length > 0 ? specRule.matches : [{}];
    const rule: RouteRule = {
      ...(specRule.name !== undefined ? { name: specRule.name } : {}),
      matches: matches.map(normaliseMatch),
      ...(specRule.filters && specRule.filters.length > 0 ? { filters: structuredClone(specRule.filters) } : {}),
      backendRefs: [],
    };
    for (const backendRef of specRule.backendRefs ?? []) {
      const result = resolveBackendRef(snapshot, backendRef, namespace);
      rule.backendRefs.push(result.ref);
      if (result.ref.problem) problems.push({ ok: false, reason: result.ref.problem, message: result.message ?? '' });
    }
    if (specRule.timeouts) rule.timeouts = { ...specRule.timeouts };
    return rule;
  });
  const resolvedRefs: Outcome =
    problems.length === 0
      ? { ok: true, reason: 'ResolvedRefs', message: 'All references resolved' }
      : { ok: false, reason: problems[0]!.reason, message: problems.map((p) => p.message).join('; ') };
  return { rules, resolvedRefs };
}

/** What a parentRef points at among gw's objects, or undefined when it is not gw's to answer. */
type ParentTarget =
  | { kind: 'Gateway'; listeners: ListenerState[] }
  | { kind: 'ListenerSet'; set: ListenerSetState; listeners: ListenerState[] };

function findParent(
  ref: ParentReference,
  routeNamespace: string,
  gateways: Map<string, GatewayState>,
  listenerSets: Map<string, ListenerSetState>,
): ParentTarget | undefined {
  if ((ref.group ?? GATEWAY_GROUP) !== GATEWAY_GROUP) return undefined;
  const key = `${ref.namespace ?? routeNamespace}/${ref.name}`;
  const kind = ref.kind ?? 'Gateway';
  if (kind === 'Gateway') {
    const state = gateways.get(key);
    // A route attaches to the Gateway's own listeners only, never to those of its ListenerSets.
    return state ? { kind, listeners: state.listeners.filter((l) => l.owner === state.gateway) } : undefined;
  }
  if (kind === 'ListenerSet') {
    const set = listenerSets.get(key);
    return set ? { kind, set, listeners: set.listeners } : undefined;
  }
  return undefined;
}

function parentRefOf(ref: ParentReference): ParentReference {
  const result: ParentReference = { group: ref.group ?? GATEWAY_GROUP, kind: ref.kind ?? 'Gateway', name: ref.name };
  if (ref.namespace !== undefined) result.namespace = ref.namespace;
  if (ref.sectionName !== undefined) result.sectionName = ref.sectionName;
  if (ref.port !== undefined) result.port = ref.port;
  return result;
}

function selection(ref: ParentReference): string {
  const parts: string[] = [];
  if (ref.sectionName !== undefined) parts.push(`named ${ref.sectionName}`);
  if (ref.port !== undefined) parts.push(`on port ${ref.port}`);
  return parts.join(' and ');
}

/**
 * Attaches one route through one parentRef: returns the Accepted outcome and, when accepted, the
 * listeners with the route's effective hostnames on each.
 */
function attach(
  snapshot: Snapshot,
  route: KubeObject,
  ref: ParentReference,
  target: ParentTarget,
): { accepted: Outcome; attachments: [ListenerState, string[]][] } {
  const namespace = route.metadata.namespace ?? '';
  const parentName = `${target.kind} ${ref.namespace ?? namespace}/${ref.name}`;
  if (target.kind === 'ListenerSet' && target.listeners.length === 0) {
    return {
      accepted: { ok: false, reason: 'NoMatchingParent', message: `${parentName} is not attached to its Gateway` },
      attachments: [],
    };
  }
  const relevant = target.listeners.filter(
    (l) =>
      (ref.sectionName === undefined || l.listener.name === ref.sectionName) &&
      (ref.port === undefined || l.listener.port === ref.port),
  );
  if (relevant.length === 0) {
    return {
      accepted: { ok: false, reason: 'NoMatchingParent', message: `${parentName} has no listener ${selection(ref)}` },
      attachments: [],
    };
  }
  const kindAllowed = relevant.filter((l) =>
    l.listener.supportedKinds.some((k) => k.group === GATEWAY_GROUP && k.kind === 'HTTPRoute'),
  );
  const allowed = kindAllowed.filter((l) =>
    namespaceAllowed(snapshot, l.listener.allowedRoutes.namespaces, 'Same', l.listener.source.namespace, namespace),
  );
  if (allowed.length === 0) {
    const message =
      kindAllowed.length === 0
        ? `no selected listener of ${parentName} accepts HTTPRoutes`
        : `no selected listener of ${parentName} accepts routes from namespace ${namespace}`;
    return { accepted: { ok: false, reason: 'NotAllowedByListeners', message }, attachments: [] };
  }
  const routeHostnames = (route.spec as HTTPRouteSpec).hostnames ?? [];
  const attachments: [ListenerState, string[]][] = [];
  for (const listener of allowed) {
    const hostnames = effectiveHostnames(listener.listener.hostname, routeHostnames);
    if (hostnames !== undefined) attachments.push([listener, hostnames]);
  }
  if (attachments.length === 0) {
    return {
      accepted: {
        ok: false,
        reason: 'NoMatchingListenerHostname',
        message: `no selected listener of ${parentName} has a hostname that matches the route's hostnames`,
      },
      attachments,
    };
  }
  return { accepted: { ok: true, reason: 'Accepted', message: 'Route accepted' }, attachments };
}

function parentStatus(ref: ParentReference, context: ConditionContext, accepted: Outcome, resolved: Outcome) {
  const conditions: Condition[] = [
    condition(context, 'Accepted', accepted.ok, accepted.reason, accepted.message),
    condition(context, 'ResolvedRefs', resolved.ok, resolved.reason, resolved.message),
  ];
  const status: RouteParentStatus = {
    parentRef: parentRefOf(ref),
    controllerName: CONTROLLER_NAME,
    conditions: sortConditions(conditions),
  };
  return status;
}

/**
 * Attaches every HTTPRoute to the listeners of `gateways` (filling each listener's `routes`, in
 * route precedence: oldest first, then namespace/name) and returns the route statuses by key.
 */
export function attachRoutes(
  snapshot: Snapshot,
  gateways: Map<string, GatewayState>,
  now: string,
): Map<string, HTTPRouteStatus> {
  const listenerSets = new Map<string, ListenerSetState>();
  for (const gateway of gateways.values()) {
    for (const set of gateway.listenerSets) listenerSets.set(set.key, set);
  }
  const statuses = new Map<string, HTTPRouteStatus>();
  // Only routes with a parent among `gateways` (all of them, or a scope) are sorted and attached.
  const candidates = [...snapshot.httpRoutes.values()].filter((route) =>
    ((route.spec as HTTPRouteSpec).parentRefs ?? []).some(
      (ref) => findParent(ref, route.metadata.namespace ?? '', gateways, listenerSets) !== undefined,
    ),
  );
  for (const route of candidates.sort(byCreationThenKey)) {
    const namespace = route.metadata.namespace ?? '';
    const context = contextOf(route, now);
    const parents: RouteParentStatus[] = [];
    let translated: ReturnType<typeof translateRules> | undefined;
    for (const ref of (route.spec as HTTPRouteSpec).parentRefs ?? []) {
      const target = findParent(ref, namespace, gateways, listenerSets);
      if (!target) continue;
      translated ??= translateRules(snapshot, route);
      const { accepted, attachments } = attach(snapshot, route, ref, target);
      for (const [listener, hostnames] of attachments) {
        const existing = listener.listener.routes.find(
          (r) => r.namespace === namespace && r.name === route.metadata.name,
        );
        if (existing) {
          // Attached twice to one listener (two parentRefs selecting it): keep one, with all hostnames.
          for (const hostname of hostnames)
            if (!existing.hostnames.includes(hostname)) existing.hostnames.push(hostname);
          continue;
        }
        listener.listener.routes.push({
          namespace,
          name: route.metadata.name ?? '',
          hostnames,
          // Shared by every listener the route attaches to: translation output is never mutated.
          rules: translated.rules,
        });
      }
      parents.push(parentStatus(ref, context, accepted, translated.resolvedRefs));
    }
    if (parents.length > 0) statuses.set(objectKey(route), { parents });
  }
  return new Map([...statuses.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}
