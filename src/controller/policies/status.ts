// GwPolicy status: one PolicyAncestorStatus per gw Gateway the policy reaches through its
// targets (at most 16), with Accepted and Attached conditions. Targets that do not resolve, and a
// policy that reaches no Gateway, are reported on a summary ancestor (as agentgateway does), so
// nothing wrong with a policy goes unreported.
import type { PolicyAncestorStatus, PolicyStatus } from '../../api/kinds/gateway-api/shared.ts';
import type { KubeObject } from '../../api/validate/admission.ts';
import { condition, contextOf, sortConditions } from '../gateway-api/conditions.ts';
import { CONTROLLER_NAME, GATEWAY_GROUP, type GatewayApiResult } from '../gateway-api/types.ts';
import type { Snapshot } from '../snapshot.ts';
import {
  type ResolvedTarget,
  resolveAllPolicyTargets,
  resolvePolicyTargets,
  type TargetResolution,
  type TargetResolutions,
} from './targets.ts';

export const MAX_ANCESTORS = 16;
/** The ancestorRef of the entry that summarises what is not tied to one Gateway. */
export const SUMMARY_ANCESTOR = { group: 'gw.dev', kind: 'StatusSummary', name: 'summary' };

/** For each target a policy can name, the gw Gateways ("namespace/name") it reaches. */
export type ReachIndex = Map<string, Set<string>>;

/** Built once per translation, so each policy target is one lookup instead of a scan of every Gateway. */
export function reachIndex(gatewayApi: GatewayApiResult): ReachIndex {
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

export function policyStatus(
  policy: KubeObject,
  snapshot: Snapshot,
  gatewayApi: GatewayApiResult,
  now: string,
  reach: ReachIndex = reachIndex(gatewayApi),
  resolution: TargetResolution = resolvePolicyTargets(policy, snapshot),
): PolicyStatus {
  const context = contextOf(policy, now);
  const byGateway = new Map<string, string[]>();
  const unattached: string[] = [];
  for (const target of resolution.targets) {
    const gateways = gatewaysReached(target, reach);
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
  resolutions: TargetResolutions = resolveAllPolicyTargets(snapshot),
): Map<string, PolicyStatus> {
  const statuses = new Map<string, PolicyStatus>();
  const reach = reachIndex(gatewayApi);
  for (const key of [...snapshot.policies.keys()].sort()) {
    statuses.set(
      key,
      policyStatus(snapshot.policies.get(key)!, snapshot, gatewayApi, now, reach, resolutions.get(key)),
    );
  }
  return statuses;
}
