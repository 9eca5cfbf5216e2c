// Golden tests of the whole translation (src/controller/translate.ts): objects in, every status
// and every Gateway's data-plane configuration out. Each directory under
// test/fixtures/controller/translate is one case, named for the rule it proves:
//
// The statuses are those `gw controller` writes, provisioning's included (the Gateway's and the
// GatewayClass's InvalidParameters, GwParameters' status: src/controller/provisioning/).
//
//   input.yaml            objects, admitted as `gw validate` admits them (the comment on top says
//                         what the case proves and where to look in the expected output)
//   stored.yaml           optional: objects a cluster can hold although gw's admission rejects them
//                         today (stored under an older CRD), for the checks the controller makes
//                         again at translation time; the test checks admission does reject each
//   expected.yaml         `statuses` (by kind, then object; each must fit its CRD's status
//                         schema) and `configs` (by Gateway)
//   update.yaml           optional: objects that replace (same kind, namespace and name) or join
//                         those of input.yaml, translated again into expected-update.yaml
//   explain.yaml          optional: `gw explain` commands run on input.yaml and their exact output,
//                         for provenance (which object set each effective field), which the
//                         data-plane configuration does not carry
//
// UPDATE_GOLDEN=1 rewrites expected*.yaml and the outputs in explain.yaml from the current
// results; without it they are only read and compared. The last tests check that every condition
// reason the controller can write (src/controller, src/api/references) is produced by some case
// here, and that the cases hold no other reason.
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { parse, stringify } from 'yaml';
import { GatewayStatus } from '../../src/api/kinds/gateway-api/gateway.ts';
import { GatewayClassStatus } from '../../src/api/kinds/gateway-api/gateway-class.ts';
import { HTTPRouteStatus } from '../../src/api/kinds/gateway-api/http-route.ts';
import { ListenerSetStatus } from '../../src/api/kinds/gateway-api/listener-set.ts';
import { PolicyStatus } from '../../src/api/kinds/gateway-api/shared.ts';
import { GwBackendStatus } from '../../src/api/kinds/gw-backend.ts';
import { GwModelStatus } from '../../src/api/kinds/gw-model.ts';
import { GwParametersStatus } from '../../src/api/kinds/gw-parameters.ts';
import { InferencePoolStatus } from '../../src/api/kinds/inference/inference-pool.ts';
import { parseResources } from '../../src/api/load/documents.ts';
import { admit, type KubeObject } from '../../src/api/validate/admission.ts';
import { formatFieldError } from '../../src/api/validate/errors.ts';
import { validateValue } from '../../src/api/validate/schema-validator.ts';
import { planProvisioning } from '../../src/controller/provisioning/plan.ts';
import { addProvisioningStatuses } from '../../src/controller/provisioning/statuses.ts';
import { SNAPSHOT_KINDS, snapshotOf } from '../../src/controller/snapshot.ts';
import { translate } from '../../src/controller/translate.ts';
import { kindKey, objectKey } from '../../src/store/store.ts';
import { runGw } from '../helpers/cli.ts';

const NOW = '2026-01-01T00:00:00Z';
const REVISION = 'golden';
const fixtureDir = new URL('../fixtures/controller/translate/', import.meta.url).pathname;
const srcDir = new URL('../../src/', import.meta.url).pathname;
/** Where the reasons the controller writes are defined (API key source problems are in the api module). */
const reasonSourceDirs = ['controller', 'api/references'].map((dir) => join(srcDir, dir));
const update = process.env.UPDATE_GOLDEN === '1';

function documents(file: string) {
  const loaded = parseResources(readFileSync(file, 'utf8'), file);
  assert.deepEqual(loaded.problems, [], `${file} does not load`);
  return loaded.documents;
}

/** Objects as the API server stores them: admitted, with the generation a store sets on create. */
function admittedObjects(file: string): KubeObject[] {
  return documents(file).map((document) => {
    const result = admit(document.value, { fromFiles: true });
    assert.deepEqual(result.errors.map(formatFieldError), [], `${file}: document ${document.document} is not admitted`);
    const object = result.object!;
    object.metadata.generation ??= 1;
    return object;
  });
}

/** Objects admission rejects today, as a cluster may still hold them (defaults applied). */
function storedObjects(file: string): KubeObject[] {
  return documents(file).map((document) => {
    const result = admit(document.value);
    assert.notDeepEqual(result.errors, [], `${file}: document ${document.document} is admitted; put it in input.yaml`);
    const object = result.object!;
    object.metadata.generation ??= 1;
    return object;
  });
}

const identity = (object: KubeObject) => `${kindKey(object)} ${objectKey(object)}`;

