// The resources of -f FILE|DIR, loaded into a file store and translated once by the controller,
// for the commands that show what the controller makes of them (gw status, gw explain).
import { Controller, type ReconcileReport } from '../controller/controller.ts';
import { FileStore } from '../store/file-store.ts';
import type { SourceProblem } from '../store/store.ts';

export interface World {
  store: FileStore;
  report: ReconcileReport;
  problems: SourceProblem[];
}

export function loadWorld(paths: string[], recursive: boolean): World {
  const store = new FileStore(paths, { recursive });
  const { problems } = store.load();
  const report = new Controller(store).reconcile();
  return { store, report, problems };
}
