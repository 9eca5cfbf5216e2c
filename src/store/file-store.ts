// The file store: objects read from YAML/JSON files and directories, admitted like the API server
// would, and reloaded when the files change. A file that does not parse or validate never takes
// down a running gateway: the objects it last held keep serving and the problem is reported with
// the file, the document and the field path.
import { type FSWatcher, statSync, watch as watchPath } from 'node:fs';
import { dirname } from 'node:path';
import { loadResources, type SourceDocument } from '../api/load/documents.ts';
import { admit, describeObject, type KubeObject } from '../api/validate/admission.ts';
import { formatFieldError } from '../api/validate/errors.ts';
import { MemoryStore } from './memory-store.ts';
import { kindKey, objectKey, type SourceProblem } from './store.ts';

export interface FileStoreOptions {
  recursive?: boolean;
  /** How long file events settle before a reload (editors write in several steps). */
  debounceMs?: number;
  /** Told after every load, with the problems found (empty when all is well). */
  onLoad?: (result: LoadReport) => void;
}

export interface LoadReport {
  /** Objects changed by this load (added, modified or deleted). */
  changes: number;
  problems: SourceProblem[];
}

function where(document: { file: string; document?: number; item?: number }): string {
  let text = document.file;
  if (document.document !== undefined) text += `: document ${document.document}`;
  if (document.item !== undefined) text += `, item ${document.item}`;
  return text;
}

export class FileStore extends MemoryStore {
  private readonly paths: string[];
  private readonly options: FileStoreOptions;
  /** The objects each file held when it was last valid, in file order. */
  private readonly lastGood = new Map<string, KubeObject[]>();
  private currentProblems: SourceProblem[] = [];
  private readonly fsWatchers: FSWatcher[] = [];
  private reloadTimer: NodeJS.Timeout | undefined;

  constructor(paths: string[], options: FileStoreOptions = {}) {
    super();
    this.paths = paths;
    this.options = options;
  }

  /** Reads every file now and brings the store in line with them. */
  load(): LoadReport {
    const loaded = loadResources(this.paths, { recursive: this.options.recursive });
    const problems: SourceProblem[] = [];
    const byFile = new Map<string, { objects: KubeObject[]; invalid: boolean }>();
    const fileOf = (file: string) => {
      let entry = byFile.get(file);
      if (!entry) {
        entry = { objects: [], invalid: false };
        byFile.set(file, entry);
      }
      return entry;
    };
    for (const problem of loaded.problems) {
      fileOf(problem.file).invalid = true;
      const line = problem.line ? ` (line ${problem.line})` : '';
      problems.push({ source: problem.file, message: `${where(problem)}${line}: ${problem.message}` });
    }
    for (const document of loaded.documents) this.admitDocument(document, fileOf(document.file), problems);

    // A file with any problem keeps serving what it last held; a valid file replaces it.
    const desired = new Map<string, { object: KubeObject; file: string }>();
    const files = new Set([...byFile.keys(), ...this.lastGood.keys()]);
    for (const file of [...files].sort()) {
      const entry = byFile.get(file);
      let objects: KubeObject[];
      if (entry === undefined) {
        this.lastGood.delete(file); // the file is gone
        continue;
      } else if (entry.invalid) {
        objects = this.lastGood.get(file) ?? [];
      } else {
        objects = entry.objects;
        this.lastGood.set(file, objects);
      }
      for (const object of objects) {
        const id = `${kindKey(object)} ${objectKey(object)}`;
        const previous = desired.get(id);
        if (previous) {
          problems.push({
            source: file,
            message: `${file}: ${describeObject(object)}: already defined in ${previous.file}; the first definition is used`,
          });
          continue;
        }
        desired.set(id, { object, file });
      }
    }

    let changes = 0;
    for (const { object } of desired.values()) if (this.apply(object)) changes++;
    for (const kind of this.kinds()) {
      for (const object of this.list(kind).items) {
        if (!desired.has(`${kind} ${objectKey(object)}`) && this.delete(kind, objectKey(object))) changes++;
      }
    }
    this.currentProblems = problems;
    const report = { changes, problems };
    this.options.onLoad?.(report);
    return report;
  }

  /** Starts watching the files; changes reload the store after a short settle time. */
  watchFiles(): void {
    for (const path of this.paths) {
      if (path === '-') continue;
      try {
        // A file is watched through its directory: editors replace files by renaming, which ends
        // a watch on the file itself.
        const isDirectory = statSync(path).isDirectory();
        const target = isDirectory ? path : dirname(path);
        const watcher = watchPath(target, { recursive: isDirectory && (this.options.recursive ?? false) }, () =>
          this.scheduleReload(),
        );
        watcher.on('error', () => this.scheduleReload());
        this.fsWatchers.push(watcher);
      } catch (error) {
        this.currentProblems.push({
          source: path,
          message: `${path}: cannot watch for changes: ${(error as Error).message}`,
        });
      }
    }
  }

  override problems(): SourceProblem[] {
    return [...this.currentProblems];
  }

  override async close(): Promise<void> {
    clearTimeout(this.reloadTimer);
    for (const watcher of this.fsWatchers) watcher.close();
    this.fsWatchers.length = 0;
    await super.close();
  }

  private scheduleReload(): void {
    clearTimeout(this.reloadTimer);
    this.reloadTimer = setTimeout(() => this.load(), this.options.debounceMs ?? 25);
  }

  private admitDocument(
    document: SourceDocument,
    entry: { objects: KubeObject[]; invalid: boolean },
    problems: SourceProblem[],
  ): void {
    const result = admit(document.value);
    if (result.errors.length > 0) {
      entry.invalid = true;
      const name = describeObject(result.object ?? document.value);
      for (const error of result.errors) {
        problems.push({ source: document.file, message: `${where(document)}: ${name}: ${formatFieldError(error)}` });
      }
      return;
    }
    entry.objects.push(result.object!);
  }
}