/** input.yaml (and stored.yaml); with `withUpdate`, update.yaml's objects replace or join them. */
function caseObjects(dir: string, withUpdate: boolean): KubeObject[] {
  const objects = admittedObjects(join(dir, 'input.yaml'));
  if (existsSync(join(dir, 'stored.yaml'))) objects.push(...storedObjects(join(dir, 'stored.yaml')));
  if (!withUpdate) return objects;
  const byIdentity = new Map(objects.map((object) => [identity(object), object]));
  for (const object of admittedObjects(join(dir, 'update.yaml'))) byIdentity.set(identity(object), object);
  return [...byIdentity.values()];
}

/** Kind names for the snapshot kinds ("policies" → "GwPolicy"). */
const KIND_NAMES = new Map(Object.entries(SNAPSHOT_KINDS).map(([kind, key]) => [kind, key.split('/')[1]!]));

/** The translation as plain data: statuses by kind name, then by object; configs by Gateway. */
function translated(objects: KubeObject[]): { statuses: Record<string, unknown>; configs: Record<string, unknown> } {
  const snapshot = snapshotOf(objects);
  const result = translate(snapshot, NOW, REVISION);
  const plan = planProvisioning(snapshot, result.gatewayApi, {
    version: '0.0.0-golden',
    randomBytes: (size) => new Uint8Array(size),
  });
  addProvisioningStatuses(result, snapshot, plan, new Map(), NOW);
  const statuses: Record<string, unknown> = {};
  for (const [kind, byObject] of result.statuses) statuses[KIND_NAMES.get(kind)!] = Object.fromEntries(byObject);
  return JSON.parse(JSON.stringify({ statuses, configs: Object.fromEntries(result.configs) }));
}

/** The status schema of each kind, as its CRD declares it: what the controller writes must fit. */
const STATUS_SCHEMAS = {
  GatewayClass: GatewayClassStatus,
  Gateway: GatewayStatus,
  ListenerSet: ListenerSetStatus,
  HTTPRoute: HTTPRouteStatus,
  GwPolicy: PolicyStatus,
  GwBackend: GwBackendStatus,
  GwModel: GwModelStatus,
  GwParameters: GwParametersStatus,
  InferencePool: InferencePoolStatus,
} as const;

function assertStatusesValid(statuses: Record<string, unknown>): void {
  for (const [kind, byObject] of Object.entries(statuses)) {
    const schema = STATUS_SCHEMAS[kind as keyof typeof STATUS_SCHEMAS];
    assert.ok(schema, `no status schema for ${kind}`);
    for (const [key, status] of Object.entries(byObject as Record<string, unknown>)) {
      const errors = validateValue(schema, status, 'status').errors.map(formatFieldError);
      assert.deepEqual(errors, [], `${kind} ${key}: the status does not fit the CRD`);
    }
  }
}

function compareGolden(actual: { statuses: Record<string, unknown> }, file: string): void {
  assertStatusesValid(actual.statuses);
  if (update) writeFileSync(file, stringify(actual, { lineWidth: 0 }));
  assert.ok(existsSync(file), `${file} is missing; run with UPDATE_GOLDEN=1 to write it`);
  assert.deepEqual(actual, parse(readFileSync(file, 'utf8')));
}

interface ExplainCase {
  command: string[];
  output: string;
}

const cases = readdirSync(fixtureDir, { withFileTypes: true })
  .filter((entry) => entry.isDirectory())
  .map((entry) => entry.name)
  .sort();

describe('translation (golden)', () => {
  for (const name of cases) {
    const dir = join(fixtureDir, name);
    it(name, async () => {
      compareGolden(translated(caseObjects(dir, false)), join(dir, 'expected.yaml'));
      if (existsSync(join(dir, 'update.yaml'))) {
        compareGolden(translated(caseObjects(dir, true)), join(dir, 'expected-update.yaml'));
      }
      const explainFile = join(dir, 'explain.yaml');
      if (existsSync(explainFile)) {
        const explains = parse(readFileSync(explainFile, 'utf8')) as ExplainCase[];
        for (const explain of explains) {
          const result = await runGw(['explain', '-f', join(dir, 'input.yaml'), ...explain.command]);
          assert.equal(result.stderr, '', explain.command.join(' '));
          assert.equal(result.code, 0, explain.command.join(' '));
          if (update) explain.output = result.stdout;
          assert.equal(result.stdout, explain.output, `gw explain ${explain.command.join(' ')}`);
        }
        if (update) writeFileSync(explainFile, stringify(explains, { lineWidth: 0 }));
      }
    });
  }
});

/** Every condition (an object with type, status and reason) in a parsed expected file. */
function conditionsIn(value: unknown, found: { type: string; reason: string; message: string }[] = []) {
  if (Array.isArray(value)) for (const item of value) conditionsIn(item, found);
  else if (value !== null && typeof value === 'object') {
    const record = value as Record<string, unknown>;
    if (typeof record.type === 'string' && typeof record.reason === 'string' && typeof record.status === 'string') {
      found.push({ type: record.type, reason: record.reason, message: String(record.message ?? '') });
    }
    for (const child of Object.values(record)) conditionsIn(child, found);
  }
  return found;
}

