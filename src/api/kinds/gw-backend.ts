// GwBackend (spec document 1, "GwBackend"): where traffic goes, and how to reach it.
import { array, named, object } from '../schema/build.ts';
import { exactlyOneOf } from '../schema/rules.ts';
import type { Infer } from '../schema/schema.ts';
import { BackendFull } from '../types/backend-policies.ts';
import { A2ABackend, CloudoneBackend, DynamicForwardProxyBackend, StaticBackend } from '../types/backends.ts';
import { AIBackend } from '../types/llm-provider.ts';
import { MCPBackend } from '../types/mcp.ts';
import { Condition } from './gateway-api/shared.ts';
import { defineKind } from './kind.ts';

export const GW_GROUP = 'gw.dev';
export const GW_VERSION = 'v1alpha1';

const BACKEND_KINDS = ['ai', 'static', 'dynamicForwardProxy', 'mcp', 'aws', 'a2a'] as const;

export const GwBackendSpec = named(
  {
    name: 'GwBackendSpec',
    description:
      'What the backend is: exactly one backend kind (ai, static, dynamicForwardProxy, mcp, aws, a2a), plus the policies applied to traffic sent to it.',
    source: '1',
  },
  object(
    {
      ai: AIBackend,
      static: StaticBackend,
      dynamicForwardProxy: DynamicForwardProxyBackend,
      mcp: MCPBackend,
      aws: CloudoneBackend,
      a2a: A2ABackend,
      policies: BackendFull,
    },
    {
      rules: [
        exactlyOneOf(BACKEND_KINDS),
        {
          rule: '!has(self.policies) || !has(self.policies.ai) || has(self.ai)',
          message: 'policies.ai applies only to ai backends',
          fieldPath: '.policies.ai',
          reason: 'FieldValueForbidden',
        },
        {
          rule: '!has(self.policies) || !has(self.policies.mcp) || has(self.mcp)',
          message: 'policies.mcp applies only to mcp backends',
          fieldPath: '.policies.mcp',
          reason: 'FieldValueForbidden',
        },
      ],
    },
  ),
);
export type GwBackendSpec = Infer<typeof GwBackendSpec>;

export const GwBackendStatus = named(
  { name: 'GwBackendStatus', description: 'State of the backend as the controller last observed it.', source: '1' },
  object({
    conditions: array(Condition, {
      maxItems: 8,
      listType: 'map',
      listMapKeys: ['type'],
      description: 'Latest observations of the backend: Accepted says whether gw can serve it, and why not.',
    }),
  }),
);
export type GwBackendStatus = Infer<typeof GwBackendStatus>;

export const GwBackendKind = defineKind({
  group: GW_GROUP,
  version: GW_VERSION,
  kind: 'GwBackend',
  plural: 'gwbackends',
  namespaced: true,
  shortNames: ['gwbe'],
  categories: ['gw'],
  crd: true,
  description:
    'A destination for gw traffic: LLM providers, MCP servers, A2A agents, static or dynamic hosts, or a cloud agent runtime.',
  fields: { spec: { requiredField: GwBackendSpec }, status: GwBackendStatus },
  printerColumns: [
    {
      name: 'Accepted',
      type: 'string',
      jsonPath: ".status.conditions[?(@.type=='Accepted')].status",
      description: 'Whether the backend was accepted',
    },
    { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' },
  ],
});
