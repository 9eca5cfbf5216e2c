// The program node:cluster starts for each worker of `gw run --workers N` (cluster-primary.ts).
import { ClusterWorker } from './cluster-worker.ts';
import { workerSettingsFromEnv } from './ipc.ts';

await new ClusterWorker(workerSettingsFromEnv(process.env)).run();
process.exit(0);
