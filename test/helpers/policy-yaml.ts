// YAML of the resources traffic-policy tests put in front of Gateway ai (test/helpers/objects.ts
// gatewayYaml): static backends, HTTPRoutes serving a path prefix, GwPolicies. Each document
// ends with ---, so the builders concatenate.

/** `text` with every line indented by `spaces`; trailing blank lines dropped. */
export function indentYaml(text: string, spaces: number): string {
  const pad = ' '.repeat(spaces);
  return text
    .trimEnd()
    .split('\n')
    .map((line) => `${pad}${line}`)
    .join('\n');
}

/** GwBackend `name`: a static backend at 127.0.0.1:`port`, with spec.policies `policies` (a YAML flow mapping) when given. */
export function staticBackendYaml(name: string, port: number, policies?: string): string {
  return `apiVersion: gw.dev/v1alpha1
kind: GwBackend
metadata: {name: ${name}}
spec:
  static: {host: 127.0.0.1, port: ${port}}
${policies ? `  policies: ${policies}\n` : ''}---
`;
}

/** HTTPRoute `name` on Gateway ai serving PathPrefix `prefix` (default /<name>) from GwBackend `backend` (default web). */
export function prefixRouteYaml(name: string, options: { prefix?: string; backend?: string } = {}): string {
  return `apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: ${name}}
spec:
  parentRefs: [{name: ai}]
  rules: [{matches: [{path: {type: PathPrefix, value: ${options.prefix ?? `/${name}`}}}], backendRefs: [{group: gw.dev, kind: GwBackend, name: ${options.backend ?? 'web'}}]}]
---
`;
}

/** What a GwPolicy targets: an HTTPRoute by name (a string), or any target reference. */
export type PolicyTarget = string | TargetRef;

export interface TargetRef {
  kind: 'HTTPRoute' | 'Gateway';
  name: string;
  sectionName?: string;
}

/** Gateway ai itself, as a policy target (every route, and PreRouting policies). */
export const GATEWAY_AI: TargetRef = { kind: 'Gateway', name: 'ai' };

/**
 * GwPolicy `name` on `target` with one section (traffic, frontend...) set to `value`: YAML text
 * (block or flow, written unindented) or a value written as JSON (which YAML reads as flow style).
 */
export function gwPolicyYaml(name: string, target: PolicyTarget, section: string, value: string | object): string {
  const ref: TargetRef = typeof target === 'string' ? { kind: 'HTTPRoute', name: target } : target;
  const sectionName = ref.sectionName ? `, sectionName: ${ref.sectionName}` : '';
  const yaml = typeof value === 'string' ? `\n${indentYaml(value, 4)}` : ` ${JSON.stringify(value)}`;
  return `apiVersion: gw.dev/v1alpha1
kind: GwPolicy
metadata: {name: ${name}}
spec:
  targetRefs: [{group: gateway.networking.k8s.io, kind: ${ref.kind}, name: ${ref.name}${sectionName}}]
  ${section}:${yaml}
---
`;
}

/** GwPolicy `name` on `target` with the traffic section `traffic` (as gwPolicyYaml takes it). */
export function trafficPolicyYaml(name: string, target: PolicyTarget, traffic: string | object): string {
  return gwPolicyYaml(name, target, 'traffic', traffic);
}

/** A rule of HTTPRoute web (rulesRouteYaml), with the GwPolicy that targets it. */
export interface PolicyRule {
  /** The rule's name and the path prefix it serves. */
  name: string;
  /** The traffic section of the rule's GwPolicy (as trafficPolicyYaml takes it); no policy when undefined. */
  traffic?: string;
  /** GwBackend the rule sends to (default web). */
  backend?: string;
  /** The rule's backendRef as a YAML flow mapping, instead of a GwBackend. */
  backendRef?: string;
  /** More YAML of the rule (filters, timeouts), indented for a rule entry's fields. */
  extra?: string;
}

/** HTTPRoute web on Gateway ai with a rule per entry (serving /<name>), and a GwPolicy per rule that has traffic. */
export function rulesRouteYaml(rules: readonly PolicyRule[]): string {
  const routeRules = rules
    .map(
      ({ name, backend, backendRef, extra }) => `    - name: ${name}
      matches: [{path: {type: PathPrefix, value: /${name}}}]
      backendRefs: [${backendRef ?? `{group: gw.dev, kind: GwBackend, name: ${backend ?? 'web'}}`}]
${extra ?? ''}`,
    )
    .join('');
  const policies = rules
    .filter((rule) => rule.traffic !== undefined)
    .map(({ name, traffic }) =>
      trafficPolicyYaml(name, { kind: 'HTTPRoute', name: 'web', sectionName: name }, traffic as string),
    )
    .join('');
  return `apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: web}
spec:
  parentRefs: [{name: ai}]
  rules:
${routeRules}---
${policies}`;
}
