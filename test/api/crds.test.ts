// The generated CRDs: committed copies match the code, and the schemas are structural (the rules
// kube-apiserver enforces when a CRD is created) with CEL rules that compile.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { parse } from 'yaml';
import { crdFileName, crdYaml, toCrd } from '../../src/api/crd/generate.ts';
import { GATEWAY_API_BUNDLE_VERSION } from '../../src/api/kinds/gateway-api/kinds.ts';
import { crdKinds, gatewayApiCrdKinds, inferenceExtensionCrdKinds } from '../../src/api/kinds/registry.ts';
import type { SchemaNode } from '../../src/api/schema/schema.ts';
import { admit } from '../../src/api/validate/admission.ts';
import { applyDefaults } from '../../src/api/validate/defaults.ts';
import { formatFieldError } from '../../src/api/validate/errors.ts';
import { validateValue } from '../../src/api/validate/schema-validator.ts';
import { compileAdmissionRule, isCompileError } from '../../src/cel/environment.ts';

const deployDir = new URL('../../deploy/crds/', import.meta.url).pathname;
const RESERVED_FIELD_ACCESS =
  /\.(namespace|in|as|break|const|continue|else|for|function|if|import|let|loop|package|return|var|void|while)\b/;
const ITERATION = /self((?:\.[A-Za-z_]\w*)*)\.(?:all|exists|exists_one|filter|map)\(/g;
const FORBIDDEN_IN_ANY_OF = ['description', 'default', 'additionalProperties', 'nullable', 'properties', 'items'];

/** Problems that would make kube-apiserver refuse the CRD, with the schema path of each. */
function structuralProblems(node: Record<string, unknown>, path: string, problems: string[]): void {
  const intOrString = node['x-kubernetes-int-or-string'] === true;
  const preserve = node['x-kubernetes-preserve-unknown-fields'] === true;
  if (node.type === undefined && !intOrString && !preserve) problems.push(`${path}: no type`);
  if (node.properties && node.additionalProperties) problems.push(`${path}: both properties and additionalProperties`);
  if (node.type === 'array' && !node.items) problems.push(`${path}: array without items`);
  if (node.anyOf) {
    if (!intOrString) problems.push(`${path}: anyOf is only used for int-or-string`);
    for (const [i, branch] of (node.anyOf as Record<string, unknown>[]).entries()) {
      for (const key of FORBIDDEN_IN_ANY_OF) if (key in branch) problems.push(`${path}.anyOf[${i}]: sets ${key}`);
      if (!['integer', 'string'].includes(branch.type as string))
        problems.push(`${path}.anyOf[${i}]: not integer/string`);
    }
  }
  // Enum values must have the node's type (upstream's redirect statusCode is an integer enum).
  const typeOf = (value: unknown) => (Number.isInteger(value) ? 'integer' : typeof value);
  for (const value of (node.enum as unknown[] | undefined) ?? [])
    if (typeOf(value) !== node.type)
      problems.push(`${path}: enum value ${JSON.stringify(value)} is not a ${String(node.type)}`);
  if (node['x-kubernetes-list-type'] === 'map') {
    const keys = node['x-kubernetes-list-map-keys'] as string[] | undefined;
    const items = node.items as Record<string, unknown> | undefined;
    if (!keys || keys.length === 0) problems.push(`${path}: list-type map without list-map-keys`);
    for (const key of keys ?? []) {
      const required = (items?.required as string[] | undefined) ?? [];
      const defaulted = (items?.properties as Record<string, Record<string, unknown>> | undefined)?.[key]?.default;
      if (!required.includes(key) && defaulted === undefined)
        problems.push(`${path}: map key ${key} is neither required nor defaulted`);
    }
  }
  for (const rule of (node['x-kubernetes-validations'] as { rule: string; message: string }[] | undefined) ?? []) {
    // Kubernetes makes rules spell fields named like CEL reserved words as __name__.
    const reserved = RESERVED_FIELD_ACCESS.exec(rule.rule);
    if (reserved)
      problems.push(`${path}: rule reads a field named by a CEL reserved word (${reserved[1]}): ${rule.rule}`);
    // kube-apiserver refuses a CRD whose rules' estimated cost is too high; iterating an unbounded
    // list or map is what makes an estimate explode, so every collection a rule iterates has a bound.
    for (const match of rule.rule.matchAll(ITERATION)) {
      let target: Record<string, unknown> | undefined = node;
      for (const segment of match[1]!.split('.').filter(Boolean)) {
        target = (target?.properties as Record<string, Record<string, unknown>> | undefined)?.[segment];
      }
      if (target && target.maxItems === undefined && target.maxProperties === undefined) {
        problems.push(
          `${path}: rule iterates ${match[1] || 'self'}, which has no maxItems/maxProperties: ${rule.rule}`,
        );
      }
    }
    const program = compileAdmissionRule(rule.rule);
    if (isCompileError(program)) problems.push(`${path}: rule does not compile: ${program.message}: ${rule.rule}`);
    if (!rule.message) problems.push(`${path}: rule without message: ${rule.rule}`);
  }
  if (node.default !== undefined) {
    const value = structuredClone(node.default);
    applyDefaults(node as SchemaNode, value);
    const output = validateValue(node as SchemaNode, value, path);
    for (const error of output.errors) problems.push(`${path}: default is invalid: ${formatFieldError(error)}`);
  }
  for (const [name, child] of Object.entries((node.properties as Record<string, Record<string, unknown>>) ?? {})) {
    structuralProblems(child, `${path}.${name}`, problems);
  }
  if (node.additionalProperties)
    structuralProblems(node.additionalProperties as Record<string, unknown>, `${path}[*]`, problems);
  if (node.items) structuralProblems(node.items as Record<string, unknown>, `${path}[*]`, problems);
}

describe('generated CRDs', () => {
  for (const definition of crdKinds()) {
    describe(definition.kind, () => {
      it('matches the committed copy in deploy/crds (run `npm run crds` after changing the API)', () => {
        const committed = readFileSync(deployDir + crdFileName(definition), 'utf8');
        assert.equal(committed, crdYaml(definition));
      });

      it('is a structural schema whose rules compile and defaults validate', () => {
        const crd = toCrd(definition) as {
          spec: { versions: { schema: { openAPIV3Schema: Record<string, unknown> } }[] };
        };
        const schema = crd.spec.versions[0]!.schema.openAPIV3Schema;
        assert.equal(schema.type, 'object');
        assert.deepEqual((schema.properties as Record<string, unknown>).metadata, { type: 'object' });
        const problems: string[] = [];
        structuralProblems(schema, definition.kind, problems);
        assert.deepEqual(problems, []);
      });

      it('names, scope, status subresource and printer columns', () => {
        const crd = parse(crdYaml(definition));
        assert.equal(crd.metadata.name, `${definition.plural}.gw.dev`);
        assert.equal(crd.spec.scope, 'Namespaced');
        assert.deepEqual(crd.spec.names.categories, ['gw']);
        assert.ok(crd.spec.names.shortNames.length > 0);
        assert.deepEqual(crd.spec.versions[0].subresources, { status: {} });
        assert.ok(crd.spec.versions[0].additionalPrinterColumns.some((c: { name: string }) => c.name === 'Age'));
      });
    });
  }
});

describe('generated Gateway API CRDs (gw crds --gateway-api)', () => {
  const committed = readFileSync(new URL('../../deploy/gateway-api-crds.yaml', import.meta.url), 'utf8');

  it('match the committed deploy/gateway-api-crds.yaml (run `npm run deploy` after changing the API)', () => {
    assert.equal(committed, gatewayApiCrdKinds().map(crdYaml).join('---\n'));
  });

  for (const definition of gatewayApiCrdKinds()) {
    describe(definition.kind, () => {
      const crd = toCrd(definition) as {
        metadata: { name: string; annotations: Record<string, string>; labels?: unknown };
        spec: {
          scope: string;
          versions: {
            name: string;
            storage: boolean;
            served: boolean;
            subresources?: unknown;
            schema: { openAPIV3Schema: Record<string, unknown> };
          }[];
        };
      };

      it('is a structural schema whose rules compile and defaults validate', () => {
        for (const version of crd.spec.versions) {
          const problems: string[] = [];
          structuralProblems(version.schema.openAPIV3Schema, `${definition.kind} ${version.name}`, problems);
          assert.deepEqual(problems, []);
        }
      });

      it('names the Gateway API release and serves every version gw reads, stored in one', () => {
        assert.equal(crd.metadata.name, `${definition.plural}.gateway.networking.k8s.io`);
        assert.equal(crd.metadata.annotations['gateway.networking.k8s.io/bundle-version'], GATEWAY_API_BUNDLE_VERSION);
        assert.equal(crd.metadata.annotations['gateway.networking.k8s.io/channel'], 'standard');
        assert.equal(crd.metadata.labels, undefined, "not labelled as gw's: deleting gw's CRDs by label keeps them");
        assert.deepEqual(
          crd.spec.versions.map((version) => version.name).sort(),
          [...definition.servedVersions].sort(),
        );
        assert.deepEqual(
          crd.spec.versions.filter((version) => version.storage).map((version) => version.name),
          [definition.version],
        );
        assert.equal(crd.spec.scope, definition.namespaced ? 'Namespaced' : 'Cluster');
        for (const version of crd.spec.versions)
          assert.equal(version.subresources !== undefined, definition.statusSubresource);
      });

      it('keeps the fields gw does not model (a cluster stores what gw validate accepts with a warning)', () => {
        const schema = crd.spec.versions[0]!.schema.openAPIV3Schema as {
          properties: Record<string, Record<string, unknown>>;
          'x-kubernetes-preserve-unknown-fields'?: boolean;
        };
        assert.equal(schema['x-kubernetes-preserve-unknown-fields'], undefined, 'not at the top level');
        assert.equal(schema.properties.spec!['x-kubernetes-preserve-unknown-fields'], true);
      });
    });
  }

  it('have the printer columns of the upstream CRDs', () => {
    const gateway = toCrd(gatewayApiCrdKinds().find((definition) => definition.kind === 'Gateway')!) as {
      spec: { versions: { additionalPrinterColumns: { name: string }[] }[] };
    };
    assert.deepEqual(
      gateway.spec.versions[0]!.additionalPrinterColumns.map((column) => column.name),
      ['Class', 'Address', 'Programmed', 'Age'],
    );
  });
});

describe('the structural checks themselves', () => {
  it('catch what kube-apiserver would refuse', () => {
    const problems: string[] = [];
    structuralProblems(
      {
        type: 'object',
        properties: {
          names: { type: 'array', items: { type: 'string' } },
          untyped: {},
          both: { type: 'object', properties: {}, additionalProperties: { type: 'string' } },
          port: { type: 'integer', minimum: 1, default: 0 },
          codes: { type: 'integer', enum: [301, '302'] },
          ref: { type: 'object', properties: { namespace: { type: 'string' } } },
        },
        'x-kubernetes-validations': [
          { rule: 'self.names.all(n, n != "")', message: 'names are not empty' },
          { rule: 'self.ref.namespace != ""', message: 'x' },
          { rule: 'self.names.exists(', message: 'broken' },
        ],
      },
      'T',
      problems,
    );
    const text = problems.join('\n');
    assert.match(text, /rule iterates \.names, which has no maxItems/);
    assert.match(text, /CEL reserved word \(namespace\)/);
    assert.match(text, /rule does not compile/);
    assert.match(text, /T\.untyped: no type/);
    assert.match(text, /T\.both: both properties and additionalProperties/);
    assert.match(text, /T\.port: default is invalid/);
    assert.match(text, /T\.codes: enum value "302" is not a integer/);
  });
});

describe('generated Inference Extension CRD (gw crds --inference-extension)', () => {
  it('matches the committed deploy/inference-extension-crds.yaml and names its release', () => {
    const committed = readFileSync(new URL('../../deploy/inference-extension-crds.yaml', import.meta.url), 'utf8');
    assert.equal(committed, inferenceExtensionCrdKinds().map(crdYaml).join('---\n'));
    const crd = toCrd(inferenceExtensionCrdKinds()[0]!) as {
      metadata: { name: string; annotations: Record<string, string> };
      spec: { names: { shortNames: string[] }; versions: { name: string; subresources?: unknown }[] };
    };
    assert.equal(crd.metadata.name, 'inferencepools.inference.networking.k8s.io');
    assert.equal(crd.metadata.annotations['inference.networking.k8s.io/bundle-version'], 'v1.6.0');
    assert.deepEqual(crd.spec.names.shortNames, ['infpool']);
    assert.deepEqual(
      crd.spec.versions.map(({ name, subresources }) => ({ name, subresources })),
      [{ name: 'v1', subresources: { status: {} } }],
    );
  });

  it("admits the extension's own shape and refuses what its CRD refuses", () => {
    const pool = (spec: Record<string, unknown>) => ({
      apiVersion: 'inference.networking.k8s.io/v1',
      kind: 'InferencePool',
      metadata: { name: 'vllm', namespace: 'default' },
      spec,
    });
    const valid = admit(
      pool({
        selector: { matchLabels: { app: 'vllm-llama3-8b-instruct' } },
        targetPorts: [{ number: 8000 }],
        endpointPickerRef: { name: 'vllm-llama3-8b-instruct-epp', port: { number: 9002 } },
      }),
    );
    assert.deepEqual(valid.errors.map(formatFieldError), []);
    // The CRD's defaults: kind Service, core group, FailClose, appProtocol http.
    assert.deepEqual(valid.object!.spec, {
      selector: { matchLabels: { app: 'vllm-llama3-8b-instruct' } },
      targetPorts: [{ number: 8000 }],
      endpointPickerRef: {
        name: 'vllm-llama3-8b-instruct-epp',
        port: { number: 9002 },
        group: '',
        kind: 'Service',
        failureMode: 'FailClose',
      },
      appProtocol: 'http',
    });
    const errors = (spec: Record<string, unknown>) => admit(pool(spec)).errors.map(formatFieldError).join('\n');
    assert.match(
      errors({
        selector: { matchLabels: { app: 'v' } },
        targetPorts: [{ number: 8000 }],
        endpointPickerRef: { name: 'epp' },
      }),
      /port is required when kind is 'Service'/,
    );
    assert.match(
      errors({ selector: { matchLabels: { app: 'v' } }, targetPorts: [{ number: 8000 }, { number: 8000 }] }),
      /port number must be unique/,
    );
    assert.match(errors({ selector: { matchLabels: { app: 'v' } }, targetPorts: [] }), /targetPorts/);
  });
});
