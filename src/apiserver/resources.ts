// The resources the API server serves: every kind of the API registry (src/api/kinds) under its
// REST names, in every version it is served in, with what kubectl learns from discovery (short
// names, categories, verbs, scope), the short names the Gateway API CRDs give their kinds, and
// the strategic-merge list strategies the built-in kinds' schemas declare.
import { apiVersionOf, type KindDefinition } from '../api/kinds/kind.ts';
import { KINDS } from '../api/kinds/registry.ts';
import { patchStrategiesOf } from '../api/schema/patch-strategies.ts';
import type { KindKey } from '../store/store.ts';
import type { ErrorSubject } from './errors.ts';
import type { ListStrategies } from './patch/strategic-merge-patch.ts';

export interface ApiResource extends ErrorSubject {
  definition: KindDefinition;
  group: string;
  version: string;
  kind: string;
  plural: string;
  singular: string;
  listKind: string;
  apiVersion: string;
  /** The apiVersion objects of the kind are stored in (conversion.ts); apiVersion for most kinds. */
  storageApiVersion: string;
  /** The store's kind key ("gw.dev/GwBackend", "/Secret"). */
  kindKey: KindKey;
  namespaced: boolean;
  shortNames: string[];
  categories: string[];
  /** A custom resource in a real cluster (gw.dev and Gateway API kinds): CRD rules apply. */
  customResource: boolean;
  statusSubresource: boolean;
  scaleSubresource: boolean;
  /** Strategic merge patch list strategies (built-in kinds only; undefined: not accepted). */
  listStrategies: ListStrategies | undefined;
}

export const VERBS = ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch'] as const;
export const STATUS_VERBS = ['get', 'patch', 'update'] as const;
/** The kind the scale subresource serves. */
export const SCALE_KIND = { group: 'autoscaling', version: 'v1', kind: 'Scale' } as const;

/** Short names and categories the upstream Gateway API CRDs give these kinds. */
const KNOWN_NAMES: Record<string, { shortNames?: string[]; categories?: string[] }> = {
  'gateway.networking.k8s.io/GatewayClass': { shortNames: ['gc'], categories: ['gateway-api'] },
  'gateway.networking.k8s.io/Gateway': { shortNames: ['gtw'], categories: ['gateway-api'] },
  'gateway.networking.k8s.io/HTTPRoute': { categories: ['gateway-api'] },
  'gateway.networking.k8s.io/ListenerSet': { categories: ['gateway-api'] },
  'gateway.networking.k8s.io/ReferenceGrant': { shortNames: ['refgrant'], categories: ['gateway-api'] },
  'inference.networking.k8s.io/InferencePool': { shortNames: ['infpool'] },
};

function kindKeyOf(definition: KindDefinition): KindKey {
  return `${definition.group}/${definition.kind}`;
}

function toResource(definition: KindDefinition, version: string): ApiResource {
  const key = kindKeyOf(definition);
  const known = KNOWN_NAMES[key] ?? {};
  const builtIn = definition.builtIn;
  return {
    definition,
    group: definition.group,
    version,
    kind: definition.kind,
    plural: definition.plural,
    singular: definition.singular,
    listKind: definition.listKind,
    apiVersion: apiVersionOf({ group: definition.group, version }),
    storageApiVersion: apiVersionOf(definition),
    kindKey: key,
    namespaced: definition.namespaced,
    shortNames: definition.shortNames ?? known.shortNames ?? [],
    categories: definition.categories ?? known.categories ?? [],
    customResource: !builtIn,
    statusSubresource: definition.statusSubresource,
    scaleSubresource: definition.scaleSubresource,
    listStrategies: builtIn ? patchStrategiesOf(definition.schema) : undefined,
  };
}

/** One resource per kind, in the version its objects are stored in: what per-kind work iterates. */
export const RESOURCES: readonly ApiResource[] = KINDS.map((definition) => toResource(definition, definition.version));

/** Every resource served: each kind in each of its versions (the stored one is in RESOURCES). */
export const SERVED_RESOURCES: readonly ApiResource[] = KINDS.flatMap((definition) =>
  definition.servedVersions.map((version) =>
    version === definition.version
      ? RESOURCES.find((resource) => resource.definition === definition)!
      : toResource(definition, version),
  ),
);

const byPath = new Map(
  SERVED_RESOURCES.map((resource) => [`${resource.group}/${resource.version}/${resource.plural}`, resource]),
);
const byKindKey = new Map(RESOURCES.map((resource) => [resource.kindKey, resource]));
const byApiVersionAndKind = new Map(
  SERVED_RESOURCES.map((resource) => [`${resource.apiVersion} ${resource.kind}`, resource]),
);

/** The resource served at /api(s)/<group>/<version>/<plural>. */
export function resourceAt(group: string, version: string, plural: string): ApiResource | undefined {
  return byPath.get(`${group}/${version}/${plural}`);
}

/** The resource of a kind in the version its objects are stored in. */
export function resourceOfKind(kind: KindKey): ApiResource | undefined {
  return byKindKey.get(kind);
}

/** The resource an object of this apiVersion and kind is written through. */
export function resourceOfVersion(apiVersion: string, kind: string): ApiResource | undefined {
  return byApiVersionAndKind.get(`${apiVersion} ${kind}`);
}

/**
 * Kubernetes' version priority, highest first: GA before beta before alpha, then the larger
 * major and the larger pre-release number (v1, v1beta2, v1beta1, v1alpha1).
 */
export function compareVersionPriority(a: string, b: string): number {
  const rank = (version: string): number[] => {
    const match = /^v(\d+)(?:(alpha|beta)(\d+))?$/.exec(version);
    if (!match) return [0, 0, 0];
    const stage = match[2] === undefined ? 3 : match[2] === 'beta' ? 2 : 1;
    return [stage, Number(match[1]), Number(match[3] ?? 0)];
  };
  const [x, y] = [rank(a), rank(b)];
  for (let i = 0; i < 3; i++) if (x[i] !== y[i]) return y[i]! - x[i]!;
  return 0;
}

/**
 * The group-versions served: core ("" v1) first, then groups by name; the versions of a group in
 * priority order, the first being the group's preferred version.
 */
export function groupVersions(): { group: string; version: string; resources: ApiResource[] }[] {
  const groups = new Map<string, { group: string; version: string; resources: ApiResource[] }>();
  for (const resource of SERVED_RESOURCES) {
    const id = `${resource.group}/${resource.version}`;
    if (!groups.has(id)) groups.set(id, { group: resource.group, version: resource.version, resources: [] });
    groups.get(id)!.resources.push(resource);
  }
  return [...groups.values()].sort((a, b) => {
    if (a.group !== b.group) return a.group === '' ? -1 : b.group === '' ? 1 : a.group.localeCompare(b.group);
    return compareVersionPriority(a.version, b.version);
  });
}
