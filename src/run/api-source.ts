// The API server side of `gw run`: the embedded Kubernetes API server (src/apiserver) serves
// objects from its SQLite store, the controller reads that store directly (it implements the
// controller's Store interface), and files given with -f are applied into it and kept applied
// (src/apiserver/file-applier.ts). kubectl and the files therefore edit the same objects, and
// statuses written by the controller are visible to `kubectl get`. With --provision the controller
// also generates each Gateway's data-plane objects into it, as `gw controller` does in a cluster.
import { randomBytes } from 'node:crypto';
import { EmbeddedApiServer } from '../apiserver/embedded.ts';
import { FileApplier } from '../apiserver/file-applier.ts';
import type { RestSettings } from '../apiserver/rest-handler.ts';
import { gwVersion } from '../cli/version.ts';
import { type ConfigUpdate, Controller } from '../controller/controller.ts';
import { FileStore } from '../store/file-store.ts';
import { type LogFunction, moduleLog } from '../util/log-line.ts';
import { type FileSourceOptions, sourceControllerOptions } from './file-source.ts';

export interface ApiSourceSettings {
  /** Where the database, certificates, token and kubeconfig live. */
  dataDir: string;
  /** Address the API server binds (default 127.0.0.1). */
  address?: string;
  /** Port; 0 picks a free one. */
  port: number;
  gwVersion?: string;
  /** How many changes watches can resume from (default 10,000). */
  historyLimit?: number;
  settings?: Partial<RestSettings>;
  /** Provision each gw Gateway's data-plane objects into the API server (gw run --provision). */
  provision?: boolean;
}

export interface ApiSourceOptions extends FileSourceOptions {
  api: ApiSourceSettings;
  log?: LogFunction;
}

export class ApiSource {
  readonly api: EmbeddedApiServer;
  readonly controller: Controller;
  /** The files given with -f (none: the API server is the only source). */
  readonly files: FileStore | undefined;
  private readonly options: ApiSourceOptions;
  private applier: FileApplier | undefined;

  /** Opens the data directory and the database; start() serves and reconciles. */
  constructor(options: ApiSourceOptions, onConfigs: (update: ConfigUpdate) => void) {
    this.options = options;
    this.api = new EmbeddedApiServer({ ...options.api, log: moduleLog(options.log, 'apiserver') });
    const log = (line: string) => options.log?.(line);
    const provision = options.api.provision
      ? { provision: { version: options.api.gwVersion ?? gwVersion(), randomBytes, log } }
      : {};
    this.controller = new Controller(this.api.store, { ...sourceControllerOptions(options, onConfigs), ...provision });
    if (options.paths.length > 0) {
      // The API server stores every kind, those gw does not read (Deployments, RBAC) too.
      this.files = new FileStore(options.paths, {
        recursive: options.recursive,
        onLoad: options.onLoad,
        keepNotRead: true,
      });
    }
  }

  async start(): Promise<void> {
    await this.api.listen();
    if (this.files) {
      this.files.load();
      const log = moduleLog(this.options.log, 'apiserver');
      this.applier = new FileApplier(this.api.store, this.files, (line) => log?.(line));
      this.applier.start();
      if (this.options.watch ?? true) this.files.watchFiles();
    }
    this.controller.start();
  }

  async stop(): Promise<void> {
    this.controller.stop();
    this.applier?.stop();
    await this.files?.close();
    await this.api.close();
  }
}
