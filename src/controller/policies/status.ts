// GwPolicy status: one PolicyAncestorStatus per gw Gateway the policy reaches through its
// targets (at most 16), with Accepted and Attached conditions, and ResolvedRefs when something
// the policy reads is missing or unusable. Targets that do not resolve, and a policy that reaches
// no Gateway, are reported on a summary ancestor (as agentgateway does), so nothing wrong with a
// policy goes unreported.
import type { Condition, PolicyAncestorStatus, PolicyStatus } from '../../api/kinds/gateway-api/shared.ts';
import type { GwPolicySpec } from '../../api/kinds/gw-policy.ts';
import { apiKeySourceProblems } from '../../api/references/api-key-sources.ts';
import type { KubeObject } from '../../api/validate/admission.ts';
import { type ConditionContext, condition, contextOf, sortConditions } from '../gateway-api/conditions.ts';
import { CONTROLLER_NAME, GATEWAY_GROUP, type GatewayApiResult } from '../gateway-api/types.ts';
import { missingReferences } from '../references.ts';
import { type ObjectRefusal, type PolicyRefusals, refusalText } from '../refusals.ts';
import { INVALID_CREDENTIAL_REF, secretContentProblems } from '../secret-contents.ts';
import type { Snapshot } from '../snapshot.ts';
import { indexPolicies, type PolicyIndex, policyRejections } from './attachments.ts';
import { byPrecedence, type PolicySection } from './merge.ts';
import { type ResolvedTarget, resolvePolicyTargets, type TargetResolution, type TargetResolutions } from './targets.ts';

const MAX_ANCESTORS = 16;
/** The ancestorRef of the entry that summarises what is not tied to one Gateway. */
const SUMMARY_ANCESTOR = { group: 'gw.dev', kind: 'StatusSummary', name: 'summary' };
/** A condition message lists at most this many problems, then says how many more there are. */
const MAX_LISTED = 10;

/** For each target a policy can name, the gw Gateways ("namespace/name") it reaches. */
type ReachIndex = Map<string, Set<string>>;

/** Built once per translation, so each policy target is one lookup instead of a scan of every Gateway. */
function reachIndex(gatewayApi: GatewayApiResult): ReachIndex {
  const index: ReachIndex = new Map();
  const add = (key: string, gateway: string) => {
    let gateways = index.get(key);
    if (!gateways) {
      gateways = new Set();
      index.set(key, gateways);
    }
    gateways.add(gateway);
  };
  for (const [gateway, listeners] of gatewayApi.listeners) {
    add(`Gateway ${gateway}`, gateway);
    for (const listener of listeners) {
      if (listener.source.kind === 'ListenerSet')
        add(`ListenerSet ${listener.source.namespace}/${listener.source.name}`, gateway);
      for (const route of listener.routes) {
        add(`HTTPRoute ${route.namespace}/${route.name}`, gateway);
        for (const rule of route.rules) {
          for (const ref of rule.backendRefs) {
            if (ref.kind !== 'Service' && ref.kind !== 'GwBackend') continue;
            add(`${ref.kind} ${ref.namespace}/${ref.name}`, gateway);
            if (ref.kind === 'Service' && ref.port !== undefined)
              add(`Service ${ref.namespace}/${ref.name} port ${ref.port}`, gateway);
          }
        }
      }
    }
  }
  return index;
}

function gatewaysReached(target: ResolvedTarget, reach: ReachIndex): string[] {
  let key = `${target.kind} ${target.namespace}/${target.name}`;
  if (target.kind === 'Service' && target.sectionName !== undefined) key += ` port ${target.sectionName}`;
  return [...(reach.get(key) ?? [])];
}

/** Messages joined for a condition, at most MAX_LISTED of them. */
function listed(messages: string[]): string {
  const shown = messages.slice(0, MAX_LISTED).join('; ');
  return messages.length > MAX_LISTED ? `${shown}; and ${messages.length - MAX_LISTED} more` : shown;
}

/** What the policy reads that is missing or unusable: referenced objects, API key sources. */
function unresolved(policy: KubeObject, snapshot: Snapshot): { reason: string; message: string }[] {
  const namespace = policy.metadata.namespace ?? 'default';
  const spec = policy.spec as GwPolicySpec;
  const problems = missingReferences(spec, namespace, snapshot).map((message) => ({
    reason: 'RefNotFound',
    message,
  }));
  const apiKeys = spec.traffic?.apiKeyAuthentication;
  if (apiKeys) {
    problems.push(...apiKeySourceProblems(apiKeys, 'spec.traffic.apiKeyAuthentication', namespace, snapshot));
  }
  for (const message of secretContentProblems(spec, namespace, snapshot))
    problems.push({ reason: INVALID_CREDENTIAL_REF, message });
  return problems;
}

