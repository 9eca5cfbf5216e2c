// GwModel attachment and status (spec document 1, "GwModel"): each parentRef is checked as the
// spec says — a Gateway or ListenerSet parent attaches to listeners (that admit the model's
// namespace, as they would admit a route's); an HTTPRoute parent (in another namespace only with
// its owner's consent: a ReferenceGrant there) attaches to one rule (sectionName names it; without
// one the route must have exactly one rule) that uses exactly one GwModel backend named "*" and
// only PathPrefix path matches — and the references the model makes (virtual model targets,
// Secrets...) must resolve. A model with any failure is not programmed; every failure is a
// condition with its reason.
import type { RouteParentStatus } from '../../api/kinds/gateway-api/shared.ts';
import type { GwModelSpec, GwModelStatus } from '../../api/kinds/gw-model.ts';
import type { ModelTargetReference } from '../../api/types/model.ts';
import type { KubeObject } from '../../api/validate/admission.ts';
import { type ConditionContext, condition, contextOf, sortConditions } from '../gateway-api/conditions.ts';
import { namespaceAllowed } from '../gateway-api/selectors.ts';
import { CONTROLLER_NAME, GATEWAY_GROUP, type GatewayApiResult, GW_GROUP } from '../gateway-api/types.ts';
import { missingReferenceGrant } from '../reference-grants.ts';
import { missingReferences } from '../references.ts';
import { modelRefusals, refusalText } from '../refusals.ts';
import { INVALID_CREDENTIAL_REF, secretContentProblems } from '../secret-contents.ts';
import type { Snapshot } from '../snapshot.ts';

type ParentRef = GwModelSpec['parentRefs'][number];

interface Outcome {
  ok: boolean;
  reason: string;
  message: string;
}

export interface ModelAttachment {
  /** "namespace/name" of the model. */
  model: string;
  /** Whether every parent and reference checked out: only then is the model programmed. */
  programmed: boolean;
  status: GwModelStatus;
}

const accepted = (message: string): Outcome => ({ ok: true, reason: 'Accepted', message });
const rejected = (reason: string, message: string): Outcome => ({ ok: false, reason, message });

/**
 * The listeners of gw Gateways that come from `kind` namespace/name and match section/port. The
 * model attaches to them only when every one admits the model's namespace by its
 * allowedRoutes.namespaces, as it would admit a route: a Gateway owner decides who may attach.
 */
function listenerParent(
  parent: ParentRef,
  namespace: string,
  modelNamespace: string,
  snapshot: Snapshot,
  gatewayApi: GatewayApiResult,
): Outcome {
  const kind = parent.kind ?? 'Gateway';
  const described = `${kind} ${namespace}/${parent.name}`;
  for (const [gateway, listeners] of gatewayApi.listeners) {
    const candidates = listeners.filter((listener) =>
      kind === 'Gateway'
        ? gateway === `${namespace}/${parent.name}` && listener.source.kind === 'Gateway'
        : listener.source.kind === 'ListenerSet' &&
          listener.source.namespace === namespace &&
          listener.source.name === parent.name,
    );
    if (candidates.length === 0) continue;
    const selected = candidates.filter(
      (listener) =>
        (parent.sectionName === undefined || listener.name === parent.sectionName) &&
        (parent.port === undefined || listener.port === parent.port),
    );
    if (selected.length === 0) {
      return rejected('NoMatchingParent', `${described} has no listener matching sectionName/port`);
    }
    const admits = (listener: (typeof selected)[number]) =>
      namespaceAllowed(snapshot, listener.allowedRoutes.namespaces, 'Same', listener.source.namespace, modelNamespace);
    const refusing = selected.filter((listener) => !admits(listener));
    if (refusing.length > 0) {
      const admitting = selected.filter(admits).map((l) => l.name);
      return rejected(
        'NotAllowedByListeners',
        `${refusing.map((l) => `listener ${l.name}`).join(', ')} of ${described} ${refusing.length === 1 ? 'does' : 'do'} not admit namespace ${modelNamespace} (allowedRoutes.namespaces)` +
          (admitting.length > 0
            ? `; select the listeners that do (${admitting.join(', ')}) with sectionName or port`
            : ''),
      );
    }
    return accepted(`Attached to ${selected.map((l) => `listener ${l.name}`).join(', ')} of ${described}`);
  }
  return rejected('NoMatchingParent', `${described} is not a Gateway or ListenerSet of gw`);
}

