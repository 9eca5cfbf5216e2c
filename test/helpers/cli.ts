// Runs the gw command: in-process with captured output (and optional standard input), or as a
// child process the way a user runs it.
import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { main } from '../../src/cli/main.ts';

const GW = new URL('../../bin/gw.js', import.meta.url).pathname;

export async function runGw(args: string[], stdin = ''): Promise<{ code: number; stdout: string; stderr: string }> {
  let stdout = '';
  let stderr = '';
  const code = await main(args, {
    stdout: (text) => {
      stdout += text;
    },
    stderr: (text) => {
      stderr += text;
    },
    readStdin: () => stdin,
  });
  return { code, stdout, stderr };
}

export interface GwProcess {
  /** Standard output is piped and left to the test to read. */
  child: ChildProcess;
  /** Everything the child has written to standard error so far. */
  readonly stderr: string;
  /** Resolves with the match once `pattern` appears in standard error; rejects after `ms`. */
  waitForLog(pattern: RegExp, ms?: number): Promise<RegExpMatchArray>;
  /** The exit code, once the child exits. */
  exited: Promise<number | null>;
}

/** `bin/gw.js args` in a child process (this environment and `env`), its standard error collected. */
export function spawnGw(args: string[], env: Readonly<Record<string, string>> = {}): GwProcess {
  const child = spawn(process.execPath, [GW, ...args], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, ...env },
  });
  let stderr = '';
  child.stderr!.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const waitForLog = (pattern: RegExp, ms = 10_000) =>
    new Promise<RegExpMatchArray>((resolve, reject) => {
      const timer = setTimeout(() => {
        child.stderr!.off('data', check);
        reject(new Error(`no log line like ${pattern} in:\n${stderr}`));
      }, ms);
      function check() {
        const match = stderr.match(pattern);
        if (match) {
          clearTimeout(timer);
          child.stderr!.off('data', check);
          resolve(match);
        }
      }
      child.stderr!.on('data', check);
      check();
    });
  return {
    child,
    get stderr() {
      return stderr;
    },
    waitForLog,
    exited,
  };
}

/** The status lines `gw status` prints for one object ("GwBackend default/x" up to the next object). */
export async function statusOf(dir: string, object: string): Promise<string> {
  const result = await runGw(['status', '-f', dir]);
  assert.equal(result.code, 0, result.stderr);
  const start = result.stdout.indexOf(`${object}\n`);
  assert.notEqual(start, -1, `gw status lists ${object}:\n${result.stdout}`);
  const rest = result.stdout.slice(start + object.length + 1);
  const end = rest.search(/^\S/m);
  return end === -1 ? rest : rest.slice(0, end);
}
