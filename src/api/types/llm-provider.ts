// Spec document 1 "AIBackend" and document 2 "AI settings": the LLM providers an `ai` GwBackend
// sends to, one provider or priority groups of named providers. Families keep the spec's neutral
// names; the vendor of each (alpha OpenAI, gamma Anthropic, zeta Amazon Bedrock...) is in ../vendors.ts.
import { array, enumOf, named, object, refine, required, string } from '../schema/build.ts';
import { exactlyOneOf, onlyWhen, requiredWhen, uniqueKey } from '../schema/rules.ts';
import type { Infer, ValidationRule } from '../schema/schema.ts';
import { familyLabel } from '../vendors.ts';
import { CloudoneGuardrailConfig } from './ai.ts';
import { BackendWithAI } from './backend-policies.ts';
import { LongString, PortNumber, SectionName, ShortString, TinyString } from './common.ts';
import { LocalBackendObjectReference } from './references.ts';

const modelOverride = refine(ShortString, {
  description: "Model sent to the provider, replacing the request's model; unset keeps the request's model.",
});

const scoreOrBlock = object({
  mode: required(
    enumOf(['Score', 'Block'], {
      description: 'Score records the moderation result; Block also rejects flagged content.',
    }),
  ),
});

export const AlphaInlineModeration = named(
  {
    name: 'AlphaInlineModeration',
    description: 'OpenAI moderation run on the traffic of this alpha (OpenAI) provider.',
    source: '2',
  },
  object({
    model: refine(ShortString, {
      description: "Moderation model; unset uses the provider's default moderation model.",
    }),
    policy: object(
      {
        input: refine(scoreOrBlock, { description: 'Moderation of the request.' }),
        output: refine(scoreOrBlock, { description: 'Moderation of the response.' }),
      },
      { description: 'What moderation does on each side.' },
    ),
  }),
);
export type AlphaInlineModeration = Infer<typeof AlphaInlineModeration>;

export const AlphaConfig = named(
  { name: 'AlphaConfig', description: 'Settings for alpha: OpenAI and OpenAI-compatible providers.', source: '2' },
  object({ model: modelOverride, moderation: AlphaInlineModeration }),
);
export type AlphaConfig = Infer<typeof AlphaConfig>;

export const BetaAlphaConfig = named(
  { name: 'BetaAlphaConfig', description: 'Settings for betaalpha: Azure OpenAI deployments.', source: '2' },
  object(
    {
      endpoint: required(
        refine(ShortString, { description: 'Resource endpoint host; a scheme, if given, is stripped.' }),
      ),
      deploymentName: refine(ShortString, { description: 'Deployment to call; required unless apiVersion is v1.' }),
      apiVersion: refine(TinyString, { default: 'v1', description: 'API version of the service.' }),
    },
    {
      rules: [
        requiredWhen('deploymentName', "has(self.apiVersion) && self.apiVersion != 'v1'", 'unless apiVersion is v1'),
      ],
    },
  ),
);
export type BetaAlphaConfig = Infer<typeof BetaAlphaConfig>;

// Shared by BetaConfig and BetaSettings.
const betaFields = {
  resourceName: required(refine(ShortString, { description: 'Name of the provider resource.' })),
  resourceType: required(
    enumOf(['Alpha', 'Omega'], { description: 'Kind of provider resource; selects the host suffix.' }),
  ),
  apiVersion: refine(TinyString, { default: 'v1', description: 'API version of the service.' }),
  projectName: refine(ShortString, {
    description: 'Project within an Omega resource; builds a project-scoped path. Required for Omega.',
  }),
};
const betaRules: ValidationRule[] = [
  requiredWhen('projectName', "self.resourceType == 'Omega'", 'when resourceType is Omega'),
];

export const BetaConfig = named(
  { name: 'BetaConfig', description: 'Settings for beta: Azure AI resources.', source: '2' },
  object({ ...betaFields, model: modelOverride }, { rules: betaRules }),
);
export type BetaConfig = Infer<typeof BetaConfig>;

export const BetaSettings = named(
  {
    name: 'BetaSettings',
    description: 'Azure AI (beta) resource settings of a GwModel with provider Beta.',
    source: '2',
    notes: 'The spec marks resourceType (R) after "resourceName, resourceType"; gw requires both, as BetaConfig does.',
  },
  object(betaFields, { rules: betaRules }),
);
export type BetaSettings = Infer<typeof BetaSettings>;

