// Policy merge (spec document 1, "Merge rules"): the policies that apply at one attachment point
// are merged per field, not deeply; the most specific attachment wins a field; at the same level
// the older policy wins (then namespace/name), as Gateway API policy attachment resolves
// conflicts; a traffic policy with strategy.inheritance Override excludes more specific traffic
// policies. Every effective field keeps where it came from and what it overrode.

/**
 * Attachment levels, least specific first. Backend: a GwPolicy on a Service or GwBackend;
 * BackendSection: on a Service port or a GwBackend sub-backend; BackendInline: GwBackend.policies;
 * SubBackendInline: NamedLLMProvider.policies and McpTarget.policies (the backend value wins).
 */
const LEVELS = [
  'Gateway',
  'Listener',
  'Route',
  'RouteRule',
  'Backend',
  'BackendSection',
  'BackendInline',
  'SubBackendInline',
] as const;
export type Level = (typeof LEVELS)[number];

export type PolicySection = 'frontend' | 'traffic' | 'backend';

/** Where a field value came from. */
export interface Provenance {
  /** "GwPolicy ns/name", or the inline source: "GwBackend ns/name", "GwBackend ns/name provider p". */
  source: string;
  /** The source object's namespace: where the Secrets, ConfigMaps and endpoints its fields name resolve. */
  namespace: string;
  level: Level;
  /** What the source was attached to: "Gateway ns/name", "HTTPRoute ns/name rule chat", ... */
  target: string;
  /** For ordering ties: RFC 3339 creation time of the source object. */
  creationTimestamp: string;
}

export interface Attachment extends Provenance {
  section: PolicySection;
  /** The section's fields as the policy sets them. */
  fields: Record<string, unknown>;
  /** strategy.inheritance Override (traffic only). */
  override?: boolean;
}

export interface EffectiveField {
  value: unknown;
  from: Provenance;
  /** Less specific (or younger, at the same level) sources that set the field too. */
  overridden: Provenance[];
}

export type EffectiveSection = Record<string, EffectiveField>;

function provenanceOf(attachment: Attachment): Provenance {
  const { source, namespace, level, target, creationTimestamp } = attachment;
  return { source, namespace, level, target, creationTimestamp };
}

/**
 * Orders attachments from the one that wins a field to the one that loses it: most specific
 * level first; at the same level the oldest first, then by source name.
 */
export function byPrecedence(a: Attachment, b: Attachment): number {
  const level = LEVELS.indexOf(b.level) - LEVELS.indexOf(a.level);
  if (level !== 0) return level;
  if (a.creationTimestamp !== b.creationTimestamp) return a.creationTimestamp < b.creationTimestamp ? -1 : 1;
  return a.source < b.source ? -1 : a.source > b.source ? 1 : 0;
}

/** Drops traffic attachments more specific than the least specific Override among them. */
function applyOverride(attachments: Attachment[]): Attachment[] {
  let overrideLevel = -1;
  for (const attachment of attachments) {
    if (attachment.section !== 'traffic' || !attachment.override) continue;
    const level = LEVELS.indexOf(attachment.level);
    if (overrideLevel === -1 || level < overrideLevel) overrideLevel = level;
  }
  if (overrideLevel === -1) return attachments;
  return attachments.filter((a) => a.section !== 'traffic' || LEVELS.indexOf(a.level) <= overrideLevel);
}

/** Merges the attachments of one section at one attachment point. */
export function mergeSection(attachments: Attachment[], section: PolicySection): EffectiveSection {
  const ordered = applyOverride(attachments.filter((a) => a.section === section)).sort(byPrecedence);
  const effective: EffectiveSection = {};
  for (const attachment of ordered) {
    for (const [field, value] of Object.entries(attachment.fields)) {
      if (value === undefined) continue;
      const existing = effective[field];
      if (existing) existing.overridden.push(provenanceOf(attachment));
      else effective[field] = { value, from: provenanceOf(attachment), overridden: [] };
    }
  }
  return effective;
}

/**
 * The plain values of an effective section (what the data plane is given), typed as the section's
 * schema type: every field was admitted as that type, and the merge keeps fields whole.
 */
export function valuesOf<T extends object = Record<string, unknown>>(section: EffectiveSection): T {
  const values: Record<string, unknown> = {};
  for (const [field, effective] of Object.entries(section)) values[field] = effective.value;
  return values as T;
}

/**
 * For each field of an effective section whose source is in another namespace than `home` (the
 * namespace the data plane resolves the section's references in by default), that namespace: the
 * contract's FieldNamespaces. Without `home`, every field's. `phase` is not a field.
 */
export function namespacesOf(section: EffectiveSection, home?: string): Record<string, string> | undefined {
  let namespaces: Record<string, string> | undefined;
  for (const [field, effective] of Object.entries(section)) {
    if (field === 'phase' || effective.from.namespace === home) continue;
    namespaces ??= {};
    namespaces[field] = effective.from.namespace;
  }
  return namespaces;
}

/** For each field of an effective section, "source on target" (the contract's FieldSources); `phase` is not a field. */
export function sourcesOf(section: EffectiveSection): Record<string, string> {
  const sources: Record<string, string> = {};
  for (const [field, effective] of Object.entries(section)) {
    if (field !== 'phase') sources[field] = `${effective.from.source} on ${effective.from.target}`;
  }
  return sources;
}
