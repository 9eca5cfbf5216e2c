// The controller as one pure function: a snapshot in, every status and every Gateway's
// data-plane configuration out. The controller loop (controller.ts), `gw status` and the golden
// tests all call this; nothing here reads a store or a clock.

import type { DataPlaneConfig } from '../contract/dataplane-config.ts';
import { backendStatuses } from './backends/status.ts';
import { buildDataPlaneConfigs } from './dataplane-config.ts';
import { type GatewayApiResult, translateGatewayApi } from './gateway-api/index.ts';
import { modelGateways } from './incremental/dependencies.ts';
import { inferencePoolStatuses } from './inference-pools.ts';
import { parametersCatalogStatuses } from './model-catalog/resolve.ts';
import { type ModelAttachment, modelAttachment, modelAttachments } from './models/status.ts';
import { indexPolicies } from './policies/attachments.ts';
import { policyStatuses } from './policies/status.ts';
import { resolveAllPolicyTargets } from './policies/targets.ts';
import { markUnservedListeners, policyRefusals } from './refusals.ts';
import type { Snapshot, SnapshotKind } from './snapshot.ts';

export interface Translation {
  gatewayApi: GatewayApiResult;
  /** The status of each object the controller owns, by snapshot kind and "namespace/name". */
  statuses: Map<SnapshotKind, ReadonlyMap<string, unknown>>;
  /** The data-plane configuration of each gw Gateway, by "namespace/name". */
  configs: Map<string, DataPlaneConfig>;
}

/** Translates a snapshot; `now` goes into condition transition times, `revision` into the configs. */
export function translate(snapshot: Snapshot, now: string, revision: string): Translation {
  const gatewayApi = translateGatewayApi(snapshot, now);
  const resolutions = resolveAllPolicyTargets(snapshot);
  const policies = indexPolicies(snapshot, resolutions);
  const models = modelAttachments(snapshot, gatewayApi, now);
  const configs = buildDataPlaneConfigs(snapshot, gatewayApi, models, revision, policies);
  // What the data plane refuses where the configurations apply it (statuses say so).
  markUnservedListeners(gatewayApi, configs);
  const refusals = policyRefusals(configs);
  const statuses = new Map<SnapshotKind, ReadonlyMap<string, unknown>>([
    ['gatewayClasses', gatewayApi.gatewayClassStatuses],
    ['gateways', gatewayApi.gatewayStatuses],
    ['listenerSets', gatewayApi.listenerSetStatuses],
    ['httpRoutes', gatewayApi.routeStatuses],
    ['policies', policyStatuses(snapshot, gatewayApi, now, resolutions, policies, refusals)],
    ['backends', backendStatuses(snapshot, now, configs)],
    ['models', new Map([...models].map(([key, attachment]) => [key, attachment.status]))],
    ['parameters', parametersCatalogStatuses(snapshot, new Set(gatewayApi.gatewayStatuses.keys()), now)],
    ['inferencePools', inferencePoolStatuses(snapshot, configs, now)],
  ]);
  return { gatewayApi, statuses, configs };
}

/**
 * The configurations of the Gateways `changed` reaches only (the controller's fast path after a
 * change); no statuses. A model attached to several Gateways is programmed only if all accept it,
 * so those Gateways go together: `scope` is `changed` grown by every Gateway of a model attached
 * to one in it (transitively, since such a Gateway may share another model with a further one).
 */
export function translateConfigs(
  snapshot: Snapshot,
  revision: string,
  changed: ReadonlySet<string>,
): { scope: Set<string>; gatewayApi: GatewayApiResult; configs: Map<string, DataPlaneConfig> } {
  const scope = new Set(changed);
  const parents = [...snapshot.models].map(([key, model]) => ({
    key,
    model,
    gateways: modelGateways(model, snapshot),
  }));
  const reached = new Set<string>();
  for (let grown = true; grown; ) {
    grown = false;
    for (const { key, gateways } of parents) {
      if (reached.has(key) || !gateways.some((gateway) => scope.has(gateway))) continue;
      reached.add(key);
      for (const gateway of gateways) scope.add(gateway);
      grown = true;
    }
  }
  const gatewayApi = translateGatewayApi(snapshot, '', scope);
  const models = new Map<string, ModelAttachment>();
  for (const { key, model } of parents) {
    if (reached.has(key)) models.set(key, modelAttachment(model, snapshot, gatewayApi, ''));
  }
  const configs = buildDataPlaneConfigs(snapshot, gatewayApi, models, revision, indexPolicies(snapshot));
  return { scope, gatewayApi, configs };
}
