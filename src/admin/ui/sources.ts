// What the web UI reads the running gateway through: the controller (its store's objects with the
// statuses it wrote, its last full pass, the configurations it published), where the objects come
// from (which decides whether the UI may edit them), the address listeners bind and the listener
// ports the data plane could not bind, and the live traffic (traffic/). gw run builds it (src/cli/run.ts) the same way for one
// process and for the primary of workers.
import type { Controller } from '../../controller/controller.ts';
import type { UnboundPort } from '../../dataplane/server/data-plane.ts';
import type { TrafficHub } from './traffic/traffic-hub.ts';
import type { TrafficSeries } from './traffic/traffic-series.ts';

/** Where the objects come from, for the UI: only gw's own API server takes edits from it. */
export type ObjectSource = { kind: 'api-server' } | { kind: 'files'; why: string } | { kind: 'cluster'; why: string };

export interface UiSources {
  controller: Controller;
  source: ObjectSource;
  /** The address the listeners bind (gw run --address). */
  listenAddress: string;
  unboundPorts(): ReadonlyMap<number, UnboundPort>;
  /** The recent requests and their time series; absent where nothing serves traffic in reach. */
  live?: LiveTraffic;
}

export interface LiveTraffic {
  traffic: TrafficHub;
  series: TrafficSeries;
}
