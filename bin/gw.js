#!/usr/bin/env node
// The gw command. gw runs on Node 24 (it runs its TypeScript sources directly); when started by
// another Node, it re-runs itself on the Node 24 the package pins (node_modules/node).
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const packageRoot = join(dirname(fileURLToPath(import.meta.url)), '..');
const major = Number(process.versions.node.split('.')[0]);

// A closed pipe (gw crds | head) ends the output quietly instead of with a stack trace.
process.stdout.on('error', (error) => {
  if (error.code === 'EPIPE') process.exit(0);
  throw error;
});

if (major === 24) {
  const { main } = await import('../src/cli/main.ts');
  process.exitCode = await main(process.argv.slice(2));
} else {
  const pinned = join(packageRoot, 'node_modules', 'node', 'bin', 'node');
  if (!existsSync(pinned)) {
    process.stderr.write(
      `gw needs Node 24 (this is Node ${process.versions.node}); run "npm install" in ${packageRoot} to get the pinned Node.\n`,
    );
    process.exit(2);
  }
  const child = spawnSync(pinned, [fileURLToPath(import.meta.url), ...process.argv.slice(2)], { stdio: 'inherit' });
  process.exit(child.status ?? 1);
}
