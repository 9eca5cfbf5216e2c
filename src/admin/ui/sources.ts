// What the web UI reads the running gateway through: the controller (its store's objects with the
// statuses it wrote, its last full pass, the configurations it published), where the objects come
// from (which decides whether the UI may edit them), the address listeners bind and the listener
// ports the data plane could not bind, the backends' live state. gw run builds it (src/cli/run.ts) the same way for one
// process and for the primary of workers.
import type { EmbeddedApiServer } from '../../apiserver/embedded.ts';
import type { Controller } from '../../controller/controller.ts';
import type { PlacedHealthReport } from '../../dataplane/balancing/health-report.ts';
import type { UnboundPort } from '../../dataplane/server/data-plane.ts';

/** Where the objects come from, for the UI: only gw's own API server takes edits from it. */
export type ObjectSource =
  | { kind: 'api-server'; api: EmbeddedApiServer }
  | { kind: 'files'; why: string }
  | { kind: 'cluster'; why: string };

export interface UiSources {
  controller: Controller;
  source: ObjectSource;
  /** The address the listeners bind (gw run --address). */
  listenAddress: string;
  unboundPorts(): ReadonlyMap<number, UnboundPort>;
  /**
   * The live state the backends keep (model health, evictions, priority groups) by process: one
   * entry (worker 0) in one process, one per worker with --workers N, asked of them as metrics are.
   */
  healthReports(): Promise<{ worker: number; reports: PlacedHealthReport[] }[]>;
}

/** What decides the source: a Kubernetes API server, gw's own API server, files (applied into it or not). */
export interface SourceFacts {
  /** The embedded API server, when gw runs one. */
  api: EmbeddedApiServer | undefined;
  /** The objects are read from a Kubernetes API server (--kubeconfig, --cluster). */
  kube: boolean;
  /** Files given with -f. */
  paths: readonly string[];
}

/** Only gw's own API server without -f takes edits: files own their objects, a cluster's are edited there. */
export function objectSource(facts: SourceFacts): ObjectSource {
  if (facts.kube)
    return { kind: 'cluster', why: 'the objects are read from a Kubernetes API server: edit them there (kubectl)' };
  if (facts.api && facts.paths.length === 0) return { kind: 'api-server', api: facts.api };
  return {
    kind: 'files',
    why: facts.api
      ? 'the objects are applied from the files given with -f: edit the files'
      : 'the objects come from the files given with -f: edit the files',
  };
}
