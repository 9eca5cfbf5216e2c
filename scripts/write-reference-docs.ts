// Writes the generated docs: docs/reference.md (every kind and named type), docs/api-coverage.md
// (spec types -> named types and fixtures) and docs/enforcement.md (the enforcement registry:
// every policy field at every place, enforced or refused). Run with `npm run docs`.
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { renderDocs, repoRoot } from '../src/api/docs/docs.ts';
import { ENFORCEMENT_DOC, renderEnforcement } from '../src/contract/enforcement/docs.ts';

const docs = await renderDocs();
docs.set(ENFORCEMENT_DOC, renderEnforcement());
for (const [path, text] of docs) {
  const target = join(repoRoot, path);
  mkdirSync(dirname(target), { recursive: true });
  writeFileSync(target, text);
  process.stdout.write(`wrote ${path}\n`);
}
