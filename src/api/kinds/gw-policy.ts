// GwPolicy (spec document 1, "GwPolicy"): frontend, traffic and backend settings attached to
// Gateways, listeners, ListenerSets, routes, rules, Services or GwBackends.
import { array, named, object } from '../schema/build.ts';
import { atLeastOneOf, exactlyOneOf } from '../schema/rules.ts';
import type { Infer, ValidationRule } from '../schema/schema.ts';
import { BackendFull } from '../types/backend-policies.ts';
import { Frontend } from '../types/frontend.ts';
import {
  LocalPolicyTargetReferenceWithSectionName,
  LocalPolicyTargetSelectorWithSectionName,
} from '../types/references.ts';
import { PolicyStrategy, Traffic } from '../types/traffic.ts';
import { GATEWAY_API_GROUP, PolicyStatus } from './gateway-api/shared.ts';
import { GW_GROUP, GW_VERSION } from './gw-backend.ts';
import { defineKind } from './kind.ts';

const TARGET_KINDS_RULE = `(t.group == '${GATEWAY_API_GROUP}' && t.kind in ['Gateway', 'ListenerSet', 'HTTPRoute']) || (t.group == '' && t.kind == 'Service') || (t.group == '${GW_GROUP}' && t.kind == 'GwBackend')`;

function targetListRules(list: string): ValidationRule[] {
  return [
    {
      rule: `self.all(t, ${TARGET_KINDS_RULE})`,
      message: `${list} may only reference a Gateway, ListenerSet or HTTPRoute (group ${GATEWAY_API_GROUP}), a Service (group "") or a GwBackend (group ${GW_GROUP})`,
    },
    {
      rule: 'self.all(t, t.kind == self[0].kind)',
      message: `all ${list} of one policy must be of the same kind`,
    },
    {
      rule: "self.all(t, t.kind != 'Service' || !has(t.sectionName) || (t.sectionName.matches('^[0-9]{1,5}$') && int(t.sectionName) >= 1 && int(t.sectionName) <= 65535))",
      message: 'the sectionName of a Service target must be a port number from 1 to 65535',
    },
  ];
}

/** Rules that relate the targets to the sections, stated once for each of the two target lists. */
function sectionRules(list: 'targetRefs' | 'targetSelectors'): ValidationRule[] {
  const targets = `self.${list}`;
  const guard = `!has(${targets}) || `;
  return [
    {
      rule: `${guard}!has(self.frontend) || ${targets}.all(t, t.kind == 'Gateway' && !has(t.sectionName))`,
      message: 'frontend can target only a Gateway (not a listener, ListenerSet, route or backend)',
      fieldPath: '.frontend',
      reason: 'FieldValueForbidden',
    },
    {
      rule: `${guard}!${targets}.exists(t, has(t.port)) || (has(self.frontend) && !has(self.traffic) && !has(self.backend))`,
      message: `port may be set in ${list} only on frontend policies (without traffic or backend)`,
      fieldPath: `.${list}`,
      reason: 'FieldValueForbidden',
    },
    {
      rule: `${guard}!has(self.traffic) || ${targets}.all(t, t.kind in ['Gateway', 'ListenerSet', 'HTTPRoute'])`,
      message: 'traffic can target only a Gateway, listener, ListenerSet, HTTPRoute or route rule',
      fieldPath: '.traffic',
      reason: 'FieldValueForbidden',
    },
    {
      rule: `${guard}!has(self.traffic) || !has(self.traffic.phase) || self.traffic.phase != 'PreRouting' || ${targets}.all(t, t.kind in ['Gateway', 'ListenerSet'])`,
      message: 'traffic.phase PreRouting can target only a Gateway or ListenerSet',
      fieldPath: '.traffic.phase',
      reason: 'FieldValueForbidden',
    },
    {
      rule: `${guard}!has(self.backend) || !has(self.backend.ai) || ${targets}.all(t, t.kind != 'Service')`,
      message: 'backend.ai may not target a Service',
      fieldPath: '.backend.ai',
      reason: 'FieldValueForbidden',
    },
    {
      rule: `${guard}!has(self.backend) || !has(self.backend.mcp) || ${targets}.all(t, t.kind != 'Service' && (t.kind != 'GwBackend' || !has(t.sectionName)))`,
      message: 'backend.mcp may not target a Service or a GwBackend section (an MCP target takes inline policies)',
      fieldPath: '.backend.mcp',
      reason: 'FieldValueForbidden',
    },
  ];
}

export const GwPolicySpec = named(
  {
    name: 'GwPolicySpec',
    description: 'What the policy attaches to and the traffic, frontend or backend settings it applies there.',
    source: '1',
  },
  object(
    {
      targetRefs: array(LocalPolicyTargetReferenceWithSectionName, {
        minItems: 1,
        maxItems: 16,
        description: 'The objects the policy attaches to.',
        rules: targetListRules('targetRefs'),
      }),
      targetSelectors: array(LocalPolicyTargetSelectorWithSectionName, {
        minItems: 1,
        maxItems: 16,
        description: 'Attach to every object of a kind whose labels match; re-evaluated as labels change.',
        rules: targetListRules('targetSelectors'),
      }),
      strategy: PolicyStrategy,
      frontend: Frontend,
      traffic: Traffic,
      backend: BackendFull,
    },
    {
      rules: [
        exactlyOneOf(['targetRefs', 'targetSelectors']),
        atLeastOneOf(['frontend', 'traffic', 'backend']),
        ...sectionRules('targetRefs'),
        ...sectionRules('targetSelectors'),
        {
          rule: '!has(self.strategy) || (has(self.traffic) && !has(self.frontend) && !has(self.backend))',
          message: 'strategy applies only to traffic policies (a policy with traffic and neither frontend nor backend)',
          fieldPath: '.strategy',
          reason: 'FieldValueForbidden',
        },
        {
          rule: '!has(self.traffic) || !has(self.traffic.jwtAuthentication) || !has(self.backend) || !has(self.backend.mcp) || !has(self.backend.mcp.authentication)',
          message:
            'traffic.jwtAuthentication and the deprecated backend.mcp.authentication may not be used in the same policy',
        },
      ],
    },
  ),
);
export type GwPolicySpec = Infer<typeof GwPolicySpec>;

export const GwPolicyKind = defineKind({
  group: GW_GROUP,
  version: GW_VERSION,
  kind: 'GwPolicy',
  plural: 'gwpolicies',
  namespaced: true,
  shortNames: ['gwpol'],
  categories: ['gw'],
  crd: true,
  description:
    'Frontend, traffic and backend settings attached to Gateways, listeners, routes, rules, Services or GwBackends.',
  fields: { spec: { requiredField: GwPolicySpec }, status: PolicyStatus },
  printerColumns: [
    {
      name: 'Accepted',
      type: 'string',
      jsonPath: ".status.ancestors[*].conditions[?(@.type=='Accepted')].status",
      description: 'Whether the policy was accepted',
    },
    {
      name: 'Attached',
      type: 'string',
      jsonPath: ".status.ancestors[*].conditions[?(@.type=='Attached')].status",
      description: 'Whether the policy is attached to its targets',
    },
    { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' },
  ],
});
