// The benchmark's gw configuration is one that gw accepts and programs completely: every object
// valid, every route attached, every backend resolved (checked the way `gw status` reports it).
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { parseAllDocuments } from 'yaml';
import { main } from '../../../src/cli/main.ts';
import { BENCH_BACKEND_KEY, type ProviderFamily, writeGwBenchConfig } from '../gw-config.ts';

/** Runs a gw command in this process; its exit code and everything it printed. */
async function gw(args: string[]): Promise<{ code: number; out: string }> {
  let out = '';
  const collect = (text: string) => {
    out += text;
  };
  const code = await main(args, { stdout: collect, stderr: collect, readStdin: () => '' });
  return { code, out };
}

for (const family of ['alpha', 'gamma'] as ProviderFamily[]) {
  for (const accessLog of [true, false]) {
    test(`the ${family} configuration (access log ${accessLog ? 'on' : 'off'}) is accepted and fully resolved`, async (t) => {
      const dir = mkdtempSync(join(tmpdir(), 'gw-bench-config-test-'));
      t.after(() => rmSync(dir, { recursive: true, force: true }));
      const file = writeGwBenchConfig(dir, {
        family,
        loadUpstreamPort: 41001,
        streamUpstreamPort: 41002,
        loadPort: 42001,
        streamPort: 42002,
        accessLog,
      });

      const validation = await gw(['validate', '-f', dir]);
      assert.equal(validation.code, 0, validation.out);

      const { code, out: status } = await gw(['status', '-f', dir]);
      assert.equal(code, 0, status);
      const falseConditions = status
        .split('\n')
        .filter((line) => /=False/.test(line) && !line.includes('Conflicted=False'));
      assert.deepEqual(falseConditions, []);
      assert.match(status, /listener load \(1 routes\)/);
      assert.match(status, /listener stream \(1 routes\)/);
      if (!accessLog)
        assert.match(
          status,
          /GwPolicy default\/no-access-log\n {2}ancestor Gateway default\/bench:\n {4}Accepted=True/,
        );

      const backends = parseAllDocuments(readFileSync(file, 'utf8'))
        .map((doc) => doc.toJS() as { kind: string; spec: { ai?: { provider: Record<string, unknown> } } })
        .filter((o) => o.kind === 'GwBackend');
      assert.deepEqual(
        backends.map((b) => [
          b.spec.ai?.provider.host,
          b.spec.ai?.provider.port,
          family in (b.spec.ai?.provider ?? {}),
        ]),
        [
          ['127.0.0.1', 41001, true],
          ['127.0.0.1', 41002, true],
        ],
      );
      assert.ok(readFileSync(file, 'utf8').includes(BENCH_BACKEND_KEY));
    });
  }
}
