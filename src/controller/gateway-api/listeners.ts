// Listeners: for each Gateway of a gw class, its own listeners plus those of the ListenerSets it
// allows, each evaluated (protocol, route kinds, certificates) and checked for conflicts across
// the merged list; then the Gateway, listener and ListenerSet statuses.
import type { GatewaySpec, GatewayStatus } from '../../api/kinds/gateway-api/gateway.ts';
import type { ListenerSetSpec, ListenerSetStatus } from '../../api/kinds/gateway-api/listener-set.ts';
import type {
  Condition,
  Listener,
  ListenerStatus,
  RouteGroupKind,
  SecretObjectReference,
} from '../../api/kinds/gateway-api/shared.ts';
import type { KubeObject } from '../../api/validate/admission.ts';
import { objectKey } from '../../store/store.ts';
import { byCreationThenKey } from '../ordering.ts';
import { missingReferenceGrant } from '../reference-grants.ts';
import type { Snapshot } from '../snapshot.ts';
import { type ConditionContext, condition, contextOf, sortConditions } from './conditions.ts';
import { gwClassOf } from './gateway-classes.ts';
import { namespaceAllowed } from './selectors.ts';
import { type EffectiveListener, type EffectiveTLS, GATEWAY_GROUP } from './types.ts';

const SUPPORTED_PROTOCOLS = new Set(['HTTP', 'HTTPS']);
const HTTP_ROUTE_KIND: RouteGroupKind = { group: GATEWAY_GROUP, kind: 'HTTPRoute' };

interface Outcome {
  ok: boolean;
  reason: string;
  message: string;
}

export interface ListenerState {
  listener: EffectiveListener;
  owner: KubeObject;
  protocolSupported: boolean;
  conflict?: Outcome;
  /** Every certificateRef resolves (and an HTTPS listener has one). */
  certificatesResolved: boolean;
  resolvedRefs: Outcome;
}

export type ListenerSetOutcome = 'Accepted' | 'NotAllowed' | 'ParentNotAccepted' | 'ListenersNotValid';

export interface ListenerSetState {
  key: string;
  listenerSet: KubeObject;
  gatewayKey: string;
  outcome: ListenerSetOutcome;
  /** Its listeners; empty when it is not merged into the Gateway (NotAllowed, ParentNotAccepted). */
  listeners: ListenerState[];
}

export interface GatewayState {
  key: string;
  gateway: KubeObject;
  /** At least one of the Gateway's own listeners is accepted. */
  accepted: boolean;
  /** The merged listeners in precedence order: the Gateway's, then its ListenerSets'. */
  listeners: ListenerState[];
  listenerSets: ListenerSetState[];
}

function listenerAccepted(state: ListenerState): boolean {
  return state.protocolSupported && state.conflict === undefined;
}

function sameGroupKind(a: RouteGroupKind, b: RouteGroupKind): boolean {
  return (a.group ?? GATEWAY_GROUP) === b.group && a.kind === b.kind;
}

function secretHasKey(secret: KubeObject, key: string): boolean {
  const data = secret.data as Record<string, unknown> | undefined;
  const stringData = secret.stringData as Record<string, unknown> | undefined;
  return (
    (data !== undefined && Object.hasOwn(data, key)) || (stringData !== undefined && Object.hasOwn(stringData, key))
  );
}

/**
 * A problem with one certificateRef of a listener of `owner` (a Gateway or ListenerSet), or
 * undefined when it resolves to a usable TLS Secret. A Secret in another namespace needs a
 * ReferenceGrant there from the owner's kind and namespace.
 */
function certificateProblem(snapshot: Snapshot, ref: SecretObjectReference, owner: KubeObject): Outcome | undefined {
  const ownerNamespace = owner.metadata.namespace ?? '';
  const namespace = ref.namespace ?? ownerNamespace;
  const what = `certificateRef ${namespace}/${ref.name}`;
  if ((ref.group ?? '') !== '' || (ref.kind ?? 'Secret') !== 'Secret') {
    return {
      ok: false,
      reason: 'InvalidCertificateRef',
      message: `${what}: only core Secrets are supported, not ${ref.group || 'core'}/${ref.kind}`,
    };
  }
  const refused = missingReferenceGrant(snapshot, {
    from: { group: GATEWAY_GROUP, kind: owner.kind, namespace: ownerNamespace },
    to: { group: '', kind: 'Secret', namespace, name: ref.name },
  });
  if (refused) return { ok: false, reason: 'RefNotPermitted', message: `${what}: ${refused}` };
  const secret = snapshot.secrets.get(`${namespace}/${ref.name}`);
  if (!secret) return { ok: false, reason: 'InvalidCertificateRef', message: `${what}: Secret not found` };
  if (!secretHasKey(secret, 'tls.crt') || !secretHasKey(secret, 'tls.key')) {
    return { ok: false, reason: 'InvalidCertificateRef', message: `${what}: Secret has no tls.crt and tls.key` };
  }
  return undefined;
}

