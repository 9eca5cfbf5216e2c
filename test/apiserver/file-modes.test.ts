// Issue 17 #9: the embedded API server's data directory holds Secrets (in the SQLite database and
// its WAL), its token, its keys and a kubeconfig with the token: none of them is readable by other
// users, whatever the umask, and files an older version left readable are made private.
import assert from 'node:assert/strict';
import { chmodSync, mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { RevisionLog } from '../../src/apiserver/revision-log.ts';
import { startTestApiServer } from './helpers.ts';

const PUBLIC = new Set(['ca.crt', 'apiserver.crt']);
const directories: string[] = [];
after(() => {
  for (const directory of directories) rmSync(directory, { recursive: true, force: true });
});

const modeOf = (path: string) => statSync(path).mode & 0o777;

test('with a umask of 022, every file but the certificates is 0600 and the directory 0700', async () => {
  const previous = process.umask(0o022);
  const server = await startTestApiServer();
  try {
    const created = await server.request('POST', '/api/v1/namespaces/default/secrets', {
      body: { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'provider-key' }, stringData: { key: 'sk-x' } },
    });
    assert.equal(created.status, 201);
    const files = readdirSync(server.dataDir);
    for (const name of ['state.db', 'state.db-wal', 'state.db-shm', 'token', 'kubeconfig', 'ca.key', 'apiserver.key'])
      assert.ok(files.includes(name), `${name} is in the data directory`);
    for (const name of files) {
      const expected = PUBLIC.has(name) ? 0o644 : 0o600;
      assert.equal(modeOf(join(server.dataDir, name)).toString(8), expected.toString(8), name);
    }
    assert.equal(modeOf(server.dataDir).toString(8), '700');
  } finally {
    await server.close();
    process.umask(previous);
  }
});

test('a database an earlier version left 0644 (with its WAL) is made 0600 when opened', () => {
  const directory = mkdtempSync(join(tmpdir(), 'gw-modes-'));
  directories.push(directory);
  const path = join(directory, 'state.db');
  const previous = process.umask(0o022);
  try {
    const first = new RevisionLog(path);
    first.close();
    for (const file of [path, `${path}-wal`, `${path}-shm`]) {
      try {
        chmodSync(file, 0o644);
      } catch {
        // SQLite removes the WAL and shared-memory files on a clean close
      }
    }
    new RevisionLog(path).close();
    assert.equal(modeOf(path).toString(8), '600');
  } finally {
    process.umask(previous);
  }
});