function expectedFiles(): { file: string; content: unknown }[] {
  return cases.flatMap((name) =>
    readdirSync(join(fixtureDir, name))
      .filter((file) => /^expected.*\.yaml$/.test(file))
      .map((file) => ({
        file: `${name}/${file}`,
        content: parse(readFileSync(join(fixtureDir, name, file), 'utf8')),
      })),
  );
}

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory()
      ? sourceFiles(join(dir, entry.name))
      : entry.name.endsWith('.ts')
        ? [join(dir, entry.name)]
        : [],
  );
}

/**
 * Capitalised words quoted in those sources that are not condition reasons. A reason is any
 * other such word: a new reason in the controller therefore fails the test below until a golden
 * case produces it; a new word that is not a reason belongs here.
 */
const NOT_REASONS = new Set([
  // kinds
  'Gateway',
  'GatewayClass',
  'ListenerSet',
  'HTTPRoute',
  'ReferenceGrant',
  'Service',
  'Secret',
  'ConfigMap',
  'Namespace',
  'GwBackend',
  'GwModel',
  'GwPolicy',
  'GwParameters',
  'Pod',
  'EndpointSlice',
  'InferencePool',
  // condition types that are never a reason
  'StatusSummarized',
  'Authorized',
  'ModelCatalogResolved',
  // a Pod's condition type (inference-pools.ts: a pool's members are its Ready Pods)
  'Ready',
  // field values: protocols, TLS modes, match types, namespace selection, strategies, booleans
  'HTTP',
  'HTTPS',
  'TCP',
  'Terminate',
  'Passthrough',
  'Exact',
  'PathPrefix',
  'RegularExpression',
  'Same',
  'All',
  'Selector',
  'None',
  'In',
  'NotIn',
  'Exists',
  'DoesNotExist',
  'Override',
  'Default',
  'True',
  'False',
  // merge levels (policies/merge.ts)
  'Listener',
  'Route',
  'RouteRule',
  'Backend',
  'BackendSection',
  'BackendInline',
  'SubBackendInline',
  // Service types and EndpointSlice address types (mesh-endpoints.ts)
  'ExternalName',
  'FQDN',
  // traffic policy phase (policies/attachments.ts)
  'PreRouting',
  // store event types
  'ADDED',
  'MODIFIED',
  'DELETED',
]);

describe('condition reasons', () => {
  /** Each reason quoted in src/controller and src/api/references, with the first file that quotes it. */
  function sourceReasons(): Map<string, string> {
    const reasons = new Map<string, string>();
    for (const file of reasonSourceDirs.flatMap(sourceFiles)) {
      for (const match of readFileSync(file, 'utf8').matchAll(/'([A-Z][A-Za-z]*)'/g)) {
        if (!NOT_REASONS.has(match[1]!) && !reasons.has(match[1]!)) reasons.set(match[1]!, file.slice(srcDir.length));
      }
    }
    return reasons;
  }

  /** Each reason in the expected files, with the first case that has it. */
  function goldenReasons(): Map<string, string> {
    const reasons = new Map<string, string>();
    for (const { file, content } of expectedFiles()) {
      for (const { reason } of conditionsIn(content)) if (!reasons.has(reason)) reasons.set(reason, file);
    }
    return reasons;
  }

  it('every reason the controller can write is produced by a golden case', () => {
    const source = sourceReasons();
    const golden = goldenReasons();
    assert.ok(source.has('TargetNotFound') && source.has('PortUnavailable'), 'the scan finds reasons');
    const unproduced = [...source]
      .filter(([reason]) => !golden.has(reason))
      .map(([reason, file]) => `${reason} (src/${file})`);
    assert.deepEqual(unproduced, [], 'reasons no case under test/fixtures/controller/translate produces');
  });

  it('every reason in the golden cases is one the controller writes', () => {
    const source = sourceReasons();
    const unknown = [...goldenReasons()].filter(([reason]) => !source.has(reason)).map(([r, f]) => `${r} (${f})`);
    assert.deepEqual(unknown, []);
  });

  it('API key problems name the object and the entry, never the key', () => {
    const statuses = parse(readFileSync(join(fixtureDir, 'policy-api-key-entries', 'expected.yaml'), 'utf8')).statuses;
    const messages = conditionsIn(statuses.GwPolicy).map((c) => c.message);
    assert.ok(messages.some((m) => m.includes('ConfigMap default/team-keys: data[bob]')));
    for (const message of messages) assert.doesNotMatch(message, /sk-/);
  });
});
