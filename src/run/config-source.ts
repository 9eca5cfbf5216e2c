// Where `gw run` gets its objects from, the same in one process and in the primary of workers:
// the files alone (FileSource), or the embedded API server (ApiSource), into which files given
// with -f are applied. Either way a controller translates the objects into data-plane
// configurations.
import type { ConfigUpdate, Controller } from '../controller/controller.ts';
import { ApiSource, type ApiSourceSettings } from './api-source.ts';
import { FileSource, type FileSourceOptions } from './file-source.ts';

export interface ConfigSource {
  readonly controller: Controller;
  /** Loads the objects and translates them (updates go to `onConfigs`), then follows changes. */
  start(): Promise<void>;
  stop(): Promise<void>;
}

export interface ConfigSourceOptions extends FileSourceOptions {
  /** Serve the embedded API server and read objects from its store. */
  api?: ApiSourceSettings;
  log?: (line: string) => void;
}

export function createConfigSource(
  options: ConfigSourceOptions,
  onConfigs: (update: ConfigUpdate) => void,
): FileSource | ApiSource {
  if (options.api) return new ApiSource({ ...options, api: options.api }, onConfigs);
  return new FileSource(options, onConfigs);
}
