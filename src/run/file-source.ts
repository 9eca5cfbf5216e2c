// The file side of `gw run`, the same in one process and in the primary of workers: the file
// store and the controller that translates its objects into data-plane configurations.
import { type ConfigUpdate, Controller, type ControllerOptions } from '../controller/controller.ts';
import { FileStore, type LoadReport } from '../store/file-store.ts';

/** Which Gateways the controller publishes: every gw Gateway, or one (gw run --gateway). */
export type GatewaySelection = Pick<ControllerOptions, 'servedGateway' | 'onServedGateway'>;

/** The controller options of a source: its updates, and the Gateway selection. */
export function sourceControllerOptions(
  selection: GatewaySelection,
  onConfigs: (update: ConfigUpdate) => void,
): ControllerOptions {
  return { onConfigs, servedGateway: selection.servedGateway, onServedGateway: selection.onServedGateway };
}

export interface FileSourceOptions extends GatewaySelection {
  paths: string[];
  recursive?: boolean;
  /** Watch the files and apply changes (default true). */
  watch?: boolean;
  /** Told about every load of the files (problems included). */
  onLoad?: (report: LoadReport) => void;
}

export class FileSource {
  readonly store: FileStore;
  readonly controller: Controller;
  private readonly watch: boolean;

  /** `onConfigs` is told about every configuration update, from the first load on. */
  constructor(options: FileSourceOptions, onConfigs: (update: ConfigUpdate) => void) {
    this.watch = options.watch ?? true;
    this.store = new FileStore(options.paths, { recursive: options.recursive, onLoad: options.onLoad });
    this.controller = new Controller(this.store, sourceControllerOptions(options, onConfigs));
  }

  /** Loads the files and translates them (updates go to `onConfigs`), then watches them. */
  async start(): Promise<void> {
    this.store.load();
    this.controller.start();
    if (this.watch) this.store.watchFiles();
  }

  async stop(): Promise<void> {
    this.controller.stop();
    await this.store.close();
  }
}
