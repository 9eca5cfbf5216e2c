// The real kubectl against a fresh embedded API server, through the kubeconfig it writes, with its
// own HOME and a folder for the files a test applies. Tests that use it skip, loudly, where
// kubectl is not installed (CI installs it).
import assert from 'node:assert/strict';
import { execFile, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { skipWithoutTool } from '../helpers/missing-tool.ts';
import { startTestApiServer, type TestApiServer } from './helpers.ts';

export const KUBECTL = process.env.KUBECTL ?? 'kubectl';

export const kubectlSkip = skipWithoutTool(
  'kubectl',
  spawnSync(KUBECTL, ['version', '--client'], { encoding: 'utf8' }).error === undefined
    ? undefined
    : `looked for "${KUBECTL}": the embedded API server's kubectl tests did not run; install kubectl (bash .ci/install-kubectl DIR) or set KUBECTL`,
);

export interface KubectlResult {
  code: number;
  stdout: string;
  stderr: string;
}

export interface KubectlSession {
  api: TestApiServer;
  /** HOME of kubectl (its cache lives there). */
  home: string;
  /** The folder `file` writes to. */
  files: string;
  /** The environment kubectl runs with (KUBECONFIG of the server). */
  env(): NodeJS.ProcessEnv;
  run(...args: string[]): Promise<KubectlResult>;
  /** Runs kubectl and returns its standard output; fails the test when it exits non-zero. */
  ok(...args: string[]): Promise<string>;
  /** Writes a file for kubectl to read; returns its path. */
  file(name: string, text: string): string;
  close(): Promise<void>;
}

export async function startKubectlSession(): Promise<KubectlSession> {
  const api = await startTestApiServer();
  const home = mkdtempSync(join(tmpdir(), 'gw-kubectl-home-'));
  const files = mkdtempSync(join(tmpdir(), 'gw-kubectl-files-'));
  const env = () => ({
    ...process.env,
    HOME: home,
    KUBECONFIG: join(api.dataDir, 'kubeconfig'),
    KUBECACHEDIR: join(home, 'cache'),
  });
  const run = (...args: string[]) =>
    new Promise<KubectlResult>((resolve) => {
      execFile(KUBECTL, args, { env: env(), timeout: 30_000 }, (error, stdout, stderr) => {
        resolve({ code: error ? ((error as { code?: number }).code ?? 1) : 0, stdout, stderr });
      });
    });
  return {
    api,
    home,
    files,
    env,
    run,
    async ok(...args) {
      const result = await run(...args);
      assert.equal(result.code, 0, `kubectl ${args.join(' ')}: ${result.stderr}`);
      return result.stdout;
    },
    file(name, text) {
      const path = join(files, name);
      writeFileSync(path, text);
      return path;
    },
    async close() {
      await api.close();
      rmSync(home, { recursive: true, force: true });
      rmSync(files, { recursive: true, force: true });
    },
  };
}
