// The package's dependencies are what an installed gw runs with: npm installs `dependencies` and
// leaves `devDependencies` out. Every package that src/ or bin/ imports (or loads on first use, or
// resolves) must be a runtime dependency, and every runtime dependency must be used there — a
// package only tests or benchmarks use is a dev dependency, not a download for every user.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';

const root = new URL('../../', import.meta.url).pathname;
const manifest = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as {
  dependencies: Record<string, string>;
  devDependencies: Record<string, string>;
};

/** Every file of src/ and bin/ that runs in the package (TypeScript and JavaScript). */
function shippedSources(): string[] {
  const files: string[] = [];
  for (const folder of ['src', 'bin']) {
    for (const entry of readdirSync(join(root, folder), { recursive: true, withFileTypes: true })) {
      if (entry.isFile() && /\.(ts|js)$/.test(entry.name)) files.push(join(entry.parentPath, entry.name));
    }
  }
  return files;
}

// A module specifier as it appears in `from '…'`, `import('…')`, `require('…')`,
// `resolve('…')` and `loadOnFirstUse<…>('…')`.
const SPECIFIER =
  /(?:\bfrom\s+|\bimport\s*\(\s*|\brequire\s*\(\s*|\.resolve\s*\(\s*|\bloadOnFirstUse(?:<[^>]*>)?\(\s*)'([^']+)'/g;

/** The npm package of a bare specifier (`@scope/name/sub` → `@scope/name`), or undefined for node: and relative ones. */
function packageOf(specifier: string): string | undefined {
  if (specifier.startsWith('.') || specifier.startsWith('/') || specifier.startsWith('node:')) return undefined;
  const parts = specifier.split('/');
  return specifier.startsWith('@') ? parts.slice(0, 2).join('/') : parts[0];
}

function packagesUsedByShippedCode(): Map<string, string> {
  const used = new Map<string, string>();
  for (const file of shippedSources()) {
    for (const match of readFileSync(file, 'utf8').matchAll(SPECIFIER)) {
      const name = packageOf(match[1]!);
      if (name && !used.has(name)) used.set(name, file.slice(root.length));
    }
  }
  return used;
}

test('every package src/ and bin/ use is a runtime dependency', () => {
  const used = packagesUsedByShippedCode();
  assert.ok(used.has('yaml') && used.has('node'), 'the scan finds imports and the pinned Node bin/gw.js resolves');
  for (const [name, file] of used) {
    assert.ok(name in manifest.dependencies, `${file} uses ${name}, which is not in "dependencies"`);
  }
});

test('every runtime dependency is used by src/ or bin/ (the others are dev dependencies)', () => {
  const used = packagesUsedByShippedCode();
  const unused = Object.keys(manifest.dependencies).filter((name) => !used.has(name));
  assert.deepEqual(unused, [], `move to "devDependencies": ${unused.join(', ')}`);
  for (const name of ['eventsource-parser', 'prom-client']) assert.ok(name in manifest.devDependencies, name);
});
