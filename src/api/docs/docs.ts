// The generated documentation files, by path relative to the repository root. `npm run docs`
// writes them; test/api/docs.test.ts checks the committed copies are current.
import { KINDS } from '../kinds/registry.ts';
import { namedTypeSources, namedTypes } from '../schema/named-types.ts';
import { readFixtureIndex, renderCoverage } from './coverage.ts';
import { renderReference } from './reference.ts';
import { SPEC_TYPES } from './spec-types.ts';

export const repoRoot = new URL('../../../', import.meta.url).pathname;

export async function renderDocs(): Promise<Map<string, string>> {
  const types = await namedTypes();
  const sources = await namedTypeSources();
  return new Map([
    ['docs/reference.md', renderReference({ types, kinds: KINDS, sources })],
    [
      'docs/api-coverage.md',
      renderCoverage({ specTypes: SPEC_TYPES, types, sources, kinds: KINDS, fixtures: readFixtureIndex(repoRoot) }),
    ],
  ]);
}
