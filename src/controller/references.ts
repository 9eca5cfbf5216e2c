// References from an object's spec to Secrets, ConfigMaps, Services, GwBackends and InferencePools
// (a custom provider's backendRef) in its namespace, found by their field names wherever they
// occur (backend policies, providers, MCP targets, auth...), and
// checked against a snapshot. A missing object is a condition, never a silent drop.

import { INFERENCE_GROUP } from '../api/kinds/inference/inference-pool.ts';
import { isPlainObject } from '../util/values.ts';
import type { Snapshot } from './snapshot.ts';

export interface Reference {
  kind: 'Secret' | 'ConfigMap' | 'Service' | 'GwBackend' | 'InferencePool';
  name: string;
  /** Field path of the reference, as errors print it. */
  path: string;
}

/** Fields that name a Secret (a LocalSecretKeyRef or LocalSecretObjectRef, or a list of them). */
const SECRET_FIELDS = new Set([
  'secretRef',
  'signingKeyRef',
  'clientSecretRef',
  'certificateRef',
  'mtlsCertificateRef',
]);

function referenceFrom(field: string, value: Record<string, unknown>, path: string): Reference | undefined {
  if (typeof value.name !== 'string') return undefined;
  if (SECRET_FIELDS.has(field)) {
    // An explicit other kind or group is not a Secret reference gw resolves.
    if ((value.kind ?? 'Secret') !== 'Secret' || (value.group ?? '') !== '') return undefined;
    return { kind: 'Secret', name: value.name, path };
  }
  if (field === 'caCertificateRefs') {
    return { kind: value.kind === 'Secret' ? 'Secret' : 'ConfigMap', name: value.name, path };
  }
  if (field === 'backendRef' && value.namespace === undefined) {
    const group = (value.group ?? '') as string;
    if ((value.kind ?? 'Service') === 'Service' && group === '') return { kind: 'Service', name: value.name, path };
    if (value.kind === 'GwBackend' && group === 'gw.dev') return { kind: 'GwBackend', name: value.name, path };
    if (value.kind === 'InferencePool' && group === INFERENCE_GROUP)
      return { kind: 'InferencePool', name: value.name, path };
  }
  return undefined;
}

/** Every reference in `value` (usually an object's spec), with its field path under `path`. */
export function findReferences(value: unknown, path: string, found: Reference[] = []): Reference[] {
  if (Array.isArray(value)) {
    for (const [index, item] of value.entries()) findReferences(item, `${path}[${index}]`, found);
    return found;
  }
  if (!isPlainObject(value)) return found;
  for (const [field, child] of Object.entries(value)) {
    const childPath = `${path}.${field}`;
    const entries = Array.isArray(child)
      ? child.map((item, index) => [item, `${childPath}[${index}]`] as const)
      : [[child, childPath] as const];
    let matched = false;
    for (const [entry, entryPath] of entries) {
      if (!isPlainObject(entry)) continue;
      const reference = referenceFrom(field, entry, entryPath);
      if (reference) {
        found.push(reference);
        matched = true;
      }
    }
    if (!matched) findReferences(child, childPath, found);
  }
  return found;
}

const INDEX = {
  Secret: 'secrets',
  ConfigMap: 'configMaps',
  Service: 'services',
  GwBackend: 'backends',
  InferencePool: 'inferencePools',
} as const;

/** The references of `spec` whose object does not exist in `namespace`, as messages. */
export function missingReferences(spec: unknown, namespace: string, snapshot: Snapshot): string[] {
  return findReferences(spec, 'spec')
    .filter((reference) => !snapshot[INDEX[reference.kind]].has(`${namespace}/${reference.name}`))
    .map((reference) => `${reference.path}: ${reference.kind} ${namespace}/${reference.name} does not exist`);
}
