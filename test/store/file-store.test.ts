import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { FileStore, type LoadReport } from '../../src/store/file-store.ts';

const BACKEND = 'gw.dev/GwBackend';

function backendYaml(name: string, model: string): string {
  return `apiVersion: gw.dev/v1alpha1
kind: GwBackend
metadata: {name: ${name}}
spec: {ai: {provider: {alpha: {model: ${model}}}}}
`;
}

function tempDir(): string {
  return mkdtempSync(join(tmpdir(), 'gw-file-store-'));
}

/** Resolves with the next load report, or rejects after `ms`. */
function nextLoad(reports: LoadReport[], ms = 5000): Promise<LoadReport> {
  const seen = reports.length;
  return new Promise((resolve, reject) => {
    const started = Date.now();
    const poll = setInterval(() => {
      if (reports.length > seen) {
        clearInterval(poll);
        resolve(reports[reports.length - 1]!);
      } else if (Date.now() - started > ms) {
        clearInterval(poll);
        reject(new Error('no reload'));
      }
    }, 5);
  });
}

const DEPLOYMENT = `apiVersion: apps/v1
kind: Deployment
metadata: {name: ai, namespace: team}
spec:
  selector: {matchLabels: {app: ai}}
  template:
    metadata: {labels: {app: ai}}
    spec: {containers: [{name: gw, image: gw}]}
`;

describe('FileStore', () => {
  it('leaves out objects of kinds gw does not read, saying so, unless told to keep them (for its API server)', () => {
    const dir = tempDir();
    try {
      writeFileSync(join(dir, 'all.yaml'), `${backendYaml('openai', 'gpt-4o')}---\n${DEPLOYMENT}`);
      const skipping = new FileStore([dir]);
      const report = skipping.load();
      assert.equal(report.objects, 1);
      assert.deepEqual(report.problems, []);
      assert.equal(report.notServed.length, 1);
      assert.match(
        report.notServed[0]!.message,
        /all\.yaml: document 2: Deployment team\/ai: not served: gw does not read a Deployment \(a workload: gw runs no pods; .*\); run gw with its API server \(--api-port\) to store it there, or apply it to a cluster$/,
      );
      assert.equal(skipping.list('apps/Deployment').items.length, 0);
      const keeping = new FileStore([dir], { keepNotRead: true });
      const kept = keeping.load();
      assert.equal(kept.objects, 2);
      assert.deepEqual(kept.notServed, []);
      assert.equal(keeping.list('apps/Deployment').items[0]!.metadata.name, 'ai');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('loads a directory of resources, admitted with defaults', () => {
    const dir = tempDir();
    writeFileSync(join(dir, 'a.yaml'), backendYaml('a', 'gpt-4o'));
    writeFileSync(join(dir, 'b.yaml'), backendYaml('b', 'gpt-4o-mini'));
    const store = new FileStore([dir]);
    const report = store.load();
    assert.equal(report.changes, 2);
    assert.deepEqual(report.problems, []);
    assert.deepEqual(
      store.list(BACKEND).items.map((o) => `${o.metadata.namespace}/${o.metadata.name}`),
      ['default/a', 'default/b'],
    );
  });

  it('keeps the last good objects of an invalid file and reports where it is wrong', () => {
    const dir = tempDir();
    const file = join(dir, 'a.yaml');
    writeFileSync(file, backendYaml('a', 'gpt-4o'));
    const store = new FileStore([dir]);
    store.load();
    writeFileSync(
      file,
      `${backendYaml('a', 'gpt-4o-mini')}---\n${backendYaml('b', 'x').replace('{alpha:', '{beta: {}, alpha:')}`,
    );
    const report = store.load();
    assert.equal(report.changes, 0, 'nothing of an invalid file is applied');
    assert.equal(store.get(BACKEND, 'default/a')!.spec !== undefined, true);
    assert.deepEqual((store.get(BACKEND, 'default/a')!.spec as { ai: unknown }).ai, {
      provider: { alpha: { model: 'gpt-4o' } },
    });
    assert.ok(report.problems.length > 0);
    for (const problem of report.problems) {
      assert.match(problem.message, /a\.yaml: document 2: GwBackend default\/b: spec\.ai\.provider[.\w]*: /);
    }
    assert.deepEqual(store.problems(), report.problems);
    writeFileSync(file, backendYaml('a', 'gpt-4o-mini'));
    const fixed = store.load();
    assert.deepEqual(fixed.problems, []);
    assert.equal(fixed.changes, 1);
  });

  it('keeps serving through malformed YAML', () => {
    const dir = tempDir();
    const file = join(dir, 'a.yaml');
    writeFileSync(file, backendYaml('a', 'gpt-4o'));
    const store = new FileStore([dir]);
    store.load();
    writeFileSync(file, 'apiVersion: [\n');
    const report = store.load();
    assert.equal(store.list(BACKEND).items.length, 1);
    assert.match(report.problems[0]!.message, /a\.yaml: document 1 \(line 1, column 13\): malformed YAML\/JSON/);
  });

  it('removes the objects of a deleted file and reports duplicates across files', () => {
    const dir = tempDir();
    writeFileSync(join(dir, 'a.yaml'), backendYaml('a', 'gpt-4o'));
    writeFileSync(join(dir, 'b.yaml'), backendYaml('a', 'other'));
    const store = new FileStore([dir]);
    const report = store.load();
    assert.match(report.problems[0]!.message, /b\.yaml: GwBackend default\/a: already defined in .*a\.yaml/);
    rmSync(join(dir, 'a.yaml'));
    rmSync(join(dir, 'b.yaml'));
    const emptied = store.load();
    assert.equal(emptied.changes, 1);
    assert.equal(store.list(BACKEND).items.length, 0);
  });

  it('reloads when a file changes', async () => {
    const dir = tempDir();
    const file = join(dir, 'a.yaml');
    writeFileSync(file, backendYaml('a', 'gpt-4o'));
    const reports: LoadReport[] = [];
    const store = new FileStore([dir], { onLoad: (report) => reports.push(report), debounceMs: 10 });
    store.load();
    store.watchFiles();
    try {
      const modified: string[] = [];
      store.watch(BACKEND, store.resourceVersion, (event) => modified.push(event.type));
      const reloaded = nextLoad(reports);
      writeFileSync(file, backendYaml('a', 'gpt-4o-mini'));
      await reloaded;
      assert.deepEqual(modified, ['MODIFIED']);
      assert.equal(store.get(BACKEND, 'default/a')!.metadata.generation, 2);
    } finally {
      await store.close();
    }
  });
});
