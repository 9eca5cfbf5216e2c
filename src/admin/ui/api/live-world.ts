// The running gateway's objects as gw status and gw explain read them: the controller's store
// (statuses as it wrote them), its snapshot, and the effective listeners of its last full pass.

import type { EffectiveListener } from '../../../controller/gateway-api/types.ts';
import { type Snapshot, snapshotFromStore } from '../../../controller/snapshot.ts';
import type { UiSources } from '../sources.ts';

export interface LiveWorld {
  snapshot: Snapshot;
  listeners: ReadonlyMap<string, readonly EffectiveListener[]>;
}

export function liveWorld(sources: UiSources): LiveWorld {
  const { controller } = sources;
  return {
    snapshot: snapshotFromStore(controller.objects),
    listeners: controller.lastReport?.gatewayApi.listeners ?? new Map(),
  };
}

/** How the UI names where the objects are, in messages ("in this gw's objects"). */
export const WHERE = "among this gw's objects";
