// The running gateway's objects as gw explain reads them: the controller's snapshot of its store
// and the effective listeners of its last full pass.
import type { ExplainWorld } from '../../../controller/policies/explanation.ts';
import { snapshotFromStore } from '../../../controller/snapshot.ts';
import type { UiSources } from '../sources.ts';

export function liveWorld(sources: UiSources): ExplainWorld {
  const { controller } = sources;
  return {
    snapshot: snapshotFromStore(controller.objects),
    listeners: controller.lastReport?.gatewayApi.listeners ?? new Map(),
    where: "among this gw's objects",
  };
}
