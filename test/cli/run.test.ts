// gw run as a user runs it: a child process serving the files, logging what it serves and the
// problems of an invalid file, and stopping cleanly on SIGTERM.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { parseRunArgs } from '../../src/cli/run.ts';
import { spawnGw } from '../helpers/cli.ts';
import { freePort, gatewayYaml, webRouteYaml } from '../helpers/gateway.ts';

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
    const gw = spawnGw(['run', '-f', dir, '--admin-port', '0']);
    try {
      await gw.waitForLog(/Gateway default\/ai: serving http HTTP :\d+/);
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