export const GammaConfig = named(
  { name: 'GammaConfig', description: 'Settings for gamma: Anthropic (the Messages API).', source: '2' },
  object({ model: modelOverride }),
);
export type GammaConfig = Infer<typeof GammaConfig>;

export const DeltaConfig = named(
  { name: 'DeltaConfig', description: 'Settings for delta: Google Gemini API.', source: '2' },
  object({ model: modelOverride }),
);
export type DeltaConfig = Infer<typeof DeltaConfig>;

const epsilonFields = {
  projectId: required(refine(TinyString, { description: 'Cloud project that hosts the models.' })),
  region: refine(TinyString, {
    default: 'global',
    description: 'Region serving the models; global, us and eu are multi-region values.',
  }),
};
const epsilonNotes =
  "Fields not shown in the spec; gw follows agentgateway's settings for this provider family: projectId " +
  '(required), region (default global).';

export const EpsilonConfig = named(
  {
    name: 'EpsilonConfig',
    description: 'Settings for epsilon: Google Vertex AI.',
    source: 'gw',
    notes: `${epsilonNotes} model overrides the request's model.`,
  },
  object({ ...epsilonFields, model: modelOverride }),
);
export type EpsilonConfig = Infer<typeof EpsilonConfig>;

export const EpsilonSettings = named(
  {
    name: 'EpsilonSettings',
    description: 'Vertex AI (epsilon) project settings of a GwModel with provider Epsilon.',
    source: 'gw',
    notes: epsilonNotes,
  },
  object(epsilonFields),
);
export type EpsilonSettings = Infer<typeof EpsilonSettings>;

const zetaFields = {
  region: string({
    minLength: 1,
    maxLength: 63,
    pattern: '^[a-z0-9-]+$',
    default: 'us-east-1',
    description: 'Region of the provider.',
  }),
  guardrail: refine(CloudoneGuardrailConfig, { description: 'Guardrail applied by the provider itself.' }),
};

export const ZetaConfig = named(
  { name: 'ZetaConfig', description: 'Settings for zeta: Amazon Bedrock.', source: '2' },
  object({ ...zetaFields, model: modelOverride }),
);
export type ZetaConfig = Infer<typeof ZetaConfig>;

export const ZetaSettings = named(
  { name: 'ZetaSettings', description: 'Amazon Bedrock (zeta) settings of a GwModel with provider Zeta.', source: '2' },
  object(zetaFields),
);
export type ZetaSettings = Infer<typeof ZetaSettings>;

export const ProviderFormat = named(
  {
    name: 'ProviderFormat',
    description:
      'An API format a custom provider speaks: Completions (OpenAI Chat Completions), Messages (Anthropic), Responses (OpenAI), Embeddings, GammaTokenCount (Anthropic count_tokens), Realtime or Rerank.',
    source: '2',
  },
  enumOf(['Completions', 'Messages', 'Responses', 'Embeddings', 'GammaTokenCount', 'Realtime', 'Rerank']),
);
export type ProviderFormat = Infer<typeof ProviderFormat>;

export const ProviderFormatConfig = named(
  { name: 'ProviderFormatConfig', description: 'An API format a custom provider speaks, and its path.', source: '2' },
  object({
    type: required(ProviderFormat),
    path: refine(LongString, { description: "Request path for this format; unset uses the format's usual path." }),
  }),
);
export type ProviderFormatConfig = Infer<typeof ProviderFormatConfig>;

const customFields = {
  backendRef: refine(LocalBackendObjectReference, {
    description:
      'Service or InferencePool in the same namespace serving the API. When unset, host and port of the provider are required.',
  }),
  formats: required(
    array(ProviderFormatConfig, { minItems: 1, maxItems: 6, description: 'API formats the server speaks.' }),
  ),
};
const customRules: ValidationRule[] = [
  {
    rule: "!has(self.backendRef) || !has(self.backendRef.kind) || self.backendRef.kind in ['Service', 'InferencePool']",
    message: 'backendRef may refer only to a Service or an InferencePool',
    fieldPath: '.backendRef',
  },
  // Two entries for one format would make the format's path ambiguous.
  uniqueKey('formats', 'type'),
];

