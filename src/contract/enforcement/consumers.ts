// Which place of the registry each part of a data-plane configuration is checked at: a listener's
// frontend and PreRouting policies, a rule's traffic policy (at the place of each kind of backend
// it serves), a backendRef's policy (by the kind of backend), an AI provider's or MCP target's own
// policy fields, the GwModels' backend policy, and the specs of backends and models. The data plane
// (fail closed, src/dataplane/config/compile.ts) and the controller (conditions in statuses,
// src/controller/refusals.ts) both ask here, so they never disagree.
import { isDeepStrictEqual } from 'node:util';
import type { BackendObjectConfig, BackendPolicyConfig, DataPlaneConfig, RuleConfig } from '../dataplane-config.ts';
import type { PlaceName } from './places.ts';

/** The backend kinds whose policies and traffic are checked at places of their own. */
export type ServedKind = 'http' | 'dynamic' | 'aws' | 'ai' | 'mcp' | 'models';

/**
 * The served kind of a backend object. An a2a agent is forwarded to as a static backend is, so its
 * policies check as http; unserved kinds (aws) check as http too: their spec refuses them.
 */
export function servedKindOf(object: BackendObjectConfig | undefined): ServedKind {
  if (object?.kind !== 'GwBackend') return 'http';
  const spec = object.spec;
  return spec.ai ? 'ai' : spec.mcp ? 'mcp' : spec.dynamicForwardProxy ? 'dynamic' : spec.aws ? 'aws' : 'http';
}

const TRAFFIC_PLACES: Record<ServedKind, PlaceName> = {
  http: 'traffic',
  dynamic: 'traffic',
  aws: 'traffic:aws',
  ai: 'traffic:ai',
  mcp: 'traffic:mcp',
  models: 'traffic:models',
};

const BACKEND_PLACES: Record<Exclude<ServedKind, 'models'>, PlaceName> = {
  http: 'backend:http',
  dynamic: 'backend:dynamic',
  aws: 'backend:aws',
  ai: 'backend:ai',
  mcp: 'backend:mcp',
};

/** The places a rule's traffic policy is checked at: one per kind of backend the rule serves. */
export function trafficPlaces(rule: RuleConfig, backends: DataPlaneConfig['backends']): PlaceName[] {
  if (rule.models) return [TRAFFIC_PLACES.models];
  const kinds = new Set(rule.backendRefs.map((ref) => servedKindOf(backends[ref.backend])));
  if (kinds.size === 0) kinds.add('http');
  return [...kinds].map((kind) => TRAFFIC_PLACES[kind]);
}

/** The place a backendRef's effective backend policy is checked at. */
export function backendPlace(object: BackendObjectConfig | undefined): PlaceName {
  return BACKEND_PLACES[servedKindOf(object) as Exclude<ServedKind, 'models'>];
}

/** The place of a section (an AI provider, an MCP target) of a backend, or undefined for other kinds. */
export function sectionPlace(object: BackendObjectConfig | undefined): PlaceName | undefined {
  const kind = servedKindOf(object);
  return kind === 'ai' ? 'backend:ai-provider' : kind === 'mcp' ? 'backend:mcp-target' : undefined;
}

/**
 * The fields a section sets itself — its inline policies, GwPolicies naming it by sectionName —
 * rather than inherits from the whole backend's policy: the merge is per top-level field, so an
 * inherited field is the backend's own value.
 */
export function sectionOwnFields(section: BackendPolicyConfig, whole: BackendPolicyConfig): BackendPolicyConfig {
  const own: Record<string, unknown> = {};
  for (const [field, value] of Object.entries(section)) {
    if (!isDeepStrictEqual(value, (whole as Record<string, unknown>)[field])) own[field] = value;
  }
  return own as BackendPolicyConfig;
}
