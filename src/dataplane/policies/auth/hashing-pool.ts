// The password-hashing pool of basic authentication: a few worker threads (hashing-worker.ts) that
// check passwords off the event loop, so that a flood of wrong passwords costs the gateway threads
// it can spare and never the event loop every other request needs. Checks are bounded: at most
// MAX_PENDING admitted at once (the next is refused at once), none waits for a thread longer than
// MAX_WAIT_MS. Threads start with the first check, and stop when the pool is closed — by the
// policy runtime once no configuration has a policy that needs it, or with the data plane.
import { availableParallelism } from 'node:os';
import { Worker } from 'node:worker_threads';
import { siblingModule } from '../../../util/sibling-module.ts';
import type { PolicyRuntime } from '../runtime.ts';
import type { HashingAnswer, HashingJob } from './hashing-worker.ts';

/** Why a check could not be made; basic.ts answers 503 for every one. */
export type UnavailableReason = 'full' | 'waited' | 'closed' | 'failed';

export class HashingUnavailable extends Error {
  readonly reason: UnavailableReason;
  constructor(reason: UnavailableReason, message: string) {
    super(message);
    this.reason = reason;
  }
}

export interface HashingPoolSettings {
  /** Threads (default: one per core but one, kept for the event loop; at least 1, at most 2). */
  threads: number;
  /** Checks admitted at once, running or waiting; one more is refused at once. */
  maxPending: number;
  /** How long a check may wait for a thread before it is refused. */
  maxWaitMs: number;
}

const MAX_THREADS = 2;
/** Per thread: eight attacking connections each fit, and a real client's check waits behind them. */
const PENDING_PER_THREAD = 16;
const MAX_WAIT_MS = 2000;

export function defaultHashingPoolSettings(): HashingPoolSettings {
  const threads = Math.min(MAX_THREADS, Math.max(1, availableParallelism() - 1));
  return { threads, maxPending: PENDING_PER_THREAD * threads, maxWaitMs: MAX_WAIT_MS };
}

/** A check: the job for a thread (its id set when sent) and who waits for its answer. */
interface Check {
  job: Omit<HashingJob, 'id'>;
  resolve(matched: boolean): void;
  reject(error: HashingUnavailable): void;
  /** Refuses the check when it waits too long for a thread; cleared when a thread takes it. */
  waitTimer?: NodeJS.Timeout;
}

interface HashingThread {
  worker: Worker;
  /** The check it runs, with the id its answer carries. */
  running?: { id: number; check: Check };
}

const WORKER_FILE = siblingModule(import.meta.url, 'hashing-worker');
/** A hashing thread needs little memory; a bound keeps a broken one from growing the process. */
const THREAD_LIMITS = { maxOldGenerationSizeMb: 32, maxYoungGenerationSizeMb: 8 };

export class HashingPool {
  private readonly settings: HashingPoolSettings;
  private readonly threads = new Set<HashingThread>();
  private readonly waiting: Check[] = [];
  private pending = 0;
  private nextId = 1;
  private closed = false;
  /** Checks a thread has finished (matched or not), for tests and telemetry. */
  completed = 0;

  constructor(settings: HashingPoolSettings = defaultHashingPoolSettings()) {
    this.settings = settings;
  }

  /** Threads running now (0 until the first check). */
  get threadCount(): number {
    return this.threads.size;
  }

  /**
   * Whether the password matches the user's own hash, after the decoys when it does not.
   * Rejects with HashingUnavailable when the pool is full, the check waited too long, the pool
   * was closed, or its thread failed.
   */
  check(job: Omit<HashingJob, 'id'>): Promise<boolean> {
    if (this.closed) return Promise.reject(new HashingUnavailable('closed', 'the password checks were stopped'));
    if (this.pending >= this.settings.maxPending)
      return Promise.reject(new HashingUnavailable('full', 'too many password checks are in progress'));
    this.pending++;
    return new Promise<boolean>((resolve, reject) => {
      const check: Check = { job, resolve, reject };
      check.waitTimer = setTimeout(() => {
        this.waiting.splice(this.waiting.indexOf(check), 1);
        this.finish(check, new HashingUnavailable('waited', 'a password check waited too long for a thread'));
      }, this.settings.maxWaitMs);
      this.waiting.push(check);
      this.dispatch();
    });
  }

  /** Refuses every waiting check and stops the threads (a running check is refused too). */
  async close(): Promise<void> {
    this.closed = true;
    for (const check of this.waiting.splice(0))
      this.finish(check, new HashingUnavailable('closed', 'the password checks were stopped'));
    const threads = [...this.threads];
    this.threads.clear();
    for (const thread of threads)
      if (thread.running)
        this.finish(thread.running.check, new HashingUnavailable('closed', 'the password checks were stopped'));
    await Promise.all(threads.map((thread) => thread.worker.terminate()));
  }

  /** Gives waiting checks to idle threads, starting threads up to the limit. */
  private dispatch(): void {
    while (this.waiting.length > 0) {
      const thread = this.idleThread() ?? this.startThread();
      if (!thread) return;
      const check = this.waiting.shift()!;
      clearTimeout(check.waitTimer);
      const id = this.nextId++;
      thread.running = { id, check };
      // A thread keeps the process alive only while it works (an idle pool never holds up an exit).
      thread.worker.ref();
      // The password's own bytes, moved to the thread: a Buffer is often a view of a shared slab
      // holding other requests' data, and posting the view would copy the whole slab.
      const password = new Uint8Array(check.job.password);
      thread.worker.postMessage({ id, ...check.job, password } satisfies HashingJob, [password.buffer]);
    }
  }

  private idleThread(): HashingThread | undefined {
    for (const thread of this.threads) if (!thread.running) return thread;
    return undefined;
  }

  private startThread(): HashingThread | undefined {
    if (this.threads.size >= this.settings.threads) return undefined;
    const worker = new Worker(WORKER_FILE, { name: 'gw password hashing', resourceLimits: THREAD_LIMITS });
    const thread: HashingThread = { worker };
    worker.on('message', (answer: HashingAnswer) => this.answered(thread, answer));
    // A thread that fails (out of memory, a crash) is replaced by the next dispatch; its check is refused.
    const failed = () => {
      if (!this.threads.delete(thread)) return;
      if (thread.running)
        this.finish(thread.running.check, new HashingUnavailable('failed', 'a password-hashing thread failed'));
      thread.running = undefined;
      this.dispatch();
    };
    worker.on('error', failed);
    worker.on('exit', failed);
    this.threads.add(thread);
    return thread;
  }

  private answered(thread: HashingThread, answer: HashingAnswer): void {
    const running = thread.running;
    if (!running || running.id !== answer.id) return;
    thread.running = undefined;
    thread.worker.unref();
    this.completed++;
    if ('error' in answer) this.finish(running.check, new HashingUnavailable('failed', answer.error));
    else this.finish(running.check, answer.matched);
    this.dispatch();
  }

  private finish(check: Check, outcome: boolean | HashingUnavailable): void {
    clearTimeout(check.waitTimer);
    this.pending--;
    if (outcome instanceof HashingUnavailable) check.reject(outcome);
    else check.resolve(outcome);
  }
}

const POOL_KEY = 'basic authentication: password hashing pool';

/** The data plane's hashing pool (one per process), created on first use; closed by the runtime. */
export function hashingPool(runtime: PolicyRuntime): HashingPool {
  return runtime.use(POOL_KEY, () => new HashingPool());
}