export const CustomProvider = named(
  {
    name: 'CustomProvider',
    description: 'A provider gw has no built-in family for, described by the API formats it speaks and their paths.',
    source: '2',
  },
  object({ ...customFields, model: modelOverride }, { rules: customRules }),
);
export type CustomProvider = Infer<typeof CustomProvider>;

export const CustomProviderSettings = named(
  { name: 'CustomProviderSettings', description: 'Formats and paths of a GwModel with provider Custom.', source: '2' },
  object(customFields, { rules: customRules }),
);
export type CustomProviderSettings = Infer<typeof CustomProviderSettings>;

// LLMProvider's fields and rules; NamedLLMProvider carries them too.
const llmProviderFields = {
  alpha: AlphaConfig,
  betaalpha: BetaAlphaConfig,
  beta: BetaConfig,
  gamma: GammaConfig,
  delta: DeltaConfig,
  epsilon: EpsilonConfig,
  zeta: ZetaConfig,
  custom: CustomProvider,
  host: refine(ShortString, { description: "Provider host, replacing the family's default host." }),
  port: refine(PortNumber, { description: "Provider port, replacing the family's default port." }),
  path: refine(LongString, { description: "Request path, replacing the family's default path." }),
  pathPrefix: refine(LongString, {
    description: "Prefix put before the family's request paths; alpha (OpenAI) and gamma (Anthropic) providers only.",
  }),
};
const customNeedsAddress = 'has(self.custom) && !has(self.custom.backendRef)';
const llmProviderRules: ValidationRule[] = [
  exactlyOneOf(['alpha', 'betaalpha', 'beta', 'gamma', 'delta', 'epsilon', 'zeta', 'custom'], familyLabel),
  onlyWhen('pathPrefix', 'has(self.alpha) || has(self.gamma)', 'for alpha and gamma providers'),
  requiredWhen('host', customNeedsAddress, 'when custom has no backendRef'),
  requiredWhen('port', customNeedsAddress, 'when custom has no backendRef'),
];

export const LLMProvider = named(
  {
    name: 'LLMProvider',
    description:
      'One LLM provider: exactly one family (alpha for OpenAI, gamma for Anthropic, ...) and optional address overrides.',
    source: '2',
  },
  object(llmProviderFields, { rules: llmProviderRules }),
);
export type LLMProvider = Infer<typeof LLMProvider>;

export const NamedLLMProvider = named(
  {
    name: 'NamedLLMProvider',
    description: 'An LLM provider of a priority group, with a name and policies of its own.',
    source: '2',
  },
  object(
    {
      name: required(
        refine(SectionName, {
          description: 'Provider name; a policy targets this provider by targetRefs[].sectionName.',
        }),
      ),
      policies: refine(BackendWithAI, {
        description: "Policies for this provider only; they win over the GwBackend's and any GwPolicy's.",
      }),
      ...llmProviderFields,
    },
    { rules: llmProviderRules },
  ),
);
export type NamedLLMProvider = Infer<typeof NamedLLMProvider>;

export const PriorityGroup = named(
  {
    name: 'PriorityGroup',
    description:
      'Providers of equal priority, picked among by health; gw uses a later group only when every provider of the earlier ones is evicted or already tried.',
    source: '2',
  },
  object({
    providers: required(
      array(NamedLLMProvider, {
        minItems: 1,
        maxItems: 16,
        description: 'Providers treated equally, weighted automatically by health.',
      }),
    ),
  }),
);
export type PriorityGroup = Infer<typeof PriorityGroup>;

export const AIBackend = named(
  {
    name: 'AIBackend',
    description: 'An LLM backend: one provider, or priority groups of named providers that gw fails over between.',
    source: '1',
  },
  object(
    {
      provider: refine(LLMProvider, { description: 'The single provider.' }),
      groups: array(PriorityGroup, {
        minItems: 1,
        maxItems: 8,
        description: 'Provider groups in priority order; a later group is used only when earlier ones are unhealthy.',
        rules: [
          {
            // A name must occur in exactly one group, and once within it.
            rule:
              'self.all(g, g.providers.all(p, self.exists_one(h, h.providers.exists(q, q.name == p.name)) && ' +
              'g.providers.exists_one(q, q.name == p.name)))',
            message: 'provider names must be unique across all groups',
          },
        ],
      }),
    },
    { rules: [exactlyOneOf(['provider', 'groups'])] },
  ),
);
export type AIBackend = Infer<typeof AIBackend>;