const SECTIONS: PolicySection[] = ['frontend', 'traffic', 'backend'];

interface Taken {
  field: string;
  target: string;
  /** The winner, and why it wins. */
  by: string;
}

/**
 * The fields this policy sets at `target` that another attachment on the very same target takes
 * first — an older policy (Gateway API's conflict rule), or the backend's own inline policy. Such
 * a field loses at every attachment point below the target, wherever the request goes.
 */
function fieldsTakenAt(
  policy: KubeObject,
  target: ResolvedTarget,
  index: PolicyIndex,
): { total: number; taken: Taken[] } {
  const source = `GwPolicy ${policy.metadata.namespace}/${policy.metadata.name}`;
  const spec = policy.spec as GwPolicySpec;
  const attachments = index.byTarget.get(target.description) ?? [];
  // Alone on its target (the usual case): nothing else there can take a field.
  const alone = attachments.every((a) => a.source === source);
  const taken: Taken[] = [];
  let total = 0;
  for (const section of SECTIONS) {
    const fields = spec[section] as Record<string, unknown> | undefined;
    for (const [field, value] of Object.entries(fields ?? {})) {
      if (value === undefined) continue;
      total++;
      if (alone) continue;
      const winner = attachments
        .filter((a) => a.section === section && a.fields[field] !== undefined)
        .sort(byPrecedence)[0];
      if (!winner || winner.source === source) continue;
      const by =
        winner.level !== target.level
          ? "its own policies (a backend's own value wins over GwPolicies)"
          : winner.creationTimestamp !== (policy.metadata.creationTimestamp ?? '')
            ? `${winner.source} (created earlier)`
            : `${winner.source} (created at the same time, its name sorts first)`;
      taken.push({ field: `${section}.${field}`, target: target.description, by });
    }
  }
  return { total, taken };
}

function takenText(taken: Taken[]): string {
  return listed(taken.map((t) => `${t.field} on ${t.target} by ${t.by}`));
}

/**
 * Attached, or Overridden when a traffic policy with strategy.inheritance Override on the whole
 * Gateway excludes this policy's traffic on targets more specific than the Gateway.
 */
function attachedCondition(
  context: ConditionContext,
  policy: KubeObject,
  gateway: string,
  targets: ResolvedTarget[],
  index: PolicyIndex,
): Condition {
  const attached = `Attached to ${targets.map((t) => t.description).join(', ')}`;
  const source = `GwPolicy ${policy.metadata.namespace}/${policy.metadata.name}`;
  const below = targets.filter((t) => t.level !== 'Gateway').map((t) => t.description);
  if ((policy.spec as GwPolicySpec).traffic === undefined || below.length === 0) {
    return condition(context, 'Attached', true, 'Attached', attached);
  }
  const override = (index.byTarget.get(`Gateway ${gateway}`) ?? [])
    .filter((a) => a.section === 'traffic' && a.override && a.source !== source)
    .sort(byPrecedence)[0];
  if (!override) return condition(context, 'Attached', true, 'Attached', attached);
  return condition(
    context,
    'Attached',
    true,
    'Overridden',
    `${attached}; its traffic on ${below.join(', ')} is excluded by ${override.source} (strategy.inheritance Override on Gateway ${gateway})`,
  );
}

