// gw in one process: the source of objects (the files, or the embedded API server), the
// controller and the data plane wired together, as `gw run` runs them. The controller hands each
// new configuration to the data plane the moment its fast pass produces it; statuses follow.
// Tests start it in-process.
import type { ConfigUpdate, Controller } from '../controller/controller.ts';
import { unboundByGateway } from '../controller/port-status.ts';
import { DataPlane, type DataPlaneOptions, type UnboundPort } from '../dataplane/server/data-plane.ts';
import { moduleLog } from '../util/log-line.ts';
import { ApiSource } from './api-source.ts';
import { type ConfigSourceKind, type ConfigSourceOptions, createConfigSource } from './config-source.ts';
import { FileSource } from './file-source.ts';

export interface LocalGatewayOptions extends DataPlaneOptions, ConfigSourceOptions {
  /** Told after the data plane has applied a configuration update, with the ports it could not bind. */
  onApplied?: (update: ConfigUpdate, unbound: ReadonlyMap<number, UnboundPort>) => void;
}

export class LocalGateway {
  readonly source: ConfigSourceKind;
  readonly dataPlane: DataPlane;
  private applying: Promise<void> = Promise.resolve();
  /** Configuration updates handed to the data plane and not yet applied. */
  private unapplied = 0;
  private started = false;

  constructor(options: LocalGatewayOptions) {
    this.dataPlane = new DataPlane({
      ...options,
      log: moduleLog(options.log, 'dataplane'),
      onUnboundChange: () => this.controller.setUnboundPorts(unboundByGateway(this.dataPlane.unboundPorts)),
    });
    this.source = createConfigSource(options, (update) => {
      // Updates apply in order; each waits for the ports of the one before.
      this.unapplied++;
      this.applying = this.applying
        .then(() => this.dataPlane.apply(update.changed, update.removed))
        .catch((error: Error) => options.log?.(`applying configuration: ${error.message}`))
        .then(() => {
          this.unapplied--;
          const unbound = this.dataPlane.unboundPorts;
          this.controller.setUnboundPorts(unboundByGateway(unbound));
          options.onApplied?.(update, unbound);
        });
    });
  }

  get controller(): Controller {
    return this.source.controller;
  }

  /** The file source (gw run -f without the API server). */
  get files(): FileSource {
    if (!(this.source instanceof FileSource)) throw new Error('this gateway reads an API server, not files alone');
    return this.source;
  }

  /** The API server source (gw run with the embedded API server), or undefined. */
  get api(): ApiSource | undefined {
    return this.source instanceof ApiSource ? this.source : undefined;
  }

  /** Loads the files, translates, and serves; resolves when every listener is bound. */
  async start(): Promise<void> {
    this.started = true;
    await this.source.start();
    await this.applying;
  }

  /** Whether any listener port is bound. */
  serving(): boolean {
    return this.dataPlane.serving;
  }

  /** Whether the data plane has applied every configuration the controller has published. */
  caughtUp(): boolean {
    return this.unapplied === 0;
  }

  /** Resolves once every configuration update so far is applied. */
  settled(): Promise<void> {
    return this.applying;
  }

  async stop(): Promise<void> {
    if (!this.started) return;
    this.started = false;
    await this.source.stop();
    await this.applying;
    await this.dataPlane.close();
  }
}
