// Resolves a GwPolicy's targetRefs and targetSelectors to attachment points in a snapshot:
// the object, the section (listener, route rule, Service port, sub-backend) or Gateway port, and
// the merge level. A target that does not exist is reported, never silently dropped.

import type { GwPolicySpec } from '../../api/kinds/gw-policy.ts';
import type { LocalPolicyTargetReferenceWithSectionName } from '../../api/types/references.ts';
import type { KubeObject } from '../../api/validate/admission.ts';
import { selectorMatches } from '../gateway-api/selectors.ts';
import type { Snapshot, SnapshotKind } from '../snapshot.ts';
import type { Level } from './merge.ts';

export interface ResolvedTarget {
  kind: 'Gateway' | 'ListenerSet' | 'HTTPRoute' | 'Service' | 'GwBackend';
  namespace: string;
  name: string;
  sectionName?: string;
  port?: number;
  level: Level;
  /** "HTTPRoute default/llm rule chat" — how status and `gw explain` name the target. */
  description: string;
}

export interface TargetProblem {
  reason: 'TargetNotFound';
  message: string;
}

export interface TargetResolution {
  targets: ResolvedTarget[];
  problems: TargetProblem[];
}

const KIND_INDEX: Record<ResolvedTarget['kind'], SnapshotKind> = {
  Gateway: 'gateways',
  ListenerSet: 'listenerSets',
  HTTPRoute: 'httpRoutes',
  Service: 'services',
  GwBackend: 'backends',
};

/** The section names an object offers, and what a section is called in messages. */
function sectionsOf(kind: ResolvedTarget['kind'], object: KubeObject): { names: string[]; noun: string } {
  const spec = (object.spec ?? {}) as Record<string, unknown>;
  const names = (items: unknown, field = 'name') =>
    Array.isArray(items) ? items.map((item) => String((item as Record<string, unknown>)[field] ?? '')) : [];
  switch (kind) {
    case 'Gateway':
    case 'ListenerSet':
      return { names: names(spec.listeners), noun: 'listener' };
    case 'HTTPRoute':
      return { names: names(spec.rules), noun: 'rule' };
    case 'Service':
      return { names: names(spec.ports, 'port'), noun: 'port' };
    case 'GwBackend': {
      const ai = spec.ai as { groups?: { providers?: unknown[] }[] } | undefined;
      const mcp = spec.mcp as { targets?: unknown[] } | undefined;
      if (mcp) return { names: names(mcp.targets), noun: 'MCP target' };
      return { names: (ai?.groups ?? []).flatMap((group) => names(group.providers)), noun: 'provider' };
    }
  }
}

function levelOf(kind: ResolvedTarget['kind'], sectioned: boolean): Level {
  switch (kind) {
    case 'Gateway':
      return sectioned ? 'Listener' : 'Gateway';
    case 'ListenerSet':
      return 'Listener';
    case 'HTTPRoute':
      return sectioned ? 'RouteRule' : 'Route';
    case 'Service':
    case 'GwBackend':
      return sectioned ? 'BackendSection' : 'Backend';
  }
}

function resolveOne(
  namespace: string,
  kind: ResolvedTarget['kind'],
  object: KubeObject,
  reference: { sectionName?: string; port?: number },
  resolution: TargetResolution,
): void {
  const name = object.metadata.name!;
  let description = `${kind} ${namespace}/${name}`;
  const { sectionName, port } = reference;
  if (sectionName !== undefined) {
    const sections = sectionsOf(kind, object);
    if (!sections.names.includes(sectionName)) {
      resolution.problems.push({
        reason: 'TargetNotFound',
        message: `${description} has no ${sections.noun} "${sectionName}"${sections.names.length > 0 ? ` (it has ${sections.names.join(', ')})` : ''}`,
      });
      return;
    }
    description += ` ${sections.noun} ${sectionName}`;
  }
  if (port !== undefined) {
    const listeners = (((object.spec ?? {}) as { listeners?: { port?: number }[] }).listeners ?? []).map((l) => l.port);
    if (!listeners.includes(port)) {
      resolution.problems.push({ reason: 'TargetNotFound', message: `${description} has no listener on port ${port}` });
      return;
    }
    description += ` port ${port}`;
  }
  resolution.targets.push({
    kind,
    namespace,
    name,
    sectionName,
    port,
    // A Gateway port (frontend policies) is more specific than the whole Gateway, as a listener is.
    level: levelOf(kind, sectionName !== undefined || port !== undefined),
    description,
  });
}