export function policyStatus(
  policy: KubeObject,
  snapshot: Snapshot,
  gatewayApi: GatewayApiResult,
  now: string,
  reach: ReachIndex = reachIndex(gatewayApi),
  resolution: TargetResolution = resolvePolicyTargets(policy, snapshot),
  index: PolicyIndex = indexPolicies(snapshot),
  refusals: ReadonlyMap<string, ObjectRefusal[]> = new Map(),
): PolicyStatus {
  const context = contextOf(policy, now);
  const byGateway = new Map<string, ResolvedTarget[]>();
  const unattached: string[] = [];
  for (const target of resolution.targets) {
    const gateways = gatewaysReached(target, reach);
    if (gateways.length === 0) unattached.push(`${target.description} is not attached to any gw Gateway`);
    for (const gateway of gateways) byGateway.set(gateway, [...(byGateway.get(gateway) ?? []), target]);
  }
  const rejections = policyRejections(policy);
  const refProblems = unresolved(policy, snapshot);
  const resolvedRefs =
    refProblems.length > 0
      ? [condition(context, 'ResolvedRefs', false, refProblems[0]!.reason, listed(refProblems.map((p) => p.message)))]
      : [];
  const takenByTarget = new Map<string, { total: number; taken: Taken[] }>();

  const ancestors: PolicyAncestorStatus[] = [];
  for (const gateway of [...byGateway.keys()].sort()) {
    const [namespace, name] = gateway.split('/') as [string, string];
    const targets = byGateway.get(gateway)!;
    const conditions = [...resolvedRefs];
    if (rejections.length > 0) {
      conditions.push(
        condition(context, 'Accepted', false, 'Invalid', `${listed(rejections)}; the policy is not applied`),
      );
    } else {
      let total = 0;
      const taken: Taken[] = [];
      for (const target of targets) {
        let result = takenByTarget.get(target.description);
        if (!result) {
          result = fieldsTakenAt(policy, target, index);
          takenByTarget.set(target.description, result);
        }
        total += result.total;
        taken.push(...result.taken);
      }
      const refused = refusals.get(gateway) ?? [];
      conditions.push(
        refused.length > 0
          ? condition(
              context,
              'Accepted',
              false,
              'Unsupported',
              `The data plane refuses ${listed(refused.map(refusalText))}; the traffic these cover is answered 500`,
            )
          : total > 0 && taken.length === total
            ? condition(
                context,
                'Accepted',
                false,
                'Conflicted',
                `Every field it sets is taken first by another policy on the same target: ${takenText(taken)}`,
              )
            : condition(
                context,
                'Accepted',
                true,
                'Accepted',
                taken.length > 0
                  ? `Policy accepted; taken first by another policy on the same target: ${takenText(taken)}`
                  : 'Policy accepted',
              ),
        attachedCondition(context, policy, gateway, targets, index),
      );
    }
    ancestors.push({
      ancestorRef: { group: GATEWAY_GROUP, kind: 'Gateway', namespace, name },
      controllerName: CONTROLLER_NAME,
      conditions: sortConditions(conditions),
    });
  }
  let summarised = 0;
  if (ancestors.length > MAX_ANCESTORS - 1) {
    summarised = ancestors.length - (MAX_ANCESTORS - 1);
    ancestors.length = MAX_ANCESTORS - 1;
  }
  // A rejection is on every Gateway entry; with none, the summary says it.
  const summaryRejections = byGateway.size === 0 ? rejections : [];
  const notAccepted = [...resolution.problems.map((p) => p.message), ...summaryRejections];
  const summary = sortConditions([
    ...(notAccepted.length > 0
      ? [
          condition(
            context,
            'Accepted',
            false,
            resolution.problems.length > 0 ? 'TargetNotFound' : 'Invalid',
            listed(notAccepted),
          ),
        ]
      : []),
    ...(unattached.length > 0 || (resolution.targets.length === 0 && resolution.problems.length === 0)
      ? [condition(context, 'Attached', false, 'Pending', listed(unattached) || 'Policy has no targets')]
      : []),
    ...(summarised > 0
      ? [
          condition(
            context,
            'StatusSummarized',
            true,
            'StatusSummary',
            `${summarised} more Gateways are not listed (status holds at most ${MAX_ANCESTORS})`,
          ),
        ]
      : []),
  ]);
  if (summary.length > 0) {
    ancestors.push({
      ancestorRef: SUMMARY_ANCESTOR,
      controllerName: CONTROLLER_NAME,
      conditions: sortConditions([...summary, ...(byGateway.size === 0 ? resolvedRefs : [])]),
    });
  }
  return { ancestors };
}

/** Status of every GwPolicy in the snapshot, by "namespace/name". */
export function policyStatuses(
  snapshot: Snapshot,
  gatewayApi: GatewayApiResult,
  now: string,
  resolutions: TargetResolutions,
  index: PolicyIndex,
  refusals: PolicyRefusals = new Map(),
): Map<string, PolicyStatus> {
  const statuses = new Map<string, PolicyStatus>();
  const reach = reachIndex(gatewayApi);
  for (const key of [...snapshot.policies.keys()].sort()) {
    statuses.set(
      key,
      policyStatus(
        snapshot.policies.get(key)!,
        snapshot,
        gatewayApi,
        now,
        reach,
        resolutions.get(key),
        index,
        refusals.get(key),
      ),
    );
  }
  return statuses;
}
