// Spec document 1 "GwModel" and document 2 "Model resource types": concrete models served by a
// provider and virtual models that route among other GwModels.
import { array, enumOf, integer, named, object, refine, required, string } from '../schema/build.ts';
import { exactlyOneOf } from '../schema/rules.ts';
import type { Infer } from '../schema/schema.ts';
import { MODEL_PROVIDER_IDS, modelProviderLabel } from '../vendors.ts';
import { AIPromptGuard, FieldTransformation } from './ai.ts';
import { ModelBackendAuth } from './backend-auth.ts';
import { BackendTLS, BackendTunnel, Health } from './backend-connection.ts';
import { CELExpression, LongString, ObjectName } from './common.ts';
import { Authorization } from './inbound-auth.ts';
import { HeaderModifiers } from './traffic.ts';

export const ModelProvider = named(
  {
    name: 'ModelProvider',
    description: `Provider serving a concrete model: ${MODEL_PROVIDER_IDS.map(modelProviderLabel).join(', ')} (an endpoint described by custom).`,
    source: '2',
  },
  enumOf(MODEL_PROVIDER_IDS),
);
export type ModelProvider = Infer<typeof ModelProvider>;

/** Exact name, `prefix*`, `*suffix` or `*`: at most one `*`, and only at an end. */
export const MODEL_MATCH_PATTERN = '^([*]|[*]?[^*]+|[^*]+[*])$';

export const ModelMatch = named(
  {
    name: 'ModelMatch',
    description: 'Which requested model names this GwModel serves.',
    source: '1',
    notes:
      'The spec shows only match.model; gw requires it when match is present (an empty match matches nothing new).',
  },
  object({
    model: required(
      // LongString's bounds plus the wildcard shape.
      string({
        minLength: 1,
        maxLength: 1024,
        pattern: MODEL_MATCH_PATTERN,
        description:
          'Model name clients request: an exact name, a suffix wildcard such as gpt-*, a prefix wildcard such as *-latest, or * for any model.',
      }),
    ),
  }),
);
export type ModelMatch = Infer<typeof ModelMatch>;

export const ModelVisibility = named(
  {
    name: 'ModelVisibility',
    description:
      'Public models take client requests directly and are listed by model discovery; Internal ones are reached only through virtual models. Default Public.',
    source: '1',
    notes:
      'Public models take direct client requests and are listed by model discovery; Internal ones are reachable only through virtual models.',
  },
  enumOf(['Public', 'Internal'], { default: 'Public' }),
);
export type ModelVisibility = Infer<typeof ModelVisibility>;

export const ModelPolicies = named(
  {
    name: 'ModelPolicies',
    description:
      'Policies of a concrete model: request transformations, guards, authorization, credentials and connection settings.',
    source: '2',
  },
  object({
    transformations: array(FieldTransformation, {
      minItems: 1,
      maxItems: 64,
      description: 'Computed request body fields.',
    }),
    finalTransformations: array(FieldTransformation, {
      minItems: 1,
      maxItems: 64,
      description: "Computed fields applied after conversion to the provider's format.",
    }),
    authorization: Authorization,
    auth: refine(ModelBackendAuth, { description: 'Credentials sent to the provider.' }),
    health: Health,
    tls: BackendTLS,
    tunnel: BackendTunnel,
    headers: refine(HeaderModifiers, { description: 'Request and response header changes.' }),
    promptGuard: AIPromptGuard,
  }),
);
export type ModelPolicies = Infer<typeof ModelPolicies>;

// A same-namespace GwModel, by name.
const modelRef = object({ name: required(ObjectName) }, { description: 'A GwModel in the same namespace.' });

const modelTargetFields = {
  modelRef: required(modelRef),
  model: refine(LongString, {
    description:
      'Concrete model name sent to the referenced GwModel. Needed when that GwModel matches by wildcard (checked by the controller, not at admission).',
  }),
};

export const ModelTargetReference = named(
  {
    name: 'ModelTargetReference',
    description: 'A GwModel a virtual model routes to, and the model name sent to it.',
    source: '2',
  },
  object(modelTargetFields),
);
export type ModelTargetReference = Infer<typeof ModelTargetReference>;

