// package-lock.json is complete, so that `npm ci` (what CI and most users' pipelines run) accepts
// it on any machine: it matches package.json, and every package that any locked package depends
// on — the other platforms' optional binaries (Biome's) included, which an install on this
// platform does not need — has its entry with a version and an integrity hash. npm ci refuses a
// lock that misses one ("Missing: @biomejs/cli-darwin-arm64@2.6.8 from lock file").
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';

interface LockedPackage {
  version?: string;
  integrity?: string;
  link?: boolean;
  dependencies?: Record<string, string>;
  optionalDependencies?: Record<string, string>;
  devDependencies?: Record<string, string>;
}

const root = new URL('../../', import.meta.url);
const manifest = JSON.parse(readFileSync(new URL('package.json', root), 'utf8')) as Record<string, unknown>;
const lock = JSON.parse(readFileSync(new URL('package-lock.json', root), 'utf8')) as {
  lockfileVersion: number;
  packages: Record<string, LockedPackage>;
};

/** The lock entry Node's resolution finds for `name` required from the package at `path`. */
function resolveFrom(path: string, name: string): string | undefined {
  let from = path;
  for (;;) {
    const candidate = `${from === '' ? '' : `${from}/`}node_modules/${name}`;
    if (candidate in lock.packages) return candidate;
    if (from === '') return undefined;
    const parent = from.lastIndexOf('/node_modules/');
    from = parent === -1 ? '' : from.slice(0, parent);
  }
}

test('the lock file lists the dependencies of package.json', () => {
  assert.ok(lock.lockfileVersion >= 3);
  const locked = lock.packages['']!;
  for (const field of ['dependencies', 'devDependencies'] as const) {
    assert.deepEqual(
      locked[field],
      manifest[field],
      `package-lock.json's ${field} differ from package.json's: npm install`,
    );
  }
});

test("every locked package's dependencies, other platforms' optional ones included, are locked with a version and integrity", () => {
  const missing: string[] = [];
  for (const [path, entry] of Object.entries(lock.packages)) {
    if (path !== '' && !entry.link) {
      assert.ok(entry.version, `${path} has no version`);
      assert.ok(entry.integrity, `${path} has no integrity`);
    }
    const wanted = {
      ...entry.dependencies,
      ...entry.optionalDependencies,
      ...(path === '' ? entry.devDependencies : {}),
    };
    for (const name of Object.keys(wanted)) {
      if (resolveFrom(path, name) === undefined) missing.push(`${name} (for ${path || 'gw'})`);
    }
  }
  assert.deepEqual(missing, [], 'restore them with npm install --package-lock-only');
  assert.ok('node_modules/@biomejs/cli-darwin-arm64' in lock.packages, "Biome's binary for another platform");
});
