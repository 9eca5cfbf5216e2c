// Which policies apply where. Every GwPolicy's targets become attachments indexed by the target
// they name ("Gateway ns/name", "HTTPRoute ns/name rule chat", "GwBackend ns/name provider p"...);
// inline backend policies (GwBackend.policies, provider and MCP target policies) join them at
// their own levels. An attachment point (a listener, a route rule, a backend reached from a rule)
// then collects the attachments of every target on its path and merges them.
import type { GwPolicySpec } from '../../api/kinds/gw-policy.ts';
import type { KubeObject } from '../../api/validate/admission.ts';
import { reservedClaimProblems } from '../backends/reserved-claims.ts';
import type { EffectiveListener } from '../gateway-api/types.ts';
import type { Snapshot } from '../snapshot.ts';
import { type Attachment, type EffectiveSection, type Level, mergeSection, type PolicySection } from './merge.ts';
import { resolveAllPolicyTargets, type TargetResolutions } from './targets.ts';

export interface PolicyIndex {
  byTarget: Map<string, Attachment[]>;
}

const SECTIONS: PolicySection[] = ['frontend', 'traffic', 'backend'];

function add(index: PolicyIndex, key: string, attachment: Attachment): void {
  const list = index.byTarget.get(key);
  if (list) list.push(attachment);
  else index.byTarget.set(key, [attachment]);
}

function inline(
  source: string,
  level: Level,
  target: string,
  object: KubeObject,
  fields: Record<string, unknown> | undefined,
): Attachment | undefined {
  if (!fields || Object.keys(fields).length === 0) return undefined;
  return {
    source,
    namespace: object.metadata.namespace ?? '',
    level,
    target,
    creationTimestamp: object.metadata.creationTimestamp ?? '',
    section: 'backend',
    fields,
  };
}

const rejections = new WeakMap<KubeObject, string[]>();

/**
 * Why the policy is rejected at translation time, as the spec has the controller do (jwtSign
 * claims with iat, exp or nbf), remembered per (immutable) store object. A rejected policy is
 * not applied anywhere (the index leaves it out); its status says why.
 */
export function policyRejections(policy: KubeObject): string[] {
  let found = rejections.get(policy);
  if (found === undefined) {
    found = reservedClaimProblems(policy.spec, 'spec');
    rejections.set(policy, found);
  }
  return found;
}

/** Indexes every GwPolicy attachment and every inline backend policy of the snapshot. */
export function indexPolicies(
  snapshot: Snapshot,
  resolutions: TargetResolutions = resolveAllPolicyTargets(snapshot),
): PolicyIndex {
  const index: PolicyIndex = { byTarget: new Map() };
  for (const [key, policy] of snapshot.policies) {
    if (policyRejections(policy).length > 0) continue;
    const spec = policy.spec as GwPolicySpec;
    const source = `GwPolicy ${policy.metadata.namespace}/${policy.metadata.name}`;
    const override = spec.strategy?.inheritance === 'Override';
    for (const target of resolutions.get(key)?.targets ?? []) {
      for (const section of SECTIONS) {
        const fields = spec[section] as Record<string, unknown> | undefined;
        if (!fields) continue;
        add(index, target.description, {
          source,
          namespace: policy.metadata.namespace ?? '',
          level: target.level,
          target: target.description,
          creationTimestamp: policy.metadata.creationTimestamp ?? '',
          section,
          fields,
          override: section === 'traffic' ? override : undefined,
        });
      }
    }
  }
  for (const backend of snapshot.backends.values()) {
    const name = `GwBackend ${backend.metadata.namespace}/${backend.metadata.name}`;
    const spec = backend.spec as {
      policies?: Record<string, unknown>;
      ai?: { groups?: { providers: { name: string; policies?: Record<string, unknown> }[] }[] };
      mcp?: { targets: { name: string; static?: { policies?: Record<string, unknown> } }[] };
    };
    const whole = inline(name, 'BackendInline', name, backend, spec.policies);
    if (whole) add(index, name, whole);
    for (const provider of (spec.ai?.groups ?? []).flatMap((group) => group.providers)) {
      const target = `${name} provider ${provider.name}`;
      const attachment = inline(target, 'SubBackendInline', target, backend, provider.policies);
      if (attachment) add(index, target, attachment);
    }
    for (const mcpTarget of spec.mcp?.targets ?? []) {
      const target = `${name} MCP target ${mcpTarget.name}`;
      const attachment = inline(target, 'SubBackendInline', target, backend, mcpTarget.static?.policies);
      if (attachment) add(index, target, attachment);
    }
  }
  return index;
}