/** Evaluates one listener on its own: protocol, route kinds and certificates. */
function evaluateListener(snapshot: Snapshot, spec: Listener, owner: KubeObject): ListenerState {
  const ownerNamespace = owner.metadata.namespace ?? '';
  const protocolSupported = SUPPORTED_PROTOCOLS.has(spec.protocol);
  const problems: Outcome[] = [];

  let tls: EffectiveTLS | undefined;
  // Certificate problems come first: they decide the ResolvedRefs reason, as they stop serving.
  if (spec.tls) {
    const certificateRefs = spec.tls.certificateRefs ?? [];
    for (const ref of certificateRefs) {
      const problem = certificateProblem(snapshot, ref, owner);
      if (problem) problems.push(problem);
    }
    tls = {
      mode: spec.tls.mode ?? 'Terminate',
      certificateRefs: certificateRefs.map((ref) => ({ namespace: ref.namespace ?? ownerNamespace, name: ref.name })),
    };
    if (spec.tls.options) tls.options = { ...spec.tls.options };
  }
  if (spec.protocol === 'HTTPS' && (tls?.certificateRefs.length ?? 0) === 0) {
    problems.push({
      ok: false,
      reason: 'InvalidCertificateRef',
      message: 'an HTTPS listener needs tls.certificateRefs',
    });
  }

  const certificatesResolved = problems.length === 0;

  // Route kinds: HTTPRoute is the only kind gw serves, on HTTP and HTTPS listeners.
  const supportedKinds: RouteGroupKind[] = [];
  const requested = spec.allowedRoutes?.kinds;
  if (requested === undefined || requested.length === 0) {
    if (protocolSupported) supportedKinds.push({ ...HTTP_ROUTE_KIND });
  } else {
    const invalid: string[] = [];
    for (const kind of requested) {
      if (protocolSupported && sameGroupKind(kind, HTTP_ROUTE_KIND)) {
        if (!supportedKinds.some((k) => sameGroupKind(k, HTTP_ROUTE_KIND))) supportedKinds.push({ ...HTTP_ROUTE_KIND });
      } else {
        invalid.push(`${kind.group ?? GATEWAY_GROUP}/${kind.kind}`);
      }
    }
    if (invalid.length > 0) {
      problems.push({
        ok: false,
        reason: 'InvalidRouteKinds',
        message: `route kinds not supported with protocol ${spec.protocol}: ${invalid.join(', ')}`,
      });
    }
  }

  const resolvedRefs: Outcome =
    problems.length === 0
      ? { ok: true, reason: 'ResolvedRefs', message: 'All references resolved' }
      : { ok: false, reason: problems[0]!.reason, message: problems.map((p) => p.message).join('; ') };

  const listener: EffectiveListener = {
    name: spec.name,
    source: {
      kind: owner.kind === 'ListenerSet' ? 'ListenerSet' : 'Gateway',
      namespace: ownerNamespace,
      name: owner.metadata.name ?? '',
    },
    port: spec.port,
    protocol: spec.protocol,
    ...(spec.hostname !== undefined ? { hostname: spec.hostname } : {}),
    ...(tls ? { tls } : {}),
    allowedRoutes: structuredClone(spec.allowedRoutes ?? { namespaces: { from: 'Same' } }),
    supportedKinds,
    programmed: false,
    routes: [],
  };
  return { listener, owner, protocolSupported, certificatesResolved, resolvedRefs };
}

/**
 * Marks conflicts in precedence order: a listener conflicts with an earlier accepted listener on
 * the same port that uses another protocol (ProtocolConflict) or the same protocol and the same
 * hostname (HostnameConflict); the earlier one keeps the port. Listeners of unsupported
 * protocols are never programmed, so they claim no port.
 */
