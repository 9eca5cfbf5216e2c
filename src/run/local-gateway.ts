// gw in one process: the file store, the controller and the data plane wired together, as
// `gw run -f DIR` runs them. The controller hands each new configuration to the data plane the
// moment its fast pass produces it; statuses follow. Tests start it in-process.
import { type ConfigUpdate, Controller } from '../controller/controller.ts';
import { DataPlane, type DataPlaneOptions } from '../dataplane/server/data-plane.ts';
import { FileStore, type LoadReport } from '../store/file-store.ts';

export interface LocalGatewayOptions extends DataPlaneOptions {
  paths: string[];
  recursive?: boolean;
  /** Watch the files and apply changes (default true). */
  watch?: boolean;
  /** Told about every load of the files (problems included). */
  onLoad?: (report: LoadReport) => void;
  /** Told after the data plane has applied a configuration update. */
  onApplied?: (update: ConfigUpdate) => void;
}

export class LocalGateway {
  readonly store: FileStore;
  readonly controller: Controller;
  readonly dataPlane: DataPlane;
  private readonly options: LocalGatewayOptions;
  private applying: Promise<void> = Promise.resolve();
  private started = false;

  constructor(options: LocalGatewayOptions) {
    this.options = options;
    this.store = new FileStore(options.paths, { recursive: options.recursive, onLoad: options.onLoad });
    this.dataPlane = new DataPlane(options);
    this.controller = new Controller(this.store, {
      onConfigs: (update) => {
        // Updates apply in order; each waits for the ports of the one before.
        this.applying = this.applying
          .then(() => this.dataPlane.apply(update.changed, update.removed))
          .catch((error: Error) => options.log?.(`applying configuration: ${error.message}`))
          .then(() => options.onApplied?.(update));
      },
    });
  }

  /** Loads the files, translates, and serves; resolves when every listener is bound. */
  async start(): Promise<void> {
    this.store.load();
    this.controller.start();
    if (this.options.watch ?? true) this.store.watchFiles();
    this.started = true;
    await this.applying;
  }

  /** Resolves once every configuration update so far is applied. */
  settled(): Promise<void> {
    return this.applying;
  }

  async stop(): Promise<void> {
    if (!this.started) return;
    this.started = false;
    this.controller.stop();
    await this.store.close();
    await this.applying;
    await this.dataPlane.close();
  }
}
