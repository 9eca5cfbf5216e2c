// gw run as a user runs it: a child process serving the files, logging what it serves and the
// problems of an invalid file, and stopping cleanly on SIGTERM.
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { parseRunArgs } from '../../src/cli/run.ts';
import { spawnGw } from '../helpers/cli.ts';
import { freePort, gatewayYaml, holdPort, twoListenerGatewayYaml, webRouteYaml } from '../helpers/gateway.ts';

describe('gw run', () => {
  const dir = mkdtempSync(join(tmpdir(), 'gw-run-'));
  const upstream = createServer((_req, res) => res.end('hello from upstream'));
  after(() => {
    upstream.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('serves the files, reports an invalid edit with its path and keeps serving, warns of unknown fields, and stops on SIGTERM', async () => {
    await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
    const upstreamPort = (upstream.address() as { port: number }).port;
    const port = await freePort();
    writeFileSync(join(dir, 'gateway.yaml'), gatewayYaml(port));
    const route = webRouteYaml(upstreamPort);
    writeFileSync(join(dir, 'route.yaml'), route);
    // A kind gw does not read is not served, and the log says so (it would be stored with --api-port).
    writeFileSync(join(dir, 'workload.yaml'), 'apiVersion: v1\nkind: ServiceAccount\nmetadata: {name: ai}\n');
    const gw = spawnGw(['run', '-f', dir, '--admin-port', '0']);
    try {
      await gw.waitForLog(/Gateway default\/ai: serving http HTTP :\d+/);
      assert.match(
        gw.stderr,
        /"level":"warn","scope":"run","message":"objects not served \(kinds gw does not read\):\\n[^\n]*workload\.yaml: document 1: ServiceAccount default\/ai: not served: gw does not read a ServiceAccount/,
      );
      const response = await fetch(`http://127.0.0.1:${port}/`);
      assert.equal(await response.text(), 'hello from upstream');
      writeFileSync(join(dir, 'route.yaml'), route.replace(`port: ${upstreamPort}`, 'port: "not a port"'));
      await gw.waitForLog(/route\.yaml.*spec\.static\.port/);
      const again = await fetch(`http://127.0.0.1:${port}/`);
      assert.equal(await again.text(), 'hello from upstream', 'the last good configuration keeps serving');
      // An unknown field of a Gateway API kind is served without it, and said so on reload as
      // gw validate says it (issue 17 #10).
      writeFileSync(join(dir, 'route.yaml'), route.replace('parentRefs:', 'hostnamez: [a.example]\n  parentRefs:'));
      await gw.waitForLog(
        /"level":"warn","scope":"run","message":"configuration warnings[^\n]*\\n[^\n]*route\.yaml: document 2: HTTPRoute default\/web: warning: spec\.hostnamez: Unknown field/,
      );
      const served = await fetch(`http://127.0.0.1:${port}/`);
      assert.equal(await served.text(), 'hello from upstream');
    } finally {
      gw.child.kill('SIGTERM');
    }
    assert.equal(await gw.exited, 0);
  });

  it('a listener whose port is taken is logged as not served; the others serve; every port taken ends gw run with exit 1', async () => {
    const [free, taken] = [await freePort(), await freePort()];
    const holder = await holdPort(taken);
    const held = join(dir, 'held');
    try {
      mkdirSync(held);
      writeFileSync(join(held, 'gateway.yaml'), twoListenerGatewayYaml(free, taken));
      // The text format: one message a line, as a terminal shows them.
      const gw = spawnGw(['run', '-f', held, '--admin-port', '0', '--log-format', 'text']);
      try {
        await gw.waitForLog(
          new RegExp(`Gateway default/ai: NOT serving taken HTTP :${taken}: its port cannot be bound`),
        );
        assert.match(
          gw.stderr,
          new RegExp(
            `Gateway default/ai: cannot listen: port ${taken} on 127\\.0\\.0\\.1 is in use by another process \\(EADDRINUSE\\)`,
          ),
        );
        assert.match(gw.stderr, new RegExp(`Gateway default/ai: serving http HTTP :${free}\n`));
        assert.doesNotMatch(
          gw.stderr,
          new RegExp(`serving[^\n]*taken HTTP :${taken}(,|\n)`),
          'never said to be served',
        );
        assert.equal((await fetch(`http://127.0.0.1:${free}/`)).status, 404, 'the free listener answers');
      } finally {
        gw.child.kill('SIGTERM');
      }
      assert.equal(await gw.exited, 0);

      // Both ports taken: nothing at all can be served.
      const other = await holdPort(free);
      try {
        const none = spawnGw(['run', '-f', held, '--admin-port', '0']);
        assert.equal(await none.exited, 1, none.stderr);
        assert.match(none.stderr, /gw run: nothing can be served: no listener port could be bound/);
        assert.doesNotMatch(none.stderr, /: serving http|unsettled top-level await/);
      } finally {
        other.close();
      }
    } finally {
      holder.close();
    }
  });

  it('-f of a missing file is an error with exit 1, also when the admin port is taken too (never exit 13)', async () => {
    const missing = spawnGw(['run', '-f', join(dir, 'missing.yaml'), '--admin-port', '0']);
    assert.equal(await missing.exited, 1);
    const line = JSON.parse(missing.stderr) as { level: string; message: string };
    assert.deepEqual(
      [line.level, line.message],
      ['error', `gw run: -f ${join(dir, 'missing.yaml')}: no such file or directory`],
      'one line',
    );
    const adminPort = await freePort();
    const holder = await holdPort(adminPort);
    try {
      const both = spawnGw(['run', '-f', '/missing.yaml', '--admin-port', String(adminPort)]);
      assert.equal(await both.exited, 1);
      assert.match(both.stderr, /-f \/missing\.yaml: no such file or directory/);
      assert.doesNotMatch(both.stderr, /unsettled top-level await/);
    } finally {
      holder.close();
    }
  });

  it('an admin port that cannot be bound ends gw run with exit 1, naming the port, before any listener serves', async () => {
    const port = await freePort();
    writeFileSync(join(dir, 'gateway.yaml'), gatewayYaml(port));
    const adminPort = await freePort();
    const holder = await holdPort(adminPort);
    try {
      const gw = spawnGw(['run', '-f', join(dir, 'gateway.yaml'), '--admin-port', String(adminPort)]);
      assert.equal(await gw.exited, 1);
      assert.match(
        gw.stderr,
        new RegExp(
          `gw run: admin endpoints \\(/metrics, /healthz\\): port ${adminPort} on 127\\.0\\.0\\.1 is in use by another process \\(EADDRINUSE\\); choose another with --admin-port PORT \\(0 turns them off\\)`,
        ),
      );
      assert.doesNotMatch(gw.stderr, /serving/);
    } finally {
      holder.close();
    }
  });

  it('waits with every file invalid (no exit 13), and logs each successful reload, saying when the problems are fixed', async () => {
    const port = await freePort();
    const reloads = join(dir, 'reloads');
    mkdirSync(reloads);
    const good = gatewayYaml(port);
    writeFileSync(join(reloads, 'gateway.yaml'), good.replace('kind: Gateway\n', 'kind: Gateway\nspec: [\n'));
    const gw = spawnGw(['run', '-f', reloads, '--admin-port', '0', '--log-format', 'text']);
    try {
      await gw.waitForLog(
        /configuration problems[^\n]*\n[^\n]*gateway\.yaml: document 2 \(line \d+, column \d+\): malformed YAML/,
      );
      await new Promise((resolve) => setTimeout(resolve, 300));
      assert.equal(gw.child.exitCode, null, 'still running, waiting for the file to be fixed');
      writeFileSync(join(reloads, 'gateway.yaml'), good);
      await gw.waitForLog(/configuration reloaded: 2 objects, 2 changed; the problems reported before are fixed/);
      await gw.waitForLog(new RegExp(`Gateway default/ai: serving http HTTP :${port}`));
      // Broken again, then put back as it was: nothing changes in the objects, and the fix is said.
      writeFileSync(join(reloads, 'gateway.yaml'), 'kind: [\n');
      await gw.waitForLog(/configuration problems[\s\S]*configuration problems/);
      writeFileSync(join(reloads, 'gateway.yaml'), good);
      await gw.waitForLog(/configuration reloaded: 2 objects, 0 changed; the problems reported before are fixed/);
      // A good edit is one line too.
      writeFileSync(
        join(reloads, 'gateway.yaml'),
        good.replace('metadata: {name: ai}', 'metadata: {name: ai, labels: {a: b}}'),
      );
      await gw.waitForLog(/configuration reloaded: 2 objects, 1 changed\n/);
    } finally {
      gw.child.kill('SIGTERM');
    }
    assert.equal(await gw.exited, 0);
    assert.doesNotMatch(gw.stderr, /unsettled top-level await/);
  });

  it('takes the limits of what clients may cost as durations and sizes, the listener share 3/4 of the process budget', () => {
    const options = parseRunArgs([
      '-f',
      'x',
      '--request-header-timeout',
      '5s',
      '--request-body-idle-timeout',
      '1m',
      '--request-body-timeout',
      '2m30s',
      '--response-write-timeout',
      '45s',
      '--max-buffered-bytes',
      '256Mi',
    ]);
    assert.ok(typeof options !== 'string', options as string);
    assert.deepEqual(options.limits, {
      requestHeaderTimeoutMs: 5000,
      requestBodyIdleTimeoutMs: 60_000,
      requestBodyTimeoutMs: 150_000,
      responseWriteTimeoutMs: 45_000,
      maxBufferedBytes: 256 * 1024 * 1024,
      maxBufferedBytesPerListener: 192 * 1024 * 1024,
    });
    const defaults = parseRunArgs(['-f', 'x']);
    assert.ok(typeof defaults !== 'string');
    assert.equal(defaults.limits.requestHeaderTimeoutMs, 10_000);
    assert.equal(defaults.limits.maxBufferedBytesPerListener, 48 * 1024 * 1024);
    assert.match(
      String(parseRunArgs(['-f', 'x', '--request-body-timeout', 'soon'])),
      /--request-body-timeout: "soon" is not a duration/,
    );
    assert.match(
      String(parseRunArgs(['-f', 'x', '--max-buffered-bytes', '0'])),
      /--max-buffered-bytes must be more than 0/,
    );
  });

  it('rejects bad arguments with usage', () => {
    assert.match(String(parseRunArgs(['--api-port', '70000'])), /--api-port must be a port/);
    assert.match(String(parseRunArgs(['-f', 'x', '--admin-port', '99999'])), /--admin-port must be a port/);
    assert.match(String(parseRunArgs(['-f', 'x', '--bogus'])), /bogus/);
  });
});
