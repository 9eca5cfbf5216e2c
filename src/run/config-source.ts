// Where `gw run` gets its objects from, the same in one process and in the primary of workers:
// the files alone (FileSource), the embedded API server (ApiSource), into which files given
// with -f are applied, or a Kubernetes API server (KubeSource). Either way a controller
// translates the objects into data-plane configurations.
import type { ConfigUpdate, Controller } from '../controller/controller.ts';
import type { LogFunction } from '../util/log-line.ts';
import { ApiSource, type ApiSourceSettings } from './api-source.ts';
import { FileSource, type FileSourceOptions } from './file-source.ts';
import { KubeSource, type KubeSourceSettings } from './kube-source.ts';

export interface ConfigSource {
  readonly controller: Controller;
  /** Loads the objects and translates them (updates go to `onConfigs`), then follows changes. */
  start(): Promise<void>;
  stop(): Promise<void>;
}

export interface ConfigSourceOptions extends FileSourceOptions {
  /** Serve the embedded API server and read objects from its store. */
  api?: ApiSourceSettings;
  /** Read the objects from a Kubernetes API server instead (no files, no embedded API server). */
  kube?: KubeSourceSettings;
  log?: LogFunction;
}

export type ConfigSourceKind = FileSource | ApiSource | KubeSource;

export function createConfigSource(
  options: ConfigSourceOptions,
  onConfigs: (update: ConfigUpdate) => void,
): ConfigSourceKind {
  if (options.kube) {
    const { kube, log, servedGateway, onServedGateway } = options;
    return new KubeSource({ kube, log, servedGateway, onServedGateway }, onConfigs);
  }
  if (options.api) return new ApiSource({ ...options, api: options.api }, onConfigs);
  return new FileSource(options, onConfigs);
}