export const WeightedModelTarget = named(
  {
    name: 'WeightedModelTarget',
    description: 'A model that receives a share of requests proportional to its weight.',
    source: 'gw',
    notes:
      "Not shown in the spec; gw follows agentgateway's weighted target: a model target plus weight (1-1000000, default 1).",
  },
  object({
    ...modelTargetFields,
    weight: integer({
      format: 'int32',
      minimum: 1,
      maximum: 1000000,
      default: 1,
      description: "Share of requests relative to the other targets' weights.",
    }),
  }),
);
export type WeightedModelTarget = Infer<typeof WeightedModelTarget>;

export const WeightedModelRouting = named(
  {
    name: 'WeightedModelRouting',
    description: 'Splits requests among target models in proportion to their weights.',
    source: 'gw',
    notes: 'Not shown in the spec; gw follows agentgateway: targets (required, 1-64), chosen in proportion to weight.',
  },
  object({
    targets: required(
      array(WeightedModelTarget, { minItems: 1, maxItems: 64, description: 'Models to split requests among.' }),
    ),
  }),
);
export type WeightedModelRouting = Infer<typeof WeightedModelRouting>;

export const ConditionalModelTarget = named(
  {
    name: 'ConditionalModelTarget',
    description: 'A model used when its CEL condition holds.',
    source: '2',
    notes:
      'model is required when the referenced GwModel matches by wildcard; that needs the other object, so the controller checks it, not admission.',
  },
  object({
    ...modelTargetFields,
    when: refine(CELExpression, {
      description: 'Condition selecting this target; unset only on the final target, which then catches the rest.',
    }),
  }),
);
export type ConditionalModelTarget = Infer<typeof ConditionalModelTarget>;

export const ConditionalModelRouting = named(
  {
    name: 'ConditionalModelRouting',
    description: 'Picks a target model by CEL conditions on the request, the first match winning.',
    source: '2',
  },
  object({
    targets: required(
      array(ConditionalModelTarget, {
        minItems: 1,
        maxItems: 64,
        description: 'Evaluated in order; the first target whose when holds is used.',
        rules: [
          {
            // No whenless target, or exactly one and it is the last.
            rule:
              'self.filter(t, !has(t.when)).size() == 0 || ' +
              '(self.filter(t, !has(t.when)).size() == 1 && !self.map(t, has(t.when))[self.size() - 1])',
            message: 'only the final target may omit when',
          },
        ],
      }),
    ),
  }),
);
export type ConditionalModelRouting = Infer<typeof ConditionalModelRouting>;

export const FailoverModelTarget = named(
  { name: 'FailoverModelTarget', description: 'A model tried in order of priority.', source: '2' },
  object({
    ...modelTargetFields,
    priority: required(
      integer({
        format: 'int32',
        minimum: 0,
        maximum: 1000000,
        description:
          'Lower values are preferred; the next priority is used only when every target at this one is degraded.',
      }),
    ),
  }),
);
export type FailoverModelTarget = Infer<typeof FailoverModelTarget>;

export const FailoverModelRouting = named(
  {
    name: 'FailoverModelRouting',
    description: 'Tries target models in order, moving to the next when one fails.',
    source: '2',
  },
  object({
    targets: required(
      array(FailoverModelTarget, { minItems: 1, maxItems: 64, description: 'Models to try, in order.' }),
    ),
  }),
);
export type FailoverModelRouting = Infer<typeof FailoverModelRouting>;

export const VirtualModel = named(
  {
    name: 'VirtualModel',
    description: 'Routes requests for this model to other GwModels: weighted, failover or conditional (exactly one).',
    source: '2',
  },
  object(
    {
      weighted: WeightedModelRouting,
      failover: FailoverModelRouting,
      conditional: ConditionalModelRouting,
    },
    { rules: [exactlyOneOf(['weighted', 'failover', 'conditional'])] },
  ),
);
export type VirtualModel = Infer<typeof VirtualModel>;
