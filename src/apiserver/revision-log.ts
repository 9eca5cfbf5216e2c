// The API server's durable storage: an embedded SQLite database (node:sqlite) kept as a revision
// log. One global counter numbers every change (it is the resourceVersion clients see); a table
// holds the current objects and another a bounded log of the recent changes, so that a watch can
// resume from a recent revision and a list can be served as of one. Older revisions are
// compacted away: asking for one is answered as kube-apiserver does, with 410 Gone.
//
// Durability: WAL journal with synchronous=FULL. A write is acknowledged (the call returns) only
// after its transaction's WAL frames are on disk, so neither a killed process nor a lost machine
// loses an acknowledged write; NORMAL would survive a killed process but not a power cut, and
// the fsync per commit costs about 0.2 ms on a local SSD (docs/apiserver.md).
import { chmodSync, closeSync, existsSync, mkdirSync, openSync } from 'node:fs';
import { dirname } from 'node:path';
import { DatabaseSync, type StatementSync } from 'node:sqlite';

export type ChangeType = 'ADDED' | 'MODIFIED' | 'DELETED';

/** One change, as written to the log. */
export interface Change {
  /** The revision this change creates: one more than the change before it. */
  revision: number;
  /** The store's kind key ("gw.dev/GwBackend", "/Secret"). */
  kind: string;
  /** "namespace/name", or "name" for cluster-scoped objects. */
  key: string;
  type: ChangeType;
  /** The object as JSON text after the change (for DELETED: its last state, at this revision). */
  body: string;
  /** The object as JSON text before the change (MODIFIED and DELETED), to rebuild past states. */
  previous?: string;
}

export interface StoredRow {
  kind: string;
  key: string;
  revision: number;
  body: string;
}

export interface RevisionLogOptions {
  /** How many changes are kept for watches and past lists; older ones are compacted (default 10,000). */
  historyLimit?: number;
}

/** A revision older than the log keeps: the caller must list again (HTTP 410 Gone, reason Expired). */
export class RevisionCompactedError extends Error {
  readonly requested: number;
  readonly oldest: number;
  constructor(requested: number, oldest: number) {
    // kube-apiserver's wording, which client libraries and users recognise.
    super(`too old resource version: ${requested} (${oldest})`);
    this.requested = requested;
    this.oldest = oldest;
  }
}

const DEFAULT_HISTORY_LIMIT = 10_000;

const SCHEMA = `
  CREATE TABLE IF NOT EXISTS objects (
    kind TEXT NOT NULL,
    key TEXT NOT NULL,
    revision INTEGER NOT NULL,
    body TEXT NOT NULL,
    PRIMARY KEY (kind, key)
  ) WITHOUT ROWID;
  CREATE TABLE IF NOT EXISTS changes (
    revision INTEGER PRIMARY KEY,
    kind TEXT NOT NULL,
    key TEXT NOT NULL,
    type TEXT NOT NULL,
    body TEXT NOT NULL,
    previous TEXT
  );
  CREATE TABLE IF NOT EXISTS settings (
    name TEXT PRIMARY KEY,
    value INTEGER NOT NULL
  ) WITHOUT ROWID;
`;

/**
 * The database holds Secrets: it and its WAL and shared-memory files are readable by their owner
 * alone. SQLite creates the -wal and -shm files with the database file's permissions, so creating
 * that file 0600 (before SQLite does, under the process umask) covers all three; files an earlier
 * version left 0644 are made 0600 too.
 */
function ownerOnly(path: string): void {
  closeSync(openSync(path, 'a', 0o600));
  for (const file of [path, `${path}-wal`, `${path}-shm`]) if (existsSync(file)) chmodSync(file, 0o600);
}

export class RevisionLog {
  private readonly db: DatabaseSync;
  private readonly historyLimit: number;
  /** Changes beyond the limit are deleted in batches of this many, not one per write. */
  private readonly compactBatch: number;
  private currentRevision: number;
  private compacted: number;
  private changeCount: number;
  private readonly statements: {
    upsert: StatementSync;
    remove: StatementSync;
    append: StatementSync;
    setting: StatementSync;
    trim: StatementSync;
    since: StatementSync;
    sinceOfKind: StatementSync;
    after: StatementSync;
  };