/**
 * An HTTPRoute parent in `namespace`. A route of another namespace than the model's is its
 * owner's: the model attaches only with a ReferenceGrant there (checked first, so that a model
 * without consent learns nothing about the route).
 */
function routeParent(
  parent: ParentRef,
  namespace: string,
  modelNamespace: string,
  snapshot: Snapshot,
  gatewayApi: GatewayApiResult,
): Outcome {
  const key = `${namespace}/${parent.name}`;
  const refused = missingReferenceGrant(snapshot, {
    from: { group: GW_GROUP, kind: 'GwModel', namespace: modelNamespace },
    to: { group: GATEWAY_GROUP, kind: 'HTTPRoute', namespace, name: parent.name },
  });
  if (refused) return rejected('RefNotPermitted', `HTTPRoute ${key}: ${refused}`);
  const route = snapshot.httpRoutes.get(key);
  if (!route) return rejected('NoMatchingParent', `HTTPRoute ${key} does not exist`);
  const attached = [...gatewayApi.listeners.values()].some((listeners) =>
    listeners.some((listener) => listener.routes.some((r) => `${r.namespace}/${r.name}` === key)),
  );
  if (!attached) return rejected('NoMatchingParent', `HTTPRoute ${key} is not attached to any gw Gateway`);
  const rules = ((route.spec as { rules?: Record<string, unknown>[] }).rules ?? []) as {
    name?: string;
    matches?: { path?: { type?: string } }[];
    backendRefs?: { group?: string; kind?: string; name?: string }[];
  }[];
  let rule: (typeof rules)[number] | undefined;
  if (parent.sectionName !== undefined) {
    rule = rules.find((r) => r.name === parent.sectionName);
    if (!rule) return rejected('NoMatchingParent', `HTTPRoute ${key} has no rule named "${parent.sectionName}"`);
  } else if (rules.length !== 1) {
    return rejected(
      'UnsupportedValue',
      `HTTPRoute ${key} has ${rules.length} rules; name the rule to attach to with sectionName`,
    );
  } else {
    rule = rules[0]!;
  }
  const ruleName = rule.name ? `rule ${rule.name}` : 'its rule';
  const backendRefs = rule.backendRefs ?? [];
  const modelRefs = backendRefs.filter((ref) => ref.group === GW_GROUP && ref.kind === 'GwModel' && ref.name === '*');
  if (backendRefs.length !== 1 || modelRefs.length !== 1) {
    return rejected(
      'UnsupportedValue',
      `HTTPRoute ${key} ${ruleName} must have exactly one backendRef, to group gw.dev kind GwModel name "*"`,
    );
  }
  if ((rule.matches ?? []).some((match) => (match.path?.type ?? 'PathPrefix') !== 'PathPrefix')) {
    return rejected('UnsupportedValue', `HTTPRoute ${key} ${ruleName} may only use PathPrefix path matches`);
  }
  return accepted(`Attached to HTTPRoute ${key} ${ruleName}`);
}

/** The models a virtual model sends to (by whichever of weighted, failover, conditional it uses). */
export function virtualTargets(spec: GwModelSpec): ModelTargetReference[] {
  const virtual = spec.virtualModel;
  return [
    ...(virtual?.weighted?.targets ?? []),
    ...(virtual?.failover?.targets ?? []),
    ...(virtual?.conditional?.targets ?? []),
  ];
}

