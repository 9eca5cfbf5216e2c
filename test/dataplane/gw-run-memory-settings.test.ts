// The memory settings `gw run` starts its serving process with (bin/gw.js): V8's young generation
// capped at 8 MiB semi-spaces, the old generation's growth between full collections at half its
// live size, one glibc malloc arena and a fixed mmap threshold; each kept as the user set it. Read from the running process's /proc entries (Linux).
import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { freePort, gatewayYaml } from '../helpers/gateway.ts';
import { until } from '../helpers/until.ts';

const gwBin = fileURLToPath(new URL('../../bin/gw.js', import.meta.url));
const linux = process.platform === 'linux';

/** `gw run -f` on a one-listener Gateway; resolves once the process has replaced itself with its settings. */
async function startRun(
  env: NodeJS.ProcessEnv,
  nodeFlags: string[] = [],
): Promise<{ child: ChildProcess; cmdline: string[]; environ: string[]; dir: string }> {
  const dir = mkdtempSync(join(tmpdir(), 'gw-run-settings-'));
  writeFileSync(join(dir, 'gateway.yaml'), gatewayYaml(await freePort()));
  const child = spawn(
    process.execPath,
    [...nodeFlags, gwBin, 'run', '-f', dir, '--admin-port', String(await freePort())],
    {
      env,
      stdio: 'ignore',
    },
  );
  const cmdline = () => readFileSync(`/proc/${child.pid}/cmdline`, 'utf8').split('\0');
  assert.ok(
    await until(() => cmdline().includes('--heap-growing-percent=50'), 10_000),
    'gw run did not restart itself with its settings',
  );
  const environ = readFileSync(`/proc/${child.pid}/environ`, 'utf8').split('\0');
  return { child, cmdline: cmdline(), environ, dir };
}

describe('gw run memory settings', { skip: !linux && 'reads /proc (Linux)' }, () => {
  const started: { child: ChildProcess; dir: string }[] = [];
  after(async () => {
    for (const { child, dir } of started) {
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      await exited;
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('serves with 8 MiB semi-spaces, old-generation growth of 50%, one malloc arena and a fixed mmap threshold', async () => {
    const env = { ...process.env };
    delete env.MALLOC_ARENA_MAX;
    delete env.MALLOC_MMAP_THRESHOLD_;
    const run = await startRun(env);
    started.push(run);
    assert.ok(run.cmdline.includes('--max-semi-space-size=8'), run.cmdline.join(' '));
    assert.ok(run.environ.includes('MALLOC_ARENA_MAX=1'), run.environ.join(' '));
    assert.ok(run.environ.includes('MALLOC_MMAP_THRESHOLD_=131072'), run.environ.join(' '));
  });

  it('keeps a semi-space size the user gave Node', async () => {
    const run = await startRun(process.env, ['--max-semi-space-size=32']);
    started.push(run);
    assert.ok(run.cmdline.includes('--max-semi-space-size=32'), run.cmdline.join(' '));
    assert.ok(!run.cmdline.includes('--max-semi-space-size=8'), run.cmdline.join(' '));
  });

  it('keeps a number of arenas and an mmap threshold the user set', async () => {
    const run = await startRun({ ...process.env, MALLOC_ARENA_MAX: '4', MALLOC_MMAP_THRESHOLD_: '1048576' });
    started.push(run);
    assert.ok(run.environ.includes('MALLOC_ARENA_MAX=4'));
    assert.ok(!run.environ.includes('MALLOC_ARENA_MAX=1'));
    assert.ok(run.environ.includes('MALLOC_MMAP_THRESHOLD_=1048576'));
    assert.ok(!run.environ.includes('MALLOC_MMAP_THRESHOLD_=131072'));
  });
});
