// GwPolicy status: one PolicyAncestorStatus per gw Gateway the policy reaches through its
// targets (at most 16), with Accepted and Attached conditions. Targets that do not resolve, and a
// policy that reaches no Gateway, are reported on a summary ancestor (as agentgateway does), so
// nothing wrong with a policy goes unreported.
import type { PolicyAncestorStatus, PolicyStatus } from '../../api/kinds/gateway-api/shared.ts';
import type { KubeObject } from '../../api/validate/admission.ts';
import { condition, contextOf, sortConditions } from '../gateway-api/conditions.ts';
import { CONTROLLER_NAME, GATEWAY_GROUP, type GatewayApiResult } from '../gateway-api/types.ts';
import type { Snapshot } from '../snapshot.ts';
import { type ResolvedTarget, resolvePolicyTargets } from './targets.ts';

export const MAX_ANCESTORS = 16;
/** The ancestorRef of the entry that summarises what is not tied to one Gateway. */
export const SUMMARY_ANCESTOR = { group: 'gw.dev', kind: 'StatusSummary', name: 'summary' };

/** The gw Gateways ("namespace/name") a resolved target reaches. */
function gatewaysReached(target: ResolvedTarget, gatewayApi: GatewayApiResult): string[] {
  const reached: string[] = [];
  for (const [gateway, listeners] of gatewayApi.listeners) {
    const hit = listeners.some((listener) => {
      switch (target.kind) {
        case 'Gateway':
          return gateway === `${target.namespace}/${target.name}`;
        case 'ListenerSet':
          return (
            listener.source.kind === 'ListenerSet' &&
            listener.source.namespace === target.namespace &&
            listener.source.name === target.name
          );
        case 'HTTPRoute':
          return listener.routes.some((route) => route.namespace === target.namespace && route.name === target.name);
        case 'Service':
        case 'GwBackend':
          return listener.routes.some((route) =>
            route.rules.some((rule) =>
              rule.backendRefs.some(
                (ref) =>
                  ref.kind === target.kind &&
                  ref.namespace === target.namespace &&
                  ref.name === target.name &&
                  (target.kind !== 'Service' ||
                    target.sectionName === undefined ||
                    String(ref.port) === target.sectionName),
              ),
            ),
          );
        default:
          return false;
      }
    });
    if (hit) reached.push(gateway);
  }
  return reached;
}

export function policyStatus(
  policy: KubeObject,
  snapshot: Snapshot,
  gatewayApi: GatewayApiResult,
  now: string,
): PolicyStatus {
  const context = contextOf(policy, now);
  const resolution = resolvePolicyTargets(policy, snapshot);
  const byGateway = new Map<string, string[]>();
  const unattached: string[] = [];
  for (const target of resolution.targets) {
    const gateways = gatewaysReached(target, gatewayApi);
    if (gateways.length === 0) unattached.push(`${target.description} is not attached to any gw Gateway`);
    for (const gateway of gateways) byGateway.set(gateway, [...(byGateway.get(gateway) ?? []), target.description]);
  }

  const ancestors: PolicyAncestorStatus[] = [];
  for (const gateway of [...byGateway.keys()].sort()) {
    const [namespace, name] = gateway.split('/') as [string, string];
    ancestors.push({
      ancestorRef: { group: GATEWAY_GROUP, kind: 'Gateway', namespace, name },
      controllerName: CONTROLLER_NAME,
      conditions: sortConditions([
        condition(context, 'Accepted', true, 'Accepted', 'Policy accepted'),
        condition(context, 'Attached', true, 'Attached', `Attached to ${byGateway.get(gateway)!.join(', ')}`),
      ]),
    });
  }
  let summarised = 0;
  if (ancestors.length > MAX_ANCESTORS - 1) {
    summarised = ancestors.length - (MAX_ANCESTORS - 1);
    ancestors.length = MAX_ANCESTORS - 1;
  }
  const summary = sortConditions([
    ...(resolution.problems.length > 0
      ? [condition(context, 'Accepted', false, 'TargetNotFound', resolution.problems.map((p) => p.message).join('; '))]
      : []),
    ...(unattached.length > 0 || (resolution.targets.length === 0 && resolution.problems.length === 0)
      ? [condition(context, 'Attached', false, 'Pending', unattached.join('; ') || 'Policy has no targets')]
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
  if (summary.length > 0)
    ancestors.push({ ancestorRef: SUMMARY_ANCESTOR, controllerName: CONTROLLER_NAME, conditions: summary });
  return { ancestors };
}

/** Status of every GwPolicy in the snapshot, by "namespace/name". */
export function policyStatuses(
  snapshot: Snapshot,
  gatewayApi: GatewayApiResult,
  now: string,
): Map<string, PolicyStatus> {
  const statuses = new Map<string, PolicyStatus>();
  for (const key of [...snapshot.policies.keys()].sort()) {
    statuses.set(key, policyStatus(snapshot.policies.get(key)!, snapshot, gatewayApi, now));
  }
  return statuses;
}
