// gw run as a user runs it: a child process serving the files, logging what it serves and the
// problems of an invalid file, and stopping cleanly on SIGTERM.
import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { parseRunArgs } from '../../src/cli/run.ts';
import { freePort, gatewayYaml } from '../helpers/gateway.ts';

const GW = new URL('../../bin/gw.js', import.meta.url).pathname;

/** Resolves when `pattern` appears in the child's stderr; rejects after `ms`. */
function waitForLog(child: ChildProcess, output: { text: string }, pattern: RegExp, ms = 10_000): Promise<void> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no log line like ${pattern} in:\n${output.text}`)), ms);
    const check = () => {
      if (pattern.test(output.text)) {
        clearTimeout(timer);
        child.stderr!.off('data', check);
        resolve();
      }
    };
    child.stderr!.on('data', check);
    check();
  });
}

describe('gw run', () => {
  const dir = mkdtempSync(join(tmpdir(), 'gw-run-'));
  const upstream = createServer((_req, res) => res.end('hello from upstream'));
  after(() => {
    upstream.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('serves the files, reports an invalid edit with its path and keeps serving, and stops on SIGTERM', async () => {
    await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
    const upstreamPort = (upstream.address() as { port: number }).port;
    const port = await freePort();
    writeFileSync(join(dir, 'gateway.yaml'), gatewayYaml(port));
    const route = `apiVersion: gw.dev/v1alpha1
kind: GwBackend
metadata: {name: web}
spec: {static: {host: 127.0.0.1, port: ${upstreamPort}}}
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: web}
spec:
  parentRefs: [{name: ai}]
  rules: [{backendRefs: [{group: gw.dev, kind: GwBackend, name: web}]}]
`;
    writeFileSync(join(dir, 'route.yaml'), route);
    const child = spawn(process.execPath, [GW, 'run', '-f', dir, '--admin-port', '0'], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const output = { text: '' };
    child.stderr!.on('data', (chunk: Buffer) => {
      output.text += chunk.toString();
    });
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    try {
      await waitForLog(child, output, /Gateway default\/ai: serving http HTTP :\d+/);
      const response = await fetch(`http://127.0.0.1:${port}/`);
      assert.equal(await response.text(), 'hello from upstream');
      writeFileSync(join(dir, 'route.yaml'), route.replace(`port: ${upstreamPort}`, 'port: "not a port"'));
      await waitForLog(child, output, /route\.yaml.*spec\.static\.port/);
      const again = await fetch(`http://127.0.0.1:${port}/`);
      assert.equal(await again.text(), 'hello from upstream', 'the last good configuration keeps serving');
    } finally {
      child.kill('SIGTERM');
    }
    assert.equal(await exited, 0);
  });

  it('rejects bad arguments with usage', () => {
    assert.match(String(parseRunArgs([])), /needs -f/);
    assert.match(String(parseRunArgs(['-f', 'x', '--admin-port', '99999'])), /--admin-port must be a port/);
    assert.match(String(parseRunArgs(['-f', 'x', '--bogus'])), /bogus/);
  });
});
