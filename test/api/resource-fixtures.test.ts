// Runs the whole-resource fixtures under test/fixtures/resources: each case admits one object
// (envelope, metadata, defaults, schema and CEL rules) and asserts the exact set of errors and,
// optionally, the stored object's spec after defaulting.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { parseAllDocuments } from 'yaml';
import { admit } from '../../src/api/validate/admission.ts';
import { formatFieldError } from '../../src/api/validate/errors.ts';

interface ResourceCase {
  name: string;
  resource: unknown;
  errors: string[];
  warnings?: string[];
  spec?: unknown;
}

const fixtureDir = new URL('../fixtures/resources/', import.meta.url).pathname;

for (const file of readdirSync(fixtureDir)
  .filter((f) => f.endsWith('.yaml'))
  .sort()) {
  const documents = parseAllDocuments(readFileSync(join(fixtureDir, file), 'utf8'), { uniqueKeys: true });
  describe(file, () => {
    for (const document of documents) {
      if (document.errors.length > 0) throw new Error(`${file}: ${document.errors[0]!.message}`);
      const fixture = document.toJS() as { cases: ResourceCase[] } | null;
      if (!fixture) continue;
      for (const testCase of fixture.cases) {
        it(testCase.name, () => {
          const result = admit(testCase.resource);
          assert.deepEqual(result.errors.map(formatFieldError).sort(), [...testCase.errors].sort());
          if (testCase.warnings) {
            assert.deepEqual(result.warnings.map(formatFieldError).sort(), [...testCase.warnings].sort());
          }
          if (testCase.spec !== undefined) assert.deepEqual(result.object?.spec, testCase.spec);
        });
      }
    }
  });
}
