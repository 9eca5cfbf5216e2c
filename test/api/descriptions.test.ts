// Every field of every kind carries a description, so that the CRDs, the OpenAPI documents of the
// embedded API server (`kubectl explain`) and docs/reference.md describe each one. A field added
// without a description fails here, with its path.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { toCrd } from '../../src/api/crd/generate.ts';
import { crdKinds, KINDS } from '../../src/api/kinds/registry.ts';
import { namedTypes } from '../../src/api/schema/named-types.ts';

interface Node {
  description?: string;
  properties?: Record<string, Node>;
  items?: Node;
  additionalProperties?: Node;
  anyOf?: Node[];
}

/** The path of every property (at any depth, through lists and maps) that has no description. */
function undescribed(node: Node, path: string, out: string[], seen = new Set<Node>()): string[] {
  if (seen.has(node)) return out;
  seen.add(node);
  for (const [name, child] of Object.entries(node.properties ?? {})) {
    const childPath = `${path}.${name}`;
    if (!child.description?.trim()) out.push(childPath);
    undescribed(child, childPath, out, new Set(seen));
  }
  if (node.items) undescribed(node.items, `${path}[]`, out, new Set(seen));
  if (node.additionalProperties) undescribed(node.additionalProperties, `${path}[*]`, out, new Set(seen));
  for (const option of node.anyOf ?? []) undescribed(option, path, out, new Set(seen));
  return out;
}

test('every field of every kind has a description in the schema', () => {
  const missing = KINDS.flatMap((definition) => undescribed(definition.schema as Node, definition.kind, []));
  assert.deepEqual(missing, [], `fields without a description:\n${missing.join('\n')}`);
  for (const definition of KINDS) assert.ok(definition.schema.description, `${definition.kind} has no description`);
});

test("every field of gw's CRDs has a description", () => {
  for (const definition of crdKinds()) {
    const crd = toCrd(definition) as {
      spec: { versions: { schema: { openAPIV3Schema: Node } }[] };
    };
    const schema = crd.spec.versions[0]!.schema.openAPIV3Schema;
    assert.ok(schema.description, `${definition.kind} CRD has no description`);
    // A CRD's metadata is only `type: object`: the API server supplies ObjectMeta and its descriptions.
    const missing = undescribed(schema, definition.kind, []).filter((path) => path !== `${definition.kind}.metadata`);
    assert.deepEqual(missing, [], `${definition.kind} CRD`);
  }
});

test('every named type says what it is (the opening line of its section in reference.md)', async () => {
  const missing = [...(await namedTypes())].filter(([, node]) => !node.description?.trim()).map(([name]) => name);
  assert.deepEqual(missing, [], `named types without a description: ${missing.join(', ')}`);
});

test('the walk finds a field without a description', () => {
  const schema: Node = {
    description: 'x',
    properties: { a: { description: 'a' }, b: { properties: { c: {} } }, d: { items: { properties: { e: {} } } } },
  };
  assert.deepEqual(undescribed(schema, 'X', []), ['X.b', 'X.b.c', 'X.d', 'X.d[].e']);
});
