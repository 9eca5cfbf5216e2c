// gw as an npm package, the way a user gets it: `npm pack` in the checkout (its prepack builds
// dist/), `npm install -g` of the tarball into a temporary prefix and `npx` of the tarball, then
// the installed gw run on the pinned Node 24 and started by an older Node (which re-runs it on
// the Node 24 it depends on): gw --version, a command, and `gw run -f` serving an authenticated request (with
// node:cluster workers on Node 24). npm reads the registry through its cache first
// (--prefer-offline), so an install costs a few seconds where the checkout's own `npm ci` filled
// the cache. The slowest test of the suite: about 30 s on a quiet machine, 60-100 s on a busy one.
import assert from 'node:assert/strict';
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { homedir, tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { promisify } from 'node:util';
import bcrypt from 'bcryptjs';
import { freePort, gatewayYaml, webRouteYaml } from '../helpers/gateway.ts';
import { closeServer, listen } from '../helpers/http-server.ts';
import { OLDER_NODE, skipWithoutOlderNode } from '../helpers/older-node.ts';
import { trafficPolicyYaml } from '../helpers/policy-yaml.ts';
import { until } from '../helpers/until.ts';

const checkout = new URL('../../', import.meta.url).pathname;
const run = promisify(execFile);

/**
 * The environment of a user's shell: no npm lifecycle variables (this suite may run under `npm
 * test`) and no node_modules/.bin on PATH, so that `node` there is the machine's own; `nodeFirst`
 * puts a directory holding another `node` first.
 */
function userEnv(nodeFirst?: string): NodeJS.ProcessEnv {
  const env = Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith('npm_')));
  const path = (env.PATH ?? '').split(delimiter).filter((dir) => dir !== '' && !dir.includes('node_modules'));
  env.PATH = [...(nodeFirst ? [nodeFirst] : []), ...path].join(delimiter);
  return env;
}

// Basic authentication with a bcrypt hash: gw checks it on a hashing thread, another module it
// starts by path (src/dataplane/policies/auth/hashing-pool.ts).
const USER = 'alice';
const PASSWORD = 'package-test-password';
const BASIC_AUTH = trafficPolicyYaml('users', 'web', {
  basicAuthentication: { users: [`${USER}:${bcrypt.hashSync(PASSWORD, 4)}`] },
});
const AUTHORIZATION = `Basic ${Buffer.from(`${USER}:${PASSWORD}`).toString('base64')}`;

const NPM_QUIET = ['--prefer-offline', '--no-audit', '--no-fund', '--no-update-notifier', '--loglevel=error'];

