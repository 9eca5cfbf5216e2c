// gw run --log-level and gw controller --log-level, from child processes: the filter applies to
// gw's own messages of every module, in one process and in workers, in both formats; the access
// log is not filtered; a filter gw cannot read is an argument error.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { type GwProcess, runGw, spawnGw } from '../helpers/cli.ts';
import { freePort, gatewayYaml, webRouteYaml } from '../helpers/gateway.ts';
import { REFUSED_TUNNEL_POLICY_YAML } from '../helpers/objects.ts';
import { until } from '../helpers/until.ts';

async function stop(gw: GwProcess): Promise<void> {
  gw.child.kill('SIGTERM');
  assert.equal(await gw.exited, 0, gw.stderr);
}

describe('--log-level', () => {
  let upstream: Server;
  let dir: string;
  let port: number;
  /** A second configuration whose requests are each a 5xx of gw's own. */
  let brokenDir: string;
  let brokenPort: number;

  before(async () => {
    upstream = createServer((_request, response) => response.end('hello'));
    await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
    dir = mkdtempSync(join(tmpdir(), 'gw-log-level-'));
    port = await freePort();
    writeFileSync(
      join(dir, 'gw.yaml'),
      gatewayYaml(port) + webRouteYaml((upstream.address() as { port: number }).port),
    );
    brokenDir = mkdtempSync(join(tmpdir(), 'gw-log-level-broken-'));
    brokenPort = await freePort();
    // A field the data plane refuses: every request routed by it is answered 500 by gw itself.
    writeFileSync(
      join(brokenDir, 'gw.yaml'),
      gatewayYaml(brokenPort) + webRouteYaml(await freePort()) + REFUSED_TUNNEL_POLICY_YAML,
    );
  });

  after(async () => {
    await new Promise<void>((resolve) => upstream.close(() => resolve()));
    rmSync(dir, { recursive: true, force: true });
    rmSync(brokenDir, { recursive: true, force: true });
  });

  it('warn: no info messages, warnings and the access log still written (json)', async () => {
    const gw = spawnGw(['run', '-f', dir, '--admin-port', '0', '--log-level', 'warn']);
    let stdout = '';
    gw.child.stdout!.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
    });
    try {
      assert.ok(
        await until(async () => (await fetch(`http://127.0.0.1:${port}/`).catch(() => undefined))?.ok === true, 10_000),
      );
      assert.ok(await until(() => stdout.includes('"scope":"request"'), 5000), 'the access log is not filtered');
      // An unknown field is a warning: written.
      writeFileSync(
        join(dir, 'extra.yaml'),
        'apiVersion: gw.dev/v1alpha1\nkind: GwBackend\nmetadata: {name: x}\nspec: {static: {host: a, port: 1, hots: b}}\n',
      );
      await gw.waitForLog(/"level":"warn","scope":"run","message":"configuration/);
    } finally {
      rmSync(join(dir, 'extra.yaml'), { force: true });
      await stop(gw);
    }
    assert.doesNotMatch(gw.stderr, /"level":"info"/, gw.stderr);
  });

  it('debug: the configuration updates too, in the text format', async () => {
    const gw = spawnGw(['run', '-f', dir, '--admin-port', '0', '--log-level', 'debug', '--log-format', 'text']);
    try {
      await gw.waitForLog(
        /Z DEBUG run: configuration update \((fast|full) pass, \d+ ms\): 1 changed, 0 removed changed=default\/ai/,
      );
      await gw.waitForLog(/Z INFO {2}run: Gateway default\/ai: serving/);
    } finally {
      await stop(gw);
    }
    const quiet = spawnGw(['run', '-f', dir, '--admin-port', '0', '--log-format', 'text']);
    try {
      await quiet.waitForLog(/serving http HTTP/);
    } finally {
      await stop(quiet);
    }
    assert.doesNotMatch(quiet.stderr, /DEBUG/, 'info by default');
  });

  for (const workers of ['1', '2']) {
    it(`dataplane::failures=off silences gw's own 5xx lines, the rest of the data plane and run still log (--workers ${workers})`, async () => {
      const loud = spawnGw(['run', '-f', brokenDir, '--admin-port', '0', '--workers', workers]);
      try {
        // Worker processes load gw's modules first, which a busy machine makes slow.
        await loud.waitForLog(/serving http HTTP/, 30_000);
        assert.ok((await fetch(`http://127.0.0.1:${brokenPort}/`)).status >= 500);
        await loud.waitForLog(
          /"level":"error","scope":"dataplane::failures","message":"Gateway default\/ai: request \S+ answered 50\d/,
        );
      } finally {
        await stop(loud);
      }
      const quiet = spawnGw([
        'run',
        '-f',
        brokenDir,
        '--admin-port',
        '0',
        '--workers',
        workers,
        '--log-level',
        'info,dataplane::failures=off',
      ]);
      try {
        await quiet.waitForLog(/serving http HTTP/, 30_000);
        assert.ok((await fetch(`http://127.0.0.1:${brokenPort}/`)).status >= 500);
      } finally {
        await stop(quiet);
      }
      assert.doesNotMatch(quiet.stderr, /answered 50\d/);
      assert.match(quiet.stderr, /"scope":"run","message":"stopping"/);
    });
  }

  it('a filter gw cannot read is an argument error (exit 2), on gw run and gw controller', async () => {
    const run = await runGw(['run', '-f', dir, '--log-level', 'warn,mcp=debug']);
    assert.equal(run.code, 2);
    assert.match(run.stderr, /^gw run: --log-level "mcp=debug": unknown module "mcp" \(gw's modules: run, /);
    const controller = await runGw(['controller', '--log-level', 'loud']);
    assert.equal(controller.code, 2);
    assert.match(controller.stderr, /^gw controller: --log-level "loud" is neither a level nor a module/);
  });
});