function markConflicts(states: ListenerState[]): void {
  const winners: ListenerState[] = [];
  for (const state of states) {
    if (!state.protocolSupported) continue;
    const { port, protocol, hostname } = state.listener;
    const samePort = winners.filter((w) => w.listener.port === port);
    const protocolClash = samePort.find((w) => w.listener.protocol !== protocol);
    const hostnameClash = samePort.find((w) => w.listener.protocol === protocol && w.listener.hostname === hostname);
    const clash = protocolClash ?? hostnameClash;
    if (clash === undefined) {
      winners.push(state);
      continue;
    }
    const other =
      clash.listener.source.kind === state.listener.source.kind &&
      clash.listener.source.namespace === state.listener.source.namespace &&
      clash.listener.source.name === state.listener.source.name
        ? `listener ${clash.listener.name}`
        : `a listener of higher precedence on the Gateway`;
    state.conflict = protocolClash
      ? {
          ok: false,
          reason: 'ProtocolConflict',
          message: `port ${port} is already used with protocol ${clash.listener.protocol} by ${other}`,
        }
      : {
          ok: false,
          reason: 'HostnameConflict',
          message: `port ${port} and hostname ${hostname ?? '(any)'} are already used by ${other}`,
        };
  }
}

function programmedOf(state: ListenerState): boolean {
  return listenerAccepted(state) && state.certificatesResolved && state.listener.supportedKinds.length > 0;
}

/** The gw Gateway a ListenerSet names as its parent, by key, or undefined. */
function parentGatewayKey(listenerSet: KubeObject): string | undefined {
  const ref = (listenerSet.spec as ListenerSetSpec).parentRef;
  if ((ref.group ?? GATEWAY_GROUP) !== GATEWAY_GROUP || (ref.kind ?? 'Gateway') !== 'Gateway') return undefined;
  return `${ref.namespace ?? listenerSet.metadata.namespace}/${ref.name}`;
}

/** Evaluates every gw Gateway and the ListenerSets that name one as parent. */
export function evaluateGateways(snapshot: Snapshot, scope?: ReadonlySet<string>): Map<string, GatewayState> {
  const states = new Map<string, GatewayState>();
  for (const key of [...(scope ?? snapshot.gateways.keys())].sort()) {
    const gateway = snapshot.gateways.get(key);
    if (!gateway) continue;
    if (!gwClassOf(snapshot, gateway)) continue;
    const spec = gateway.spec as GatewaySpec;
    const own = spec.listeners.map((listener) => evaluateListener(snapshot, listener, gateway));
    markConflicts(own);
    states.set(key, {
      key,
      gateway,
      accepted: own.some(listenerAccepted),
      listeners: own,
      listenerSets: [],
    });
  }

  const listenerSets = [...snapshot.listenerSets.values()].sort(byCreationThenKey);
  for (const listenerSet of listenerSets) {
    const gatewayKey = parentGatewayKey(listenerSet);
    const state = gatewayKey === undefined ? undefined : states.get(gatewayKey);
    if (!state) continue;
    const namespace = listenerSet.metadata.namespace ?? '';
    const allowedListeners = (state.gateway.spec as GatewaySpec).allowedListeners?.namespaces;
    const allowed = namespaceAllowed(
      snapshot,
      allowedListeners,
      'None',
      state.gateway.metadata.namespace ?? '',
      namespace,
    );
    const setState: ListenerSetState = {
      key: objectKey(listenerSet),
      listenerSet,
      gatewayKey: state.key,
      outcome: allowed ? (state.accepted ? 'Accepted' : 'ParentNotAccepted') : 'NotAllowed',
      listeners: [],
    };
    if (setState.outcome === 'Accepted') {
      setState.listeners = (listenerSet.spec as ListenerSetSpec).listeners.map((listener) =>
        evaluateListener(snapshot, listener, listenerSet),
      );
      state.listeners.push(...setState.listeners);
    }
    state.listenerSets.push(setState);
  }

  for (const state of states.values()) {
    // Conflicts are judged on the merged list; the Gateway's own listeners come first, so
    // adding ListenerSets never changes the outcome of the Gateway's listeners.
    for (const listener of state.listeners) listener.conflict = undefined;
    markConflicts(state.listeners);
    for (const listener of state.listeners) listener.listener.programmed = programmedOf(listener);
    for (const setState of state.listenerSets) {
      if (setState.outcome === 'Accepted' && !setState.listeners.some(listenerAccepted)) {
        setState.outcome = 'ListenersNotValid';
      }
    }
  }
  return states;
}

