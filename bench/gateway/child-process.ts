// Child processes of the benchmark: started, watched (their last output kept for error messages),
// probed until they answer HTTP, and stopped together with any processes they started.
import { type ChildProcess, spawn } from 'node:child_process';
import { request } from 'node:http';
import { createServer } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { alive, descendants } from './process-tree.ts';

// Enough for an error line followed by a command's whole usage text (gw run's is over 4 KiB).
const OUTPUT_TAIL_BYTES = 16_384;
const STOP_GRACE_MS = 3000;

/** Children not yet stopped, so that an interrupted run leaves nothing behind. */
const running = new Set<ChildHandle>();

/** Stops every child still running (on Ctrl-C or a crash of the harness). */
export async function stopAllChildren(): Promise<void> {
  await Promise.all([...running].map((child) => child.stop()));
}

export interface ChildHandle {
  readonly name: string;
  readonly pid: number;
  /** Settles when the process has ended, with how it ended ("exit code 2", "signal SIGTERM"). */
  readonly exited: Promise<string>;
  /** Whether the process has ended. */
  hasExited(): boolean;
  /** The last output of the process (stdout and stderr interleaved), trimmed. */
  outputTail(): string;
  /** The next IPC message (only for children started with `ipc: true`). */
  nextMessage(): Promise<unknown>;
  /** SIGTERM, then SIGKILL after a grace period; processes it started are stopped too. */
  stop(): Promise<void>;
}

export interface SpawnOptions {
  cwd?: string;
  env?: NodeJS.ProcessEnv;
  /** Open an IPC channel (for Node children that report results with process.send). */
  ipc?: boolean;
  /**
   * Discard standard output instead of keeping its tail: for a child that writes a line per
   * request, which this process would otherwise read on the cores the benchmark shares.
   */
  discardStdout?: boolean;
}

export function spawnChild(name: string, command: string, args: string[], options: SpawnOptions = {}): ChildHandle {
  const child: ChildProcess = spawn(command, args, {
    cwd: options.cwd,
    env: options.env ?? process.env,
    stdio: ['ignore', options.discardStdout ? 'ignore' : 'pipe', 'pipe', ...(options.ipc ? ['ipc' as const] : [])],
  });
  let tail = '';
  const keep = (chunk: Buffer) => {
    tail = (tail + chunk.toString('utf8')).slice(-OUTPUT_TAIL_BYTES);
  };
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);

  let ended: string | undefined;
  const exited = new Promise<string>((resolve) => {
    child.once('error', (error) => {
      ended = `failed to start: ${error.message}`;
      resolve(ended);
    });
    child.once('exit', (code, signal) => {
      ended = signal ? `signal ${signal}` : `exit code ${code}`;
      resolve(ended);
    });
  });

  const messages: unknown[] = [];
  const waiting: ((message: unknown) => void)[] = [];
  child.on('message', (message) => {
    const waiter = waiting.shift();
    if (waiter) waiter(message);
    else messages.push(message);
  });

  const handle: ChildHandle = {
    name,
    pid: child.pid ?? -1,
    exited,
    hasExited: () => ended !== undefined,
    outputTail: () => tail.trim(),
    nextMessage: () => {
      if (messages.length > 0) return Promise.resolve(messages.shift());
      return new Promise((resolve, reject) => {
        waiting.push(resolve);
        exited.then((how) =>
          reject(new Error(`${name} ended (${how}) before reporting${tail ? `: ${errorSummary(tail)}` : ''}`)),
        );
      });
    },
    stop: async () => {
      if (ended !== undefined || child.pid === undefined) return;
      // Collected before the signal: a cluster primary may exit before its workers do.
      const started = descendants(child.pid);
      child.kill('SIGTERM');
      const stopped = await Promise.race([exited.then(() => true), sleep(STOP_GRACE_MS).then(() => false)]);
      if (!stopped) {
        child.kill('SIGKILL');
        await exited;
      }
      for (const pid of started) {
        if (alive(pid)) process.kill(pid, 'SIGKILL');
      }
    },
  };
  running.add(handle);
  exited.then(() => running.delete(handle));
  return handle;
}

const ERROR_WORDS = /error|unknown|invalid|emerg|cannot|failed|refused|denied|not found|EADDRINUSE/i;
const MAX_SUMMARY_CHARS = 300;

/**
 * The line of a process's output that says what went wrong, for a table cell or an error
 * message: the first line that reads like an error (usage text and stack frames follow it),
 * or else the last line.
 */
export function errorSummary(text: string): string {
  const lines = text
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line !== '' && !line.startsWith('at '));
  const line = lines.find((candidate) => ERROR_WORDS.test(candidate)) ?? lines.at(-1) ?? '';
  return line.length > MAX_SUMMARY_CHARS ? `${line.slice(0, MAX_SUMMARY_CHARS)}…` : line;
}

/** A TCP port that was free a moment ago on 127.0.0.1. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => {
        if (address && typeof address === 'object') resolve(address.port);
        else reject(new Error('no port assigned'));
      });
    });
  });
}

/** Whether a GET of `url` gets any HTTP answer (any status) within `timeoutMs`. */
function answers(url: string, timeoutMs = 500): Promise<boolean> {
  return new Promise((resolve) => {
    const req = request(url, { method: 'GET', timeout: timeoutMs, agent: false }, (res) => {
      res.resume();
      resolve(true);
    });
    req.on('timeout', () => req.destroy());
    req.on('error', () => resolve(false));
    req.end();
  });
}

/**
 * Waits until `url` answers HTTP. Fails when the child ends first or after `timeoutMs`, with the
 * child's last output in the message.
 */
export async function waitUntilAnswers(child: ChildHandle, url: string, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (child.hasExited()) {
      const how = await child.exited;
      const output = errorSummary(child.outputTail());
      throw new Error(`${child.name} ended (${how})${output ? `: ${output}` : ''}`);
    }
    if (await answers(url)) return;
    await sleep(50);
  }
  const output = errorSummary(child.outputTail());
  throw new Error(`${child.name} did not answer ${url} within ${timeoutMs} ms${output ? `: ${output}` : ''}`);
}
