// Runs the per-type fixtures under test/fixtures/types: each case validates a value against one
// named type (defaults applied first) and asserts the exact set of errors, and optionally the
// defaulted value.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { parseAllDocuments } from 'yaml';
import { namedTypes } from '../../src/api/schema/named-types.ts';
import { applyDefaults } from '../../src/api/validate/defaults.ts';
import { formatFieldError } from '../../src/api/validate/errors.ts';
import { validateValue } from '../../src/api/validate/schema-validator.ts';

interface FixtureCase {
  name: string;
  value: unknown;
  errors: string[];
  warnings?: string[];
  defaulted?: unknown;
}
interface Fixture {
  type: string;
  at: string;
  unknownFields?: 'error' | 'warn';
  cases: FixtureCase[];
}

const fixtureDir = new URL('../fixtures/types/', import.meta.url).pathname;
const types = await namedTypes();

for (const file of readdirSync(fixtureDir)
  .filter((f) => f.endsWith('.yaml'))
  .sort()) {
  const documents = parseAllDocuments(readFileSync(join(fixtureDir, file), 'utf8'), { uniqueKeys: true });
  describe(file, () => {
    for (const document of documents) {
      if (document.errors.length > 0) throw new Error(`${file}: ${document.errors[0]!.message}`);
      const fixture = document.toJS() as Fixture | null;
      if (!fixture) continue;
      describe(fixture.type, () => {
        const schema = types.get(fixture.type);
        it('is a named type', () => assert.ok(schema, `no named type ${fixture.type}`));
        if (!schema) return;
        for (const testCase of fixture.cases) {
          it(testCase.name, () => {
            const value = structuredClone(testCase.value);
            applyDefaults(schema, value);
            if (testCase.defaulted !== undefined) assert.deepEqual(value, testCase.defaulted);
            const output = validateValue(schema, value, fixture.at, {
              unknownFields: fixture.unknownFields ?? 'error',
            });
            assert.deepEqual(output.errors.map(formatFieldError).sort(), [...testCase.errors].sort());
            if (testCase.warnings)
              assert.deepEqual(output.warnings.map(formatFieldError).sort(), [...testCase.warnings].sort());
          });
        }
      });
    }
  });
}