// --- status -----------------------------------------------------------------------------------------

function listenerStatus(state: ListenerState, context: ConditionContext): ListenerStatus {
  const conditions: Condition[] = [];
  const { conflict } = state;
  if (conflict) {
    conditions.push(condition(context, 'Accepted', false, 'PortUnavailable', conflict.message));
    conditions.push(condition(context, 'Conflicted', true, conflict.reason, conflict.message));
  } else {
    conditions.push(
      state.protocolSupported
        ? condition(context, 'Accepted', true, 'Accepted', 'Listener accepted')
        : condition(
            context,
            'Accepted',
            false,
            'UnsupportedProtocol',
            `protocol ${state.listener.protocol} is not supported; gw serves HTTP and HTTPS`,
          ),
    );
    conditions.push(condition(context, 'Conflicted', false, 'NoConflicts', 'No conflicts'));
  }
  conditions.push(
    condition(context, 'ResolvedRefs', state.resolvedRefs.ok, state.resolvedRefs.reason, state.resolvedRefs.message),
  );
  if (state.listener.programmed) {
    conditions.push(condition(context, 'Programmed', true, 'Programmed', 'Listener programmed'));
  } else {
    const reason = conflict ? 'PortUnavailable' : 'Invalid';
    const message = conflict
      ? conflict.message
      : !state.protocolSupported
        ? 'unsupported protocol'
        : state.listener.supportedKinds.length === 0
          ? 'no supported route kinds'
          : state.resolvedRefs.message;
    conditions.push(condition(context, 'Programmed', false, reason, message));
  }
  return {
    name: state.listener.name,
    supportedKinds: state.listener.supportedKinds.map((kind) => ({ ...kind })),
    attachedRoutes: state.listener.routes.length,
    conditions: sortConditions(conditions),
  };
}

export function gatewayStatus(state: GatewayState, now: string): GatewayStatus {
  const context = contextOf(state.gateway, now);
  const own = state.listeners.filter((l) => l.owner === state.gateway);
  const invalid = own.filter((l) => !listenerAccepted(l)).map((l) => l.listener.name);
  const conditions: Condition[] = [];
  if (!state.accepted) {
    conditions.push(condition(context, 'Accepted', false, 'ListenersNotValid', 'No listener is valid'));
  } else if (invalid.length > 0) {
    conditions.push(
      condition(context, 'Accepted', true, 'ListenersNotValid', `Listeners not valid: ${invalid.join(', ')}`),
    );
  } else {
    conditions.push(condition(context, 'Accepted', true, 'Accepted', 'Gateway accepted'));
  }
  conditions.push(
    state.listeners.some((l) => l.listener.programmed)
      ? condition(context, 'Programmed', true, 'Programmed', 'Gateway programmed')
      : condition(context, 'Programmed', false, 'Invalid', 'No listener can be programmed'),
  );
  return {
    conditions: sortConditions(conditions),
    listeners: own.map((l) => listenerStatus(l, context)),
    attachedListenerSets: state.listenerSets.filter((s) => s.outcome === 'Accepted').length,
  };
}

const LISTENER_SET_MESSAGES: Record<ListenerSetOutcome, string> = {
  Accepted: 'ListenerSet accepted',
  NotAllowed: "the parent Gateway's allowedListeners does not admit this namespace",
  ParentNotAccepted: 'the parent Gateway is not accepted',
  ListenersNotValid: 'no listener of the ListenerSet is valid',
};

export function listenerSetStatus(state: ListenerSetState, now: string): ListenerSetStatus {
  const context = contextOf(state.listenerSet, now);
  const message = LISTENER_SET_MESSAGES[state.outcome];
  const conditions: Condition[] = [];
  if (state.outcome === 'Accepted') {
    conditions.push(condition(context, 'Accepted', true, 'Accepted', message));
    conditions.push(
      state.listeners.some((l) => l.listener.programmed)
        ? condition(context, 'Programmed', true, 'Programmed', 'ListenerSet programmed')
        : condition(context, 'Programmed', false, 'Invalid', 'No listener can be programmed'),
    );
  } else {
    conditions.push(condition(context, 'Accepted', false, state.outcome, message));
    conditions.push(condition(context, 'Programmed', false, state.outcome, message));
  }
  const status: ListenerSetStatus = { conditions: sortConditions(conditions) };
  if (state.listeners.length > 0) status.listeners = state.listeners.map((l) => listenerStatus(l, context));
  return status;
}
