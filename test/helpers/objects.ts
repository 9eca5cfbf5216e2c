// Test input: YAML resources admitted as the API server would, failing the test on any error.
import assert from 'node:assert/strict';
import { parseResources } from '../../src/api/load/documents.ts';
import { admit, type KubeObject } from '../../src/api/validate/admission.ts';

export function admitted(yaml: string): KubeObject[] {
  return parseResources(yaml, 'test.yaml').documents.map((document) => {
    const result = admit(document.value);
    assert.deepEqual(result.errors, [], JSON.stringify(document.value));
    return result.object!;
  });
}
