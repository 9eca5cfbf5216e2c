import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { parse } from 'yaml';
import { type ApiKeySource, parseApiKeyEntry } from '../../src/api/references/api-key-entries.ts';
import { formatFieldError } from '../../src/api/validate/errors.ts';

interface EntryCase {
  name: string;
  source: ApiKeySource;
  value: string;
  entry?: { key?: string; keyHash?: string; metadata: Record<string, unknown> };
  error?: string;
}

const fixtures = parse(
  readFileSync(new URL('../fixtures/references/api-key-entries.yaml', import.meta.url), 'utf8'),
) as { cases: EntryCase[] };

describe('API key entries', () => {
  for (const testCase of fixtures.cases) {
    it(testCase.name, () => {
      const result = parseApiKeyEntry(testCase.source, 'team-a', testCase.value, 'data[team-a]');
      if (testCase.error) {
        assert.ok('error' in result, 'expected an error');
        assert.equal(formatFieldError(result.error), testCase.error);
        assert.ok(!formatFieldError(result.error).includes('sk-team-a'), 'the key must not appear in the error');
      } else {
        assert.ok('entry' in result, 'expected an entry');
        assert.equal(result.entry.key, testCase.entry!.key);
        assert.equal(result.entry.keyHash?.toString('hex'), testCase.entry!.keyHash);
        assert.deepEqual(result.entry.metadata, testCase.entry!.metadata);
      }
    });
  }
});
