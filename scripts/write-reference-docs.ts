// Writes the generated API docs: docs/reference.md (every kind and named type) and
// docs/api-coverage.md (spec types -> named types and fixtures). Run with `npm run docs`.
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { renderDocs, repoRoot } from '../src/api/docs/docs.ts';

for (const [path, text] of await renderDocs()) {
  const target = join(repoRoot, path);
  mkdirSync(dirname(target), { recursive: true });
  writeFileSync(target, text);
  process.stdout.write(`wrote ${path}\n`);
}