/** The targets a request through `listener` (and a route rule, and a backend) passes. */
export interface AttachmentPoint {
  gateway: string;
  listener: EffectiveListener;
  route?: { namespace: string; name: string; rule?: string };
  backend?: { kind: 'Service' | 'GwBackend'; namespace: string; name: string; port?: number; section?: string };
}

/** The target keys of a backend itself: the object, a Service port, a provider or MCP target. */
export function backendTargetKeys(backend: NonNullable<AttachmentPoint['backend']>): string[] {
  const object = `${backend.kind} ${backend.namespace}/${backend.name}`;
  const keys = [object];
  if (backend.kind === 'Service' && backend.port !== undefined) keys.push(`${object} port ${backend.port}`);
  if (backend.section) keys.push(`${object} provider ${backend.section}`, `${object} MCP target ${backend.section}`);
  return keys;
}

/** The target keys on the path of an attachment point, least specific first. */
function targetKeys(point: AttachmentPoint): string[] {
  const keys = [`Gateway ${point.gateway}`, `Gateway ${point.gateway} port ${point.listener.port}`];
  const source = point.listener.source;
  if (source.kind === 'Gateway') keys.push(`Gateway ${point.gateway} listener ${point.listener.name}`);
  else {
    keys.push(`ListenerSet ${source.namespace}/${source.name}`);
    keys.push(`ListenerSet ${source.namespace}/${source.name} listener ${point.listener.name}`);
  }
  if (point.route) {
    const route = `HTTPRoute ${point.route.namespace}/${point.route.name}`;
    keys.push(route);
    if (point.route.rule) keys.push(`${route} rule ${point.route.rule}`);
  }
  if (point.backend) keys.push(...backendTargetKeys(point.backend));
  return keys;
}

export interface EffectivePolicy {
  frontend: EffectiveSection;
  /** PostRouting traffic policy (phase unset or PostRouting): runs once a route is chosen. */
  traffic: EffectiveSection;
  /** PreRouting traffic policy (Gateway and ListenerSet targets): runs before route selection. */
  preRouting: EffectiveSection;
  backend: EffectiveSection;
}

function isPreRouting(attachment: Attachment): boolean {
  return attachment.section === 'traffic' && attachment.fields.phase === 'PreRouting';
}

/**
 * The merged policy at an attachment point. Frontend policy comes from the Gateway (and its
 * port) only; traffic from the Gateway down to the route rule, PreRouting and PostRouting
 * policies merged apart (they run at different times, so neither overrides the other); backend
 * from the Gateway down to the backend and its section, inline policies last — at a point without
 * a backend, what reaches the GwModels served there.
 */
export function effectivePolicy(index: PolicyIndex, point: AttachmentPoint): EffectivePolicy {
  const keys = targetKeys(point);
  const attachments = keys.flatMap((key) => index.byTarget.get(key) ?? []);
  const frontendKeys = new Set(keys.slice(0, 2));
  return {
    frontend: mergeSection(
      attachments.filter((a) => frontendKeys.has(a.target)),
      'frontend',
    ),
    traffic: mergeSection(
      attachments.filter((a) => !isPreRouting(a)),
      'traffic',
    ),
    preRouting: mergeSection(attachments.filter(isPreRouting), 'traffic'),
    backend: mergeSection(attachments, 'backend'),
  };
}
