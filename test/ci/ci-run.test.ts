// What CI runs is the whole suite: a test whose program is missing skips loudly, and fails in CI;
// .ci/run installs every program the tests ask for; npm test runs the benchmark harness's tests
// too (test/helpers/missing-tool.ts, docs/testing.md).
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';

const root = new URL('../../', import.meta.url).pathname;

describe('a test whose program is missing', () => {
  const dir = mkdtempSync(join(tmpdir(), 'gw-missing-tool-'));
  after(() => rmSync(dir, { recursive: true, force: true }));
  const file = join(dir, 'needs-frobnicator.test.ts');
  writeFileSync(
    file,
    `import { test } from 'node:test';
import { skipWithoutTool } from '${join(root, 'test', 'helpers', 'missing-tool.ts')}';
const skip = skipWithoutTool('frobnicator', 'not on the PATH; apt-get install frobnicator');
test('frobnicates', { skip }, () => { throw new Error('ran without frobnicator'); });
test('another test of the file', () => {});
`,
  );
  const runFile = (ci: string | undefined) => {
    // A test run of its own: not a child of this one (NODE_TEST_CONTEXT), and CI as given.
    const env = { ...process.env };
    delete env.NODE_TEST_CONTEXT;
    delete env.CI;
    if (ci !== undefined) env.CI = ci;
    return spawnSync(process.execPath, ['--test', '--test-reporter=tap', file], { encoding: 'utf8', env });
  };

  it('skips with the reason and says so on standard error', () => {
    const result = runFile(undefined);
    assert.equal(result.status, 0, result.stdout);
    assert.match(
      result.stdout,
      /\*\*\* SKIPPED \(frobnicator missing\): not on the PATH; apt-get install frobnicator \*\*\*/,
    );
    assert.match(result.stdout, /ok \d+ - frobnicates # SKIP frobnicator is missing: not on the PATH/);
    assert.match(result.stdout, /# pass 1/);
  });

  it('fails in CI, with a test named for the program', () => {
    for (const ci of ['true', '1']) {
      const result = runFile(ci);
      assert.equal(result.status, 1, result.stdout);
      assert.match(
        result.stdout,
        /not ok \d+ - frobnicator is installed \(CI installs every tool the tests use: \.ci\/run\)/,
      );
    }
  });
});

it('.ci/run installs every program a test asks for', () => {
  const ciRun = readFileSync(join(root, '.ci', 'run'), 'utf8');
  const installed = new Set(
    [...(ciRun.match(/^tools=\(([^)]*)\)/m)?.[1] ?? '').matchAll(/(\S+):\S+/g)].map((m) => m[1]),
  );
  assert.ok(installed.has('openssl'), 'the list of tools is read from .ci/run');
  const asked = new Set<string>();
  for (const folder of ['test', 'bench']) {
    for (const entry of readdirSync(join(root, folder), { recursive: true, withFileTypes: true })) {
      if (!entry.isFile() || !entry.name.endsWith('.ts')) continue;
      const text = readFileSync(join(entry.parentPath, entry.name), 'utf8');
      for (const match of text.matchAll(/skipWithoutTool\(\s*'([^']+)'/g)) asked.add(match[1]!);
    }
  }
  // kubectl has its own install step (.ci/install-kubectl); the older Node is the machine's own,
  // which runs npm in CI.
  const elsewhere = new Set(['kubectl', 'an older Node', 'frobnicator']);
  assert.ok(asked.has('nginx') && asked.has('perl'), 'the calls are found');
  const missing = [...asked].filter((tool) => !installed.has(tool) && !elsewhere.has(tool));
  assert.deepEqual(missing, [], '.ci/run does not install these');
  assert.match(ciRun, /install-kubectl/);
});

it("npm test runs the benchmark harness's tests, and .ci/run installs with npm ci", () => {
  const manifest = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { scripts: Record<string, string> };
  assert.match(manifest.scripts.test!, /"test\/\*\*\/\*\.test\.ts" "bench\/\*\*\/test\/\*\.test\.ts"/);
  const benchTests = readdirSync(join(root, 'bench'), { recursive: true }).filter((path) =>
    /(^|\/)test\/[^/]+\.test\.ts$/.test(String(path)),
  );
  assert.ok(benchTests.length >= 7, `bench tests found: ${benchTests.join(', ')}`);
  assert.match(readFileSync(join(root, '.ci', 'run'), 'utf8'), /^npm ci\b/m);
});
