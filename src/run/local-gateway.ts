// gw in one process: the file store, the controller and the data plane wired together, as
// `gw run -f DIR` runs them. The controller hands each new configuration to the data plane the
// moment its fast pass produces it; statuses follow. Tests start it in-process.
import type { ConfigUpdate, Controller } from '../controller/controller.ts';
import { DataPlane, type DataPlaneOptions } from '../dataplane/server/data-plane.ts';
import { FileSource, type FileSourceOptions } from './file-source.ts';

export interface LocalGatewayOptions extends DataPlaneOptions, FileSourceOptions {
  /** Told after the data plane has applied a configuration update. */
  onApplied?: (update: ConfigUpdate) => void;
}

export class LocalGateway {
  readonly files: FileSource;
  readonly dataPlane: DataPlane;
  private applying: Promise<void> = Promise.resolve();
  private started = false;

  constructor(options: LocalGatewayOptions) {
    this.dataPlane = new DataPlane(options);
    this.files = new FileSource(options, (update) => {
      // Updates apply in order; each waits for the ports of the one before.
      this.applying = this.applying
        .then(() => this.dataPlane.apply(update.changed, update.removed))
        .catch((error: Error) => options.log?.(`applying configuration: ${error.message}`))
        .then(() => options.onApplied?.(update));
    });
  }

  get controller(): Controller {
    return this.files.controller;
  }

  /** Loads the files, translates, and serves; resolves when every listener is bound. */
  async start(): Promise<void> {
    this.files.start();
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
    await this.files.stop();
    await this.applying;
    await this.dataPlane.close();
  }
}
