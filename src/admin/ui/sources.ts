// What the web UI reads the running gateway through: the controller (its store's objects with the
// statuses it wrote, its last full pass, the configurations it published), where the objects come
// from (which decides whether the UI may edit them), the address listeners bind and the listener
// ports the data plane could not bind. gw run builds it (src/cli/run.ts) the same way for one
// process and for the primary of workers.
import type { Controller } from '../../controller/controller.ts';
import type { UnboundPort } from '../../dataplane/server/data-plane.ts';

/** Where the objects come from, for the UI: only gw's own API server takes edits from it. */
export type ObjectSource = { kind: 'api-server' } | { kind: 'files'; why: string } | { kind: 'cluster'; why: string };

export interface UiSources {
  controller: Controller;
  source: ObjectSource;
  /** The address the listeners bind (gw run --address). */
  listenAddress: string;
  unboundPorts(): ReadonlyMap<number, UnboundPort>;
}
