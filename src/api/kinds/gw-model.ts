// GwModel (spec document 1, "GwModel and GwModelList"): a model clients can ask for by name,
// served by a provider or routed to other models.
import { array, named, object, refine, required, string } from '../schema/build.ts';
import { exactlyOneOf } from '../schema/rules.ts';
import type { Infer } from '../schema/schema.ts';
import { HTTP_URL_PATTERN } from '../types/common.ts';
import { BetaSettings, CustomProviderSettings, EpsilonSettings, ZetaSettings } from '../types/llm-provider.ts';
import { ModelMatch, ModelPolicies, ModelProvider, ModelVisibility, VirtualModel } from '../types/model.ts';
import { modelProviderLabel } from '../vendors.ts';
import { GATEWAY_API_GROUP, ParentReference, RouteParentStatus } from './gateway-api/shared.ts';
import { GW_GROUP, GW_VERSION } from './gw-backend.ts';
import { defineKind } from './kind.ts';

/** Provider-specific settings and the ModelProvider value each belongs to. */
const PROVIDER_SETTINGS = [
  ['beta', 'Beta'],
  ['epsilon', 'Epsilon'],
  ['zeta', 'Zeta'],
  ['custom', 'Custom'],
] as const;

export const GwModelSpec = named(
  {
    name: 'GwModelSpec',
    description:
      'The model clients ask for and how it is served: a provider (a concrete model) or a virtualModel routing among other GwModels.',
    source: '1',
  },
  object(
    {
      parentRefs: required(
        array(ParentReference, {
          minItems: 1,
          maxItems: 16,
          description: 'Where the model is offered: Gateways or ListenerSets (their listeners) or an HTTPRoute rule.',
          rules: [
            {
              rule: `self.all(p, p.group == '${GATEWAY_API_GROUP}' && p.kind in ['Gateway', 'ListenerSet', 'HTTPRoute'])`,
              message:
                'parentRefs may only reference a Gateway, ListenerSet or HTTPRoute (group gateway.networking.k8s.io)',
            },
          ],
        }),
      ),
      match: ModelMatch,
      visibility: refine(ModelVisibility, { default: 'Public' }),
      provider: ModelProvider,
      beta: BetaSettings,
      epsilon: EpsilonSettings,
      zeta: ZetaSettings,
      custom: CustomProviderSettings,
      baseURL: string({
        minLength: 1,
        maxLength: 1024,
        format: 'uri',
        pattern: HTTP_URL_PATTERN,
        description:
          'http(s)://host[:port][/path]: overrides the provider address and base path. Query, fragment and user info are not supported.',
      }),
      policies: ModelPolicies,
      virtualModel: VirtualModel,
    },
    {
      rules: [
        exactlyOneOf(['provider', 'virtualModel']),
        ...PROVIDER_SETTINGS.map(([field, provider]) => ({
          rule: `!has(self.${field}) || (has(self.provider) && self.provider == '${provider}')`,
          message: `${field} settings apply only to models with provider ${modelProviderLabel(provider)}`,
          fieldPath: `.${field}`,
          reason: 'FieldValueForbidden' as const,
        })),
        {
          rule: "!has(self.provider) || self.provider != 'Custom' || has(self.custom)",
          message: 'custom (its formats) is required when provider is Custom',
          fieldPath: '.custom',
          reason: 'FieldValueRequired',
        },
        {
          rule: "!has(self.provider) || self.provider != 'Beta' || has(self.beta)",
          message: `beta (its resourceType) is required when provider is ${modelProviderLabel('Beta')}`,
          fieldPath: '.beta',
          reason: 'FieldValueRequired',
        },
        {
          rule: "!has(self.provider) || self.provider != 'Epsilon' || has(self.epsilon)",
          message: `epsilon (its projectId) is required when provider is ${modelProviderLabel('Epsilon')}`,
          fieldPath: '.epsilon',
          reason: 'FieldValueRequired',
        },
        {
          // Vertex AI's, Bedrock's and Azure's request paths begin with the project, the model or the resource's API: no base a path could replace.
          rule: "!has(self.baseURL) || !has(self.provider) || !(self.provider in ['Beta', 'Epsilon', 'Zeta']) || self.baseURL.matches('^https?://[^/]+/?$')",
          message: `baseURL may not have a path with provider ${modelProviderLabel('Beta')}, ${modelProviderLabel('Epsilon')} or ${modelProviderLabel('Zeta')}: give scheme, host and port only`,
          fieldPath: '.baseURL',
          reason: 'FieldValueInvalid',
        },
        {
          rule: '!has(self.baseURL) || has(self.provider)',
          message: 'baseURL applies only to concrete models (with provider), not to virtual models',
          fieldPath: '.baseURL',
          reason: 'FieldValueForbidden',
        },
      ],
    },
  ),
);
export type GwModelSpec = Infer<typeof GwModelSpec>;

export const GwModelStatus = named(
  { name: 'GwModelStatus', description: 'State of the model on each parent it names.', source: '1' },
  object({ parents: array(RouteParentStatus, { maxItems: 16, description: 'One entry per parent the model names.' }) }),
);
export type GwModelStatus = Infer<typeof GwModelStatus>;

export const GwModelKind = defineKind({
  group: GW_GROUP,
  version: GW_VERSION,
  kind: 'GwModel',
  plural: 'gwmodels',
  namespaced: true,
  shortNames: ['gwmodel'],
  categories: ['gw'],
  crd: true,
  description:
    'A model offered to clients on Gateways, ListenerSets or HTTPRoute rules, served by a provider or a virtual model.',
  fields: { spec: { requiredField: GwModelSpec }, status: GwModelStatus },
  printerColumns: [
    {
      name: 'Model Match',
      type: 'string',
      jsonPath: '.spec.match.model',
      description: 'The model name clients ask for',
    },
    { name: 'Visibility', type: 'string', jsonPath: '.spec.visibility' },
    { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' },
  ],
});
