// The nginx configuration of the benchmark: the proxy settings the comparison relies on, and,
// where nginx is installed, nginx itself accepts the file (nginx -t).
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { skipWithoutTool } from '../../../test/helpers/missing-tool.ts';
import { NGINX_UPSTREAM_KEEPALIVE, nginxConfig } from '../nginx-config.ts';
import { findNginx, NGINX_INSTALL_HINT } from '../targets/nginx.ts';

const input = (dir: string) => ({
  dir,
  workerProcesses: 3,
  loadPort: 43001,
  streamPort: 43002,
  loadUpstreamPort: 44001,
  streamUpstreamPort: 44002,
});

test('nginx proxies with pooled keep-alive upstream connections and writes nothing outside its directory', () => {
  const dir = '/tmp/bench-nginx-x';
  const config = nginxConfig(input(dir));
  assert.match(config, /^worker_processes 3;$/m);
  assert.match(config, /^daemon off;$/m);
  assert.match(config, /^\s*access_log off;$/m);
  assert.match(
    config,
    new RegExp(`upstream mock \\{\\s*server 127\\.0\\.0\\.1:44001;\\s*keepalive ${NGINX_UPSTREAM_KEEPALIVE};`),
  );
  assert.match(config, /upstream mock_stream \{\s*server 127\.0\.0\.1:44002;/);
  assert.match(config, /listen 127\.0\.0\.1:43001;\s*location \/ \{\s*proxy_pass http:\/\/mock;/);
  assert.match(config, /listen 127\.0\.0\.1:43002;\s*location \/ \{\s*proxy_pass http:\/\/mock_stream;/);
  assert.equal(config.match(/proxy_http_version 1\.1;/g)?.length, 2);
  assert.equal(config.match(/proxy_set_header Connection "";/g)?.length, 2);
  // Every path nginx writes is inside the directory.
  const paths = [...config.matchAll(/^\s*(?:pid|\w+_temp_path) (\S+);$/gm)].map((m) => m[1]!);
  assert.equal(paths.length, 6);
  for (const path of paths) assert.ok(path.startsWith(`${dir}/`), path);
});

const nginxSkip = skipWithoutTool(
  'nginx',
  findNginx() === undefined ? `not installed; ${NGINX_INSTALL_HINT}` : undefined,
);

test('nginx accepts the configuration', { skip: nginxSkip }, (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'gw-bench-nginx-test-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const file = join(dir, 'nginx.conf');
  writeFileSync(file, nginxConfig(input(dir)));
  const check = spawnSync(findNginx()!, ['-t', '-p', dir, '-c', file, '-e', 'stderr'], { encoding: 'utf8' });
  assert.equal(check.status, 0, check.stderr);
  assert.match(check.stderr, /syntax is ok/);
});
