// The file store: objects read from YAML/JSON files and directories, admitted like the API server
// would, and reloaded when the files change. A file that does not parse or validate never takes
// down a running gateway: the objects it last held keep serving and the problem is reported with
// the file, the document and the field path.
import { type FSWatcher, statSync, watch as watchPath } from 'node:fs';
import { dirname } from 'node:path';
import { findKind } from '../api/kinds/registry.ts';
import { describeProblem, loadFile, locationOf, resolveFiles, type SourceDocument } from '../api/load/documents.ts';
import { admit, describeObject, type KubeObject } from '../api/validate/admission.ts';
import { admissionLine } from '../api/validate/errors.ts';
import { MemoryStore } from './memory-store.ts';
import { kindKey, objectKey, type SourceProblem } from './store.ts';

export interface FileStoreOptions {
  recursive?: boolean;
  /** How long file events settle before a reload (editors write in several steps). */
  debounceMs?: number;
  /** Told after every load, with the problems found (empty when all is well). */
  onLoad?: (result: LoadReport) => void;
  /**
   * Keep objects of the kinds gw does not read (Deployments, RBAC...): true when the files are
   * applied into gw's API server, which stores them. Otherwise they are left out, and each is
   * reported in LoadReport.notServed.
   */
  keepNotRead?: boolean;
}

export interface LoadReport {
  /** Objects changed by this load (added, modified or deleted). */
  changes: number;
  /** Files read again (new or changed since the last load) or gone; 0 when nothing on disk changed. */
  filesChanged: number;
  /** Objects the files hold now (the last good ones of a file with problems). */
  objects: number;
  problems: SourceProblem[];
  /**
   * What admission warns about in objects that are served (an unknown field of a Gateway API or
   * core kind, which gw does not read), as gw validate prints it.
   */
  warnings: SourceProblem[];
  /** Objects of kinds gw does not read, left out (unless keepNotRead): one line each, saying why. */
  notServed: SourceProblem[];
}

/** Size and modification time: a file with the same stamp is not read again. */
function fileStamp(file: string): string | undefined {
  try {
    const stat = statSync(file);
    return `${stat.size}:${stat.mtimeMs}:${stat.ino}`;
  } catch {
    return undefined;
  }
}

export class FileStore extends MemoryStore {
  private readonly paths: string[];
  private readonly options: FileStoreOptions;
  /** The objects each file held when it was last valid, in file order. */
  private readonly lastGood = new Map<string, KubeObject[]>();
  /** What each file gave at its last read, and the size/mtime it had then. */
  private readonly files = new Map<
    string,
    {
      stamp: string | undefined;
      objects: KubeObject[];
      problems: SourceProblem[];
      warnings: SourceProblem[];
      notServed: SourceProblem[];
      invalid: boolean;
    }
  >();
  /** Which file each stored object ("kind key") came from. */
  private owners = new Map<string, string>();
  private currentProblems: SourceProblem[] = [];
  private readonly fsWatchers: FSWatcher[] = [];
  private reloadTimer: NodeJS.Timeout | undefined;

  constructor(paths: string[], options: FileStoreOptions = {}) {
    super();
    this.paths = paths;
    this.options = options;
  }

  /**
   * Reads the files and brings the store in line with them. Files whose size and modification
   * time are unchanged since the last load are not read again, and only objects of files that
   * changed are applied, so an edit of one file costs that file.
   */
  load(): LoadReport {
    const resolved = resolveFiles(this.paths, this.options.recursive ?? false);
    const seenFiles = new Set<string>();
    const changedFiles = new Set<string>();
    for (const file of resolved.files) {
      seenFiles.add(file);
      const stamp = fileStamp(file);
      const cached = this.files.get(file);
      if (cached && stamp !== undefined && cached.stamp === stamp) continue;
      changedFiles.add(file);
      this.files.set(file, { stamp, ...this.readFile(file) });
    }
    for (const file of this.files.keys()) {
      if (!seenFiles.has(file)) {
        this.files.delete(file); // the file is gone, and its objects with it
        changedFiles.add(file);
      }
    }

    const problems: SourceProblem[] = resolved.problems.map((problem) => ({
      source: problem.file,
      message: `${problem.file}: ${problem.message}`,
    }));
    // A file with any problem keeps serving what it last held; a valid file replaces it.
    const warnings: SourceProblem[] = [];
    const notServed: SourceProblem[] = [];
    const desired = new Map<string, { object: KubeObject; file: string }>();
    for (const file of [...this.files.keys()].sort()) {
      const entry = this.files.get(file)!;
      problems.push(...entry.problems);
      if (!entry.invalid) warnings.push(...entry.warnings);
      if (!entry.invalid) notServed.push(...entry.notServed);
      if (!entry.invalid) this.lastGood.set(file, entry.objects);
      for (const object of this.lastGood.get(file) ?? []) {
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
    for (const file of this.lastGood.keys()) if (!this.files.has(file)) this.lastGood.delete(file);

    let changes = 0;
    for (const [id, { object, file }] of desired) {
      if (!changedFiles.has(file) && this.owners.get(id) === file) continue;
      if (this.apply(object)) changes++;
      // A Pod's status in a file stands for its kubelet's report (KindDefinition.readsStatus).
      if (
        findKind(object.apiVersion, object.kind)?.readsStatus &&
        this.writeStatus(kindKey(object), objectKey(object), object.status)
      )
        changes++;
    }
    for (const id of this.owners.keys()) {
      if (desired.has(id)) continue;
      const space = id.indexOf(' ');
      if (this.delete(id.slice(0, space), id.slice(space + 1))) changes++;
    }
    this.owners = new Map([...desired].map(([id, { file }]) => [id, file]));
    this.currentProblems = problems;
    const report = {
      changes,
      filesChanged: changedFiles.size,
      objects: desired.size,
      problems,
      warnings,
      notServed,
    };
    this.options.onLoad?.(report);
    return report;
  }

  private readFile(file: string) {
    const loaded = loadFile(file);
    const entry = {
      objects: [] as KubeObject[],
      problems: [] as SourceProblem[],
      warnings: [] as SourceProblem[],
      notServed: [] as SourceProblem[],
      invalid: false,
    };
    for (const problem of loaded.problems) {
      entry.invalid = true;
      entry.problems.push({ source: problem.file, message: describeProblem(problem) });
    }
    for (const document of loaded.documents) this.admitDocument(document, entry);
    return entry;
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
    entry: {
      objects: KubeObject[];
      problems: SourceProblem[];
      warnings: SourceProblem[];
      notServed: SourceProblem[];
      invalid: boolean;
    },
  ): void {
    const result = admit(document.value, { fromFiles: true });
    const where = locationOf(document);
    const name = describeObject(result.object ?? document.value);
    if (result.errors.length > 0) {
      entry.invalid = true;
      for (const error of result.errors)
        entry.problems.push({ source: document.file, message: admissionLine(where, name, error, 'error') });
      return;
    }
    for (const warning of result.warnings)
      entry.warnings.push({ source: document.file, message: admissionLine(where, name, warning, 'warning') });
    const definition = findKind(result.object!.apiVersion, result.object!.kind);
    if (definition?.notRead !== undefined && !this.options.keepNotRead) {
      entry.notServed.push({
        source: document.file,
        message: `${where}: ${name}: not served: gw does not read a ${definition.kind} (${definition.notRead}); run gw with its API server (--api-port) to store it there, or apply it to a cluster`,
      });
      return;
    }
    entry.objects.push(result.object!);
  }
}