describe('the npm package', { timeout: 300_000 }, () => {
  const work = mkdtempSync(join(tmpdir(), 'gw-package-'));
  const prefix = join(work, 'prefix');
  const installed = join(prefix, 'lib', 'node_modules', 'gw');
  const gw = join(prefix, 'bin', 'gw');
  const examples = join(installed, 'examples');
  /** The Node 24 that the installed gw depends on: first on PATH, gw's `#!/usr/bin/env node` runs on it. */
  const pinnedNodeDir = join(installed, 'node_modules', 'node', 'bin');
  const npxCache = join(homedir(), '.npm', '_npx');
  const npxBefore = new Set(existsSync(npxCache) ? readdirSync(npxCache) : []);
  let tarball: string;
  let npxValidate: Promise<{ stdout: string; stderr: string }>;
  let upstream: Server;
  let upstreamPort: number;

  before(async () => {
    const packed = await run('npm', ['pack', '--pack-destination', work, '--loglevel=error'], {
      cwd: checkout,
      env: userEnv(),
    });
    tarball = join(work, packed.stdout.trim().split('\n').at(-1)!);
    // npx installs the package again (into npm's cache), at the same time as the global install;
    // its test awaits it.
    npxValidate = run(
      'npx',
      [
        '--yes',
        ...NPM_QUIET,
        `--package=${tarball}`,
        'gw',
        'validate',
        '-f',
        join(checkout, 'examples', 'quickstart.yaml'),
      ],
      { cwd: work, env: userEnv() },
    );
    npxValidate.catch(() => {}); // awaited by its test; not an unhandled rejection meanwhile
    await run('npm', ['install', '--global', '--prefix', prefix, ...NPM_QUIET, tarball], {
      cwd: work,
      env: userEnv(),
    });
    upstream = createServer((_request, response) => response.end('hello from upstream'));
    upstreamPort = await listen(upstream);
  });

  after(async () => {
    await npxValidate?.catch(() => {});
    await closeServer(upstream);
    rmSync(work, { recursive: true, force: true });
    // npx installs into npm's cache (_npx/<hash of the tarball's path>): remove what this test added.
    for (const entry of existsSync(npxCache) ? readdirSync(npxCache) : []) {
      if (!npxBefore.has(entry) && existsSync(join(npxCache, entry, 'node_modules', 'gw')))
        rmSync(join(npxCache, entry), { recursive: true, force: true });
    }
  });

  it('ships the built JavaScript, not the TypeScript sources, and depends on the pinned Node 24', async () => {
    assert.ok(existsSync(join(installed, 'dist', 'cli', 'main.js')));
    assert.ok(
      existsSync(join(installed, 'dist', 'dataplane', 'policies', 'grpc', 'protos', 'google', 'rpc', 'status.proto')),
    );
    // The web UI's files: its shell and modules, copied as they are (src/admin/ui/assets).
    for (const asset of ['index.html', 'app.js', 'pages.js', 'style.css'])
      assert.ok(existsSync(join(installed, 'dist', 'admin', 'ui', 'assets', asset)), asset);
    assert.ok(!existsSync(join(installed, 'src')), 'src/ is not in the package');
    const pinned = await run(join(pinnedNodeDir, 'node'), ['--version']);
    assert.match(pinned.stdout, /^v24\./);
  });

  const version = (JSON.parse(readFileSync(join(checkout, 'package.json'), 'utf8')) as { version: string }).version;

  it('gw --version and gw validate run on Node 24', async () => {
    const env = userEnv(pinnedNodeDir);
    assert.equal((await run(gw, ['--version'], { env })).stdout, `gw ${version}\n`);
    const result = await run(gw, ['validate', '-f', join(examples, 'quickstart.yaml')], { env });
    assert.match(result.stdout, /^\d+ valid$/m);
  });

  it('gw --version and gw crds run when an older Node starts it', { skip: skipWithoutOlderNode() }, async () => {
    assert.equal((await run(OLDER_NODE, [gw, '--version'], { env: userEnv() })).stdout, `gw ${version}\n`);
    const result = await run(OLDER_NODE, [gw, 'crds'], { env: userEnv(), maxBuffer: 64 * 1024 * 1024 });
    assert.match(result.stdout, /^kind: CustomResourceDefinition$/m);
  });

  it('npx of the tarball runs gw', async () => {
    assert.match((await npxValidate).stdout, /^\d+ valid$/m);
  });

  /**
   * `gw run -f` of the installed package (`command args`, then `runArgs` after run's own) until it
   * answers an authenticated request through to the upstream; then SIGTERM.
   */
  async function servesARequest(command: string, args: string[], env: NodeJS.ProcessEnv, runArgs: string[] = []) {
    const dir = mkdtempSync(join(work, 'config-'));
    const port = await freePort();
    writeFileSync(join(dir, 'gateway.yaml'), `${gatewayYaml(port)}${webRouteYaml(upstreamPort)}---\n${BASIC_AUTH}`);
    const child: ChildProcess = spawn(command, [...args, 'run', '-f', dir, '--admin-port', '0', ...runArgs], {
      env,
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    child.stderr!.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    try {
      let answer = '';
      const answered = await until(
        async () => {
          answer = await fetch(`http://127.0.0.1:${port}/`, { headers: { authorization: AUTHORIZATION } }).then(
            (response) => response.text(),
            () => '',
          );
          return answer === 'hello from upstream';
        },
        20_000,
        50,
      );
      assert.ok(answered, `no answer through gw on :${port} (last: ${JSON.stringify(answer)}); its log:\n${stderr}`);
      const wrong = `Basic ${Buffer.from(`${USER}:not-the-password`).toString('base64')}`;
      const refused = await fetch(`http://127.0.0.1:${port}/`, { headers: { authorization: wrong } });
      assert.equal(refused.status, 401, 'a wrong password is refused (checked on the hashing thread)');
    } finally {
      child.kill('SIGTERM');
    }
    assert.equal(await exited, 0, `gw run did not stop cleanly on SIGTERM:\n${stderr}`);
  }

  it('gw run -f --workers 2 serves a request on Node 24 and stops on SIGTERM', async () => {
    // Worker processes start a module by path (src/run/cluster-primary.ts): the built one here.
    await servesARequest(gw, [], userEnv(pinnedNodeDir), ['--workers', '2']);
  });

  it('gw run -f serves a request when an older Node starts it, and stops on SIGTERM', {
    skip: skipWithoutOlderNode(),
  }, async () => {
    await servesARequest(OLDER_NODE, [gw], userEnv());
  });
});
