// The generated docs and the spec coverage: every type the spec defines is a named type of the
// API with at least one fixture, and the committed docs match what the schemas render.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { fixturesOf, readFixtureIndex } from '../../src/api/docs/coverage.ts';
import { renderDocs, repoRoot } from '../../src/api/docs/docs.ts';
import { SPEC_TYPES } from '../../src/api/docs/spec-types.ts';
import { KINDS } from '../../src/api/kinds/registry.ts';
import { namedTypes } from '../../src/api/schema/named-types.ts';
import { META, type SchemaNode, type TypeMeta } from '../../src/api/schema/schema.ts';

const types = await namedTypes();

describe('spec coverage', () => {
  it('lists each spec type once', () => {
    const names = SPEC_TYPES.map((spec) => spec.name);
    assert.deepEqual(
      names.filter((name, i) => names.indexOf(name) !== i),
      [],
    );
  });

  it('every spec type is a named type of the API', () => {
    const missing = SPEC_TYPES.filter((spec) => !types.has(spec.name)).map(
      (spec) => `${spec.name} (document ${spec.document}, ${spec.section})`,
    );
    assert.deepEqual(missing, [], `spec types without a named type:\n  ${missing.join('\n  ')}`);
  });

  it('every spec type has at least one fixture file', () => {
    const fixtures = readFixtureIndex(repoRoot);
    const missing = SPEC_TYPES.filter((spec) => fixturesOf(spec, types, KINDS, fixtures).length === 0).map(
      (spec) => spec.name,
    );
    assert.deepEqual(missing, [], `spec types without fixtures:\n  ${missing.join('\n  ')}`);
  });

  it('no two named types share a name (the reference links by name)', () => {
    // Every TypeMeta reachable from an exported type or a kind; refined copies share their original's.
    const metas = new Map<string, Set<TypeMeta>>();
    const seen = new Set<SchemaNode>();
    const walk = (node: SchemaNode): void => {
      if (seen.has(node)) return;
      seen.add(node);
      const meta = node[META];
      if (meta) metas.set(meta.name, (metas.get(meta.name) ?? new Set()).add(meta));
      for (const child of Object.values(node.properties ?? {})) walk(child);
      if (node.items) walk(node.items);
      if (node.additionalProperties) walk(node.additionalProperties);
    };
    for (const node of types.values()) walk(node);
    for (const definition of KINDS) walk(definition.schema);
    const shared = [...metas]
      .filter(([, set]) => set.size > 1)
      .map(([name, set]) => {
        const sources = [...set].map((meta) => meta.source).join(', ');
        return `${name} (${sources})`;
      });
    assert.deepEqual(shared, [], `names declared by more than one type:\n  ${shared.join('\n  ')}`);
  });
});

describe('generated docs', async () => {
  const rendered = await renderDocs();
  for (const [path, text] of rendered) {
    it(`${path} is current (run npm run docs)`, () => {
      let committed = '';
      try {
        committed = readFileSync(join(repoRoot, path), 'utf8');
      } catch {
        assert.fail(`${path} is missing; run npm run docs`);
      }
      assert.ok(committed === text, `${path} differs from the schemas; run npm run docs`);
    });
  }

  it('renders the same text twice', async () => {
    const again = await renderDocs();
    for (const [path, text] of rendered) assert.equal(again.get(path), text, path);
  });

  it('links only to sections that exist', () => {
    const reference = rendered.get('docs/reference.md')!;
    const anchors = new Set([...reference.matchAll(/<a id="([^"]+)"><\/a>/g)].map((m) => m[1]));
    const broken = [...reference.matchAll(/\]\(#([^)]+)\)/g)].map((m) => m[1]).filter((a) => !anchors.has(a));
    assert.deepEqual([...new Set(broken)], []);
    const coverage = rendered.get('docs/api-coverage.md')!;
    const brokenFromCoverage = [...coverage.matchAll(/\]\(reference\.md#([^)]+)\)/g)]
      .map((m) => m[1])
      .filter((a) => !anchors.has(a));
    assert.deepEqual(brokenFromCoverage, []);
  });
});
