// The resources gw status and gw explain look at, translated once by the controller: those of
// -f FILE|DIR, loaded into a file store, or those of a Kubernetes API server (--kubeconfig: a
// cluster, or a running gw's embedded API server), read as gw run --kubeconfig reads them
// (KubeSource), writing nothing.
import { Controller, type ReconcileReport } from '../controller/controller.ts';
import { KubeSource } from '../run/kube-source.ts';
import { FileStore } from '../store/file-store.ts';
import type { SourceProblem, Store } from '../store/store.ts';

export interface World {
  store: Store;
  report: ReconcileReport;
  problems: SourceProblem[];
  /** Where the objects are, for messages: "in the given files", "at https://127.0.0.1:6443". */
  where: string;
  /** Statuses are the ones stored on the API server (written by its controller), not computed here. */
  storedStatuses: boolean;
  close(): Promise<void>;
}

export function loadWorld(paths: string[], recursive: boolean): World {
  const store = new FileStore(paths, { recursive });
  const { problems } = store.load();
  const report = new Controller(store).reconcile();
  return { store, report, problems, where: 'in the given files', storedStatuses: false, close: async () => {} };
}

/** -f FILE|DIR [-R], or --kubeconfig FILE [--context NAME]: the options of gw status and gw explain. */
export const WORLD_OPTIONS = {
  filename: { type: 'string', short: 'f', multiple: true },
  recursive: { type: 'boolean', short: 'R' },
  kubeconfig: { type: 'string' },
  context: { type: 'string' },
} as const;

export const WORLD_USAGE = `  -f, --filename     a file or a directory of resources; repeatable
  -R, --recursive    read directories recursively
  --kubeconfig       read the objects from this API server instead: a cluster, or a running gw's
                     embedded one (the kubeconfig gw run writes: DATA_DIR/kubeconfig)
  --context          a context of the kubeconfig other than its current one
`;

/** Why the world could not be had: a usage mistake (exit 2, with the usage), or an API server that failed (exit 1). */
export interface WorldError {
  error: string;
  usage: boolean;
}

/** The world the options name, or why not. */
export async function worldOf(values: {
  filename?: string[];
  recursive?: boolean;
  kubeconfig?: string;
  context?: string;
}): Promise<World | WorldError> {
  const files = values.filename ?? [];
  if (values.kubeconfig !== undefined) {
    if (files.length > 0) return { error: 'give -f FILE|DIR or --kubeconfig FILE, not both', usage: true };
    try {
      return await loadKubeWorld({ kubeconfig: values.kubeconfig, context: values.context });
    } catch (error) {
      return { error: (error as Error).message, usage: false };
    }
  }
  if (values.context !== undefined) return { error: '--context applies to --kubeconfig', usage: true };
  if (files.length === 0)
    return { error: 'name the resources with -f FILE|DIR, or an API server with --kubeconfig FILE', usage: true };
  return loadWorld(files, values.recursive ?? false);
}

/** How long listing every kind from an API server may take before the command gives up. */
export const KUBE_LIST_TIMEOUT_MS = 15_000;

/**
 * The objects of the API server a kubeconfig names, listed once (statuses as stored there);
 * throws with a clear message when the kubeconfig cannot be used or the server does not answer
 * within `timeoutMs`.
 */
export async function loadKubeWorld(
  settings: { kubeconfig?: string; context?: string },
  timeoutMs = KUBE_LIST_TIMEOUT_MS,
): Promise<World> {
  let report: ReconcileReport | undefined;
  const seen: string[] = [];
  const source = new KubeSource(
    {
      kube: { ...settings, writeStatus: false },
      log: (line) => seen.push(line),
      onReconcile: (reconciled) => {
        report ??= reconciled;
      },
    },
    () => undefined,
  );
  const server = source.store.server;
  let timer: NodeJS.Timeout | undefined;
  const timedOut = new Promise<'timeout'>((resolve) => {
    timer = setTimeout(() => resolve('timeout'), timeoutMs);
  });
  const outcome = await Promise.race([source.start().then(() => 'listed' as const), timedOut]);
  clearTimeout(timer);
  if (outcome === 'timeout' || !report) {
    await source.stop();
    // The store's last problem, without its "(retrying)": the command does not retry.
    const why = seen.length > 0 ? `: ${seen[seen.length - 1]!.replace(/ \(retrying\)$/, '')}` : '';
    throw new Error(`the API server ${server} did not list the objects within ${timeoutMs / 1000} s${why}`);
  }
  return {
    store: source.store,
    report,
    problems: source.store.problems(),
    where: `at ${server}`,
    storedStatuses: true,
    close: () => source.stop(),
  };
}
