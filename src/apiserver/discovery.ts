// Discovery: how kubectl and client libraries learn which resources exist, their names, scope
// and verbs. Both forms are served: the legacy documents (/api, /api/v1, /apis, /apis/<g>,
// /apis/<g>/<v>) and aggregated discovery (apidiscovery.k8s.io v2, and v2beta1 for older
// clients), which answers /api and /apis in one document each. /version says which Kubernetes
// API gw follows.
import { type ApiResource, groupVersions, SCALE_KIND, STATUS_VERBS, VERBS } from './resources.ts';

/** The Kubernetes version whose API the server follows (kubectl warns beyond one minor of skew). */
export const KUBERNETES_VERSION = { major: '1', minor: '32', gitVersion: 'v1.32.0' };

export const AGGREGATED_DISCOVERY = {
  as: 'APIGroupDiscoveryList',
  group: 'apidiscovery.k8s.io',
  versions: ['v2', 'v2beta1'],
};

export function versionInfo(gwVersion: string): Record<string, string> {
  return {
    major: KUBERNETES_VERSION.major,
    minor: KUBERNETES_VERSION.minor,
    gitVersion: `${KUBERNETES_VERSION.gitVersion}+gw.${gwVersion}`,
    gitCommit: '',
    gitTreeState: 'clean',
    buildDate: '1970-01-01T00:00:00Z',
    goVersion: `node${process.versions.node}`,
    compiler: 'gw',
    platform: `${process.platform}/${process.arch === 'x64' ? 'amd64' : process.arch}`,
  };
}

function apiResource(resource: ApiResource): Record<string, unknown>[] {
  const main: Record<string, unknown> = {
    name: resource.plural,
    singularName: resource.singular,
    namespaced: resource.namespaced,
    kind: resource.kind,
    verbs: [...VERBS],
  };
  if (resource.shortNames.length > 0) main.shortNames = resource.shortNames;
  if (resource.categories.length > 0) main.categories = resource.categories;
  const entries = [main];
  if (resource.statusSubresource) {
    entries.push({
      name: `${resource.plural}/status`,
      singularName: '',
      namespaced: resource.namespaced,
      kind: resource.kind,
      verbs: [...STATUS_VERBS],
    });
  }
  if (resource.scaleSubresource) {
    entries.push({
      name: `${resource.plural}/scale`,
      singularName: '',
      namespaced: resource.namespaced,
      group: SCALE_KIND.group,
      version: SCALE_KIND.version,
      kind: SCALE_KIND.kind,
      verbs: [...STATUS_VERBS],
    });
  }
  return entries;
}

/** /api: the core group's versions. */
export function coreVersions(serverAddress: string): Record<string, unknown> {
  return {
    kind: 'APIVersions',
    versions: ['v1'],
    serverAddressByClientCIDRs: [{ clientCIDR: '0.0.0.0/0', serverAddress }],
  };
}

/** The served versions of the core group or of each named group, in priority order (the first is preferred). */
function versionsByGroup(core: boolean): Map<string, ReturnType<typeof groupVersions>> {
  const groups = new Map<string, ReturnType<typeof groupVersions>>();
  for (const entry of groupVersions()) {
    if ((entry.group === '') !== core) continue;
    groups.set(entry.group, [...(groups.get(entry.group) ?? []), entry]);
  }
  return groups;
}

function groupEntry(group: string, versions: readonly { version: string }[]): Record<string, unknown> {
  const entries = versions.map(({ version }) => ({ groupVersion: `${group}/${version}`, version }));
  return { name: group, versions: entries, preferredVersion: entries[0] };
}

/** /apis (legacy): every named group. */
export function groupList(): Record<string, unknown> {
  return {
    kind: 'APIGroupList',
    apiVersion: 'v1',
    groups: [...versionsByGroup(false)].map(([group, versions]) => groupEntry(group, versions)),
  };
}

/** /apis/<group>, or undefined when the group is not served. */
export function apiGroup(group: string): Record<string, unknown> | undefined {
  const versions = versionsByGroup(false).get(group);
  if (!versions) return undefined;
  return { kind: 'APIGroup', apiVersion: 'v1', ...groupEntry(group, versions) };
}

/** /api/v1 or /apis/<group>/<version>, or undefined when not served. */
export function resourceList(group: string, version: string): Record<string, unknown> | undefined {
  const entry = groupVersions().find((candidate) => candidate.group === group && candidate.version === version);
  if (!entry) return undefined;
  const list: Record<string, unknown> = {
    kind: 'APIResourceList',
    groupVersion: group === '' ? version : `${group}/${version}`,
    resources: entry.resources.flatMap(apiResource),
  };
  if (group !== '') list.apiVersion = 'v1';
  return list;
}

function aggregatedResource(resource: ApiResource): Record<string, unknown> {
  const responseKind = { group: resource.group, version: resource.version, kind: resource.kind };
  const entry: Record<string, unknown> = {
    resource: resource.plural,
    responseKind,
    scope: resource.namespaced ? 'Namespaced' : 'Cluster',
    singularResource: resource.singular,
    verbs: [...VERBS],
  };
  if (resource.shortNames.length > 0) entry.shortNames = resource.shortNames;
  if (resource.categories.length > 0) entry.categories = resource.categories;
  const subresources: Record<string, unknown>[] = [];
  if (resource.statusSubresource) subresources.push({ subresource: 'status', responseKind, verbs: [...STATUS_VERBS] });
  if (resource.scaleSubresource) {
    subresources.push({ subresource: 'scale', responseKind: { ...SCALE_KIND }, verbs: [...STATUS_VERBS] });
  }
  if (subresources.length > 0) entry.subresources = subresources;
  return entry;
}

/** Aggregated discovery of /api (`core`) or /apis (the named groups), as APIGroupDiscoveryList. */
export function aggregatedDiscovery(which: 'core' | 'groups', discoveryVersion: string): Record<string, unknown> {
  const items = [...versionsByGroup(which === 'core')].map(([group, versions]) => {
    const metadata: Record<string, unknown> = { creationTimestamp: null };
    if (group !== '') metadata.name = group;
    return {
      metadata,
      versions: versions.map((entry) => ({
        version: entry.version,
        resources: entry.resources.map(aggregatedResource),
        freshness: 'Current',
      })),
    };
  });
  return {
    kind: 'APIGroupDiscoveryList',
    apiVersion: `apidiscovery.k8s.io/${discoveryVersion}`,
    metadata: {},
    items,
  };
}