export function resolvePolicyTargets(policy: KubeObject, snapshot: Snapshot): TargetResolution {
  const spec = policy.spec as GwPolicySpec;
  const namespace = policy.metadata.namespace ?? 'default';
  const resolution: TargetResolution = { targets: [], problems: [] };
  for (const reference of spec.targetRefs ?? []) {
    const kind = reference.kind as ResolvedTarget['kind'];
    const object = snapshot[KIND_INDEX[kind]].get(`${namespace}/${reference.name}`);
    if (!object) {
      resolution.problems.push({
        reason: 'TargetNotFound',
        message: `${kind} ${namespace}/${reference.name} does not exist`,
      });
      continue;
    }
    resolveOne(namespace, kind, object, reference as LocalPolicyTargetReferenceWithSectionName, resolution);
  }
  for (const selector of spec.targetSelectors ?? []) {
    const kind = selector.kind as ResolvedTarget['kind'];
    const matched = [...snapshot[KIND_INDEX[kind]].values()]
      .filter(
        (object) => object.metadata.namespace === namespace && selectorMatches(selector, object.metadata.labels ?? {}),
      )
      .sort((a, b) => a.metadata.name!.localeCompare(b.metadata.name!));
    if (matched.length === 0) {
      const labels = Object.entries(selector.matchLabels)
        .map(([k, v]) => `${k}=${v}`)
        .join(',');
      resolution.problems.push({
        reason: 'TargetNotFound',
        message: `no ${kind} in namespace ${namespace} matches the labels ${labels}`,
      });
    }
    for (const object of matched) resolveOne(namespace, kind, object, selector, resolution);
  }
  return resolution;
}

/** The target resolution of every GwPolicy, by "namespace/name": computed once per translation. */
export type TargetResolutions = Map<string, TargetResolution>;

/**
 * Resolutions of policies that only use targetRefs, with the target objects they were made
 * from. Store objects are immutable and replaced on every change, so a resolution is still
 * right while the policy and each object its targetRefs name are the same objects.
 */
const byTargetRefs = new WeakMap<KubeObject, { objects: (KubeObject | undefined)[]; resolution: TargetResolution }>();

function targetObjects(policy: KubeObject, snapshot: Snapshot): (KubeObject | undefined)[] {
  const namespace = policy.metadata.namespace ?? 'default';
  return ((policy.spec as GwPolicySpec).targetRefs ?? []).map((reference) =>
    snapshot[KIND_INDEX[reference.kind as ResolvedTarget['kind']]].get(`${namespace}/${reference.name}`),
  );
}

export function resolveAllPolicyTargets(snapshot: Snapshot): TargetResolutions {
  const resolutions: TargetResolutions = new Map();
  for (const [key, policy] of snapshot.policies) {
    if ((policy.spec as GwPolicySpec).targetSelectors) {
      resolutions.set(key, resolvePolicyTargets(policy, snapshot));
      continue;
    }
    const objects = targetObjects(policy, snapshot);
    const cached = byTargetRefs.get(policy);
    if (cached?.objects.every((object, i) => object === objects[i])) {
      resolutions.set(key, cached.resolution);
      continue;
    }
    const resolution = resolvePolicyTargets(policy, snapshot);
    byTargetRefs.set(policy, { objects, resolution });
    resolutions.set(key, resolution);
  }
  return resolutions;
}
