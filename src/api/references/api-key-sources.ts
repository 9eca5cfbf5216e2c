// The Secrets and ConfigMaps an APIKeyAuthentication reads its keys from (spec document 1,
// "Authentication" rule 1), checked against the objects that exist: a selector that selects
// nothing, an entry that does not parse (a raw key in a ConfigMap, broken JSON, a bad keyHash...)
// and one key held by two entries. These objects are not gw.dev objects, so none of this can be
// an admission error; the controller reports it on the GwPolicy. Messages name the object and the
// entry and say how to fix it — never the key.
import { createHash } from 'node:crypto';
import type { APIKeyAuthentication } from '../types/inbound-auth.ts';
import type { KubeObject } from '../validate/admission.ts';
import { formatFieldError } from '../validate/errors.ts';
import { parseApiKeyObject } from './api-key-entries.ts';

export type ApiKeySourceReason = 'RefNotFound' | 'InvalidAPIKeyEntry' | 'DuplicateAPIKey';

export interface ApiKeySourceProblem {
  reason: ApiKeySourceReason;
  message: string;
}

/** Secrets and ConfigMaps by "namespace/name" (a controller snapshot has this shape). */
export interface ApiKeyObjects {
  secrets: ReadonlyMap<string, KubeObject>;
  configMaps: ReadonlyMap<string, KubeObject>;
}

function labelsMatch(matchLabels: Record<string, string>, labels: Record<string, string> | undefined): boolean {
  return Object.entries(matchLabels).every(([key, value]) => labels?.[key] === value);
}

function selected(
  pool: ReadonlyMap<string, KubeObject>,
  namespace: string,
  matchLabels: Record<string, string>,
): KubeObject[] {
  return [...pool.values()]
    .filter((object) => object.metadata.namespace === namespace && labelsMatch(matchLabels, object.metadata.labels))
    .sort((a, b) => (a.metadata.name! < b.metadata.name! ? -1 : a.metadata.name! > b.metadata.name! ? 1 : 0));
}

/**
 * Problems of the key sources of `auth` (found at field path `path`) in `namespace`. A `secretRef`
 * to a Secret that does not exist is not reported here: it is a reference like any other, which
 * the caller's reference check reports.
 */
export function apiKeySourceProblems(
  auth: APIKeyAuthentication,
  path: string,
  namespace: string,
  objects: ApiKeyObjects,
): ApiKeySourceProblem[] {
  const problems: ApiKeySourceProblem[] = [];
  const sources: KubeObject[] = [];
  if (auth.secretRef && (auth.secretRef.kind ?? 'Secret') === 'Secret' && (auth.secretRef.group ?? '') === '') {
    const secret = objects.secrets.get(`${namespace}/${auth.secretRef.name}`);
    if (secret) sources.push(secret);
  }
  for (const [field, kind, pool] of [
    ['secretSelector', 'Secret', objects.secrets],
    ['configMapSelector', 'ConfigMap', objects.configMaps],
  ] as const) {
    const selector = auth[field];
    if (!selector) continue;
    const matched = selected(pool, namespace, selector.matchLabels);
    if (matched.length === 0) {
      const labels = Object.entries(selector.matchLabels)
        .map(([key, value]) => `${key}=${value}`)
        .join(',');
      problems.push({
        reason: 'RefNotFound',
        message: `${path}.${field}: no ${kind} in namespace ${namespace} has the labels ${labels}, so there are no keys`,
      });
    }
    sources.push(...matched);
  }

  // One key in two entries: which entry's metadata applies is undefined (the spec says so).
  const holders = new Map<string, string>();
  for (const object of sources) {
    const where = `${object.kind} ${namespace}/${object.metadata.name}`;
    const parsed = parseApiKeyObject(object);
    for (const error of parsed.errors) {
      problems.push({
        reason: 'InvalidAPIKeyEntry',
        message: `${where}: ${formatFieldError(error)}; the entry is ignored`,
      });
    }
    for (const entry of parsed.entries) {
      const digest = entry.keyHash ?? createHash('sha256').update(entry.key!).digest();
      const identity = digest.toString('hex');
      const entryName = `${where} entry ${entry.name}`;
      const first = holders.get(identity);
      if (first === undefined) holders.set(identity, entryName);
      else {
        problems.push({
          reason: 'DuplicateAPIKey',
          message: `${first} and ${entryName} hold the same API key; which entry's metadata applies is undefined, so keep the key in one entry`,
        });
      }
    }
  }
  return problems;
}