  /** Opens (creating if needed) the database at `path`; ":memory:" keeps it in memory (tests). */
  constructor(path: string, options: RevisionLogOptions = {}) {
    if (path !== ':memory:') {
      mkdirSync(dirname(path), { recursive: true });
      ownerOnly(path);
    }
    this.historyLimit = Math.max(1, options.historyLimit ?? DEFAULT_HISTORY_LIMIT);
    this.compactBatch = Math.max(1, Math.ceil(this.historyLimit / 10));
    this.db = new DatabaseSync(path);
    this.db.exec('PRAGMA journal_mode = WAL');
    this.db.exec('PRAGMA synchronous = FULL');
    // Another process opening the same database waits for our write instead of failing at once.
    this.db.exec('PRAGMA busy_timeout = 5000');
    this.db.exec(SCHEMA);
    const setting = (name: string) =>
      (this.db.prepare('SELECT value FROM settings WHERE name = ?').get(name)?.value as number | undefined) ?? 0;
    this.currentRevision = setting('revision');
    this.compacted = setting('compacted');
    this.changeCount = Number(this.db.prepare('SELECT COUNT(*) AS n FROM changes').get()!.n);
    this.statements = {
      upsert: this.db.prepare(
        'INSERT INTO objects (kind, key, revision, body) VALUES (?, ?, ?, ?) ' +
          'ON CONFLICT (kind, key) DO UPDATE SET revision = excluded.revision, body = excluded.body',
      ),
      remove: this.db.prepare('DELETE FROM objects WHERE kind = ? AND key = ?'),
      append: this.db.prepare(
        'INSERT INTO changes (revision, kind, key, type, body, previous) VALUES (?, ?, ?, ?, ?, ?)',
      ),
      setting: this.db.prepare(
        'INSERT INTO settings (name, value) VALUES (?, ?) ON CONFLICT (name) DO UPDATE SET value = excluded.value',
      ),
      trim: this.db.prepare('DELETE FROM changes WHERE revision <= ?'),
      since: this.db.prepare('SELECT * FROM changes WHERE revision > ? ORDER BY revision'),
      sinceOfKind: this.db.prepare('SELECT * FROM changes WHERE revision > ? AND kind = ? ORDER BY revision'),
      after: this.db.prepare('SELECT * FROM changes WHERE revision > ? AND kind = ? ORDER BY revision DESC'),
    };
  }

  /** The revision of the last change (0 for an empty log). */
  get revision(): number {
    return this.currentRevision;
  }

  /** The oldest revision a watch can start from or a list be served at. */
  get oldestRevision(): number {
    return this.compacted;
  }

  /** Every current object (read once at start). */
  objects(): StoredRow[] {
    return this.db.prepare('SELECT kind, key, revision, body FROM objects ORDER BY kind, key').all() as never;
  }

  /**
   * Writes changes in one transaction. Each change's revision must follow the one before; the
   * call returns only once the transaction is durable. On failure nothing is written and the
   * log's revision is unchanged.
   */
  append(changes: readonly Change[]): void {
    if (changes.length === 0) return;
    changes.forEach((change, index) => {
      if (change.revision !== this.currentRevision + index + 1) {
        throw new Error(
          `change ${index} has revision ${change.revision}, expected ${this.currentRevision + index + 1}`,
        );
      }
    });
    const last = changes[changes.length - 1]!.revision;
    let compactTo = this.compacted;
    const countAfter = this.changeCount + changes.length;
    if (countAfter > this.historyLimit + this.compactBatch) compactTo = last - this.historyLimit;
    this.db.exec('BEGIN IMMEDIATE');
    try {
      for (const change of changes) {
        if (change.type === 'DELETED') this.statements.remove.run(change.kind, change.key);
        else this.statements.upsert.run(change.kind, change.key, change.revision, change.body);
        this.statements.append.run(
          change.revision,
          change.kind,
          change.key,
          change.type,
          change.body,
          change.previous ?? null,
        );
      }
      this.statements.setting.run('revision', last);
      if (compactTo !== this.compacted) {
        this.statements.trim.run(compactTo);
        this.statements.setting.run('compacted', compactTo);
      }
      this.db.exec('COMMIT');
    } catch (error) {
      if (this.db.isTransaction) this.db.exec('ROLLBACK');
      throw error;
    }
    this.currentRevision = last;
    if (compactTo !== this.compacted) {
      this.changeCount = last - compactTo;
      this.compacted = compactTo;
    } else {
      this.changeCount = countAfter;
    }
  }

  /** The changes after `revision`, oldest first (of one kind, or all). */
  changesSince(revision: number, kind?: string): Change[] {
    this.checkRetained(revision);
    const rows =
      kind === undefined ? this.statements.since.all(revision) : this.statements.sinceOfKind.all(revision, kind);
    return rows.map(rowToChange);
  }

  /** The changes of a kind after `revision`, newest first: what to undo to see the kind as of `revision`. */
  changesToUndo(revision: number, kind: string): Change[] {
    this.checkRetained(revision);
    return this.statements.after.all(revision, kind).map(rowToChange);
  }

  /** Throws RevisionCompactedError when the changes after `revision` are no longer all kept. */
  checkRetained(revision: number): void {
    if (revision < this.compacted) throw new RevisionCompactedError(revision, this.compacted);
  }

  close(): void {
    if (this.db.isOpen) this.db.close();
  }
}

function rowToChange(row: Record<string, unknown>): Change {
  const change: Change = {
    revision: Number(row.revision),
    kind: row.kind as string,
    key: row.key as string,
    type: row.type as ChangeType,
    body: row.body as string,
  };
  if (row.previous !== null && row.previous !== undefined) change.previous = row.previous as string;
  return change;
}