/** Problems of the model's own references: virtual model targets, Secrets, Services... */
function referenceProblems(model: KubeObject, snapshot: Snapshot): Outcome {
  const namespace = model.metadata.namespace ?? 'default';
  const spec = model.spec as GwModelSpec;
  const problems: { reason: string; message: string }[] = [];
  for (const target of virtualTargets(spec)) {
    const referenced = snapshot.models.get(`${namespace}/${target.modelRef.name}`);
    if (!referenced) {
      problems.push({
        reason: 'ModelNotFound',
        message: `GwModel ${namespace}/${target.modelRef.name} does not exist`,
      });
      continue;
    }
    const match = (referenced.spec as GwModelSpec).match?.model;
    if (match?.includes('*') && target.model === undefined) {
      problems.push({
        reason: 'InvalidModelRef',
        message: `GwModel ${namespace}/${target.modelRef.name} matches "${match}"; the target must name the model to send with model`,
      });
    }
  }
  for (const message of missingReferences(spec, namespace, snapshot)) problems.push({ reason: 'RefNotFound', message });
  for (const message of secretContentProblems(spec, namespace, snapshot))
    problems.push({ reason: INVALID_CREDENTIAL_REF, message });
  if (problems.length === 0) return { ok: true, reason: 'ResolvedRefs', message: 'All references resolved' };
  return { ok: false, reason: problems[0]!.reason, message: problems.map((p) => p.message).join('; ') };
}

function parentStatus(
  parent: ParentRef,
  namespace: string,
  context: ConditionContext,
  acceptedOutcome: Outcome,
  resolved: Outcome,
): RouteParentStatus {
  const parentRef: RouteParentStatus['parentRef'] = {
    group: parent.group ?? GATEWAY_GROUP,
    kind: parent.kind ?? 'Gateway',
    namespace: parent.namespace ?? namespace,
    name: parent.name,
  };
  if (parent.sectionName !== undefined) parentRef.sectionName = parent.sectionName;
  if (parent.port !== undefined) parentRef.port = parent.port;
  return {
    parentRef,
    controllerName: CONTROLLER_NAME,
    conditions: sortConditions([
      condition(context, 'Accepted', acceptedOutcome.ok, acceptedOutcome.reason, acceptedOutcome.message),
      condition(context, 'ResolvedRefs', resolved.ok, resolved.reason, resolved.message),
    ]),
  };
}

export function modelAttachment(
  model: KubeObject,
  snapshot: Snapshot,
  gatewayApi: GatewayApiResult,
  now: string,
): ModelAttachment {
  const context = contextOf(model, now);
  const modelNamespace = model.metadata.namespace ?? 'default';
  const spec = model.spec as GwModelSpec;
  const resolved = referenceProblems(model, snapshot);
  // Fields the data plane refuses: the model is still attached (and programmed), so that requests
  // that select it are answered 500 with the reason rather than not finding it.
  const refused = modelRefusals(spec);
  let programmed = resolved.ok;
  const parents = spec.parentRefs.map((parent) => {
    const namespace = parent.namespace ?? modelNamespace;
    const outcome =
      parent.kind === 'HTTPRoute'
        ? routeParent(parent, namespace, modelNamespace, snapshot, gatewayApi)
        : listenerParent(parent, namespace, modelNamespace, snapshot, gatewayApi);
    if (!outcome.ok) programmed = false;
    const accepted =
      outcome.ok && refused.length > 0
        ? rejected(
            'Unsupported',
            `${outcome.message}; the data plane refuses ${refused.map(refusalText).join('; ')}: requests for this model are answered 500`,
          )
        : outcome;
    return parentStatus(parent, modelNamespace, context, accepted, resolved);
  });
  return { model: `${modelNamespace}/${model.metadata.name}`, programmed, status: { parents } };
}

/** Attachment of every GwModel in the snapshot, by "namespace/name". */
export function modelAttachments(
  snapshot: Snapshot,
  gatewayApi: GatewayApiResult,
  now: string,
): Map<string, ModelAttachment> {
  const result = new Map<string, ModelAttachment>();
  for (const key of [...snapshot.models.keys()].sort()) {
    result.set(key, modelAttachment(snapshot.models.get(key)!, snapshot, gatewayApi, now));
  }
  return result;
}
