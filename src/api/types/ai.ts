// Spec document 2, "AI settings": the `ai` backend policy (BackendAI) and the prompt guards,
// request-body defaults/overrides/transformations and prompt caching it carries.

import { HTTPHeaderMatch } from '../kinds/gateway-api/http-route.ts';
import { array, boolean, enumOf, integer, map, named, object, refine, required, string } from '../schema/build.ts';
import { atLeastOneOf, exactlyOneOf } from '../schema/rules.ts';
import type { Infer } from '../schema/schema.ts';
import { AlphaModerationAuth, CloudtwoModelArmorAuth, ZetaGuardrailsAuth } from './backend-auth.ts';
import { BackendHTTP, BackendTCP, BackendTLS, BackendTunnel } from './backend-connection.ts';
import { CELExpression, JSONValue, LongString, ShortString } from './common.ts';
import { FailureMode } from './inbound-auth.ts';
import { BackendObjectReference } from './references.ts';

export const RouteType = named(
  {
    name: 'RouteType',
    description:
      'How requests on a path are handled: the API format gw reads them as (Completions, Messages, Responses, ...), or Passthrough and Detect to forward them as they are.',
    source: 'gw',
    notes:
      "Values not shown in the spec; gw follows agentgateway's route types with vendor names neutralised: " +
      'Completions (OpenAI Chat Completions), Messages (the Anthropic Messages API of gamma), Models (model listing), Passthrough ' +
      '(forwarded as is, no LLM processing), Detect (forwarded as is, LLM metadata extracted for telemetry and ' +
      'rate limits), Responses (OpenAI), GammaTokenCount (Anthropic count_tokens), Embeddings, Realtime (OpenAI), Rerank, ' +
      'GenerateContent (Gemini generateContent and streamGenerateContent, delta), DeltaCountTokens (Gemini countTokens). A path no route matches is Completions; a backend ' +
      'without routes gets each API at its well-known path (/v1/chat/completions, /v1/messages, /v1/responses, ' +
      '/v1/embeddings, /v1/models...; docs/decisions/0012-default-ai-routes.md).',
  },
  enumOf([
    'Completions',
    'Messages',
    'Models',
    'Passthrough',
    'Detect',
    'Responses',
    'GammaTokenCount',
    'Embeddings',
    'Realtime',
    'Rerank',
    'GenerateContent',
    'DeltaCountTokens',
  ]),
);
export type RouteType = Infer<typeof RouteType>;

export const Message = named(
  { name: 'Message', description: 'A chat message: its role and content.', source: '2' },
  object({
    role: required(string({ description: 'Message role as the provider names it, such as SYSTEM or USER.' })),
    content: required(string({ description: 'Message text.' })),
  }),
);
export type Message = Infer<typeof Message>;

export const AIPromptEnrichment = named(
  { name: 'AIPromptEnrichment', source: '2' },
  object(
    {
      prepend: array(Message, { description: "Messages inserted before the client's messages." }),
      append: array(Message, { description: "Messages added after the client's messages." }),
    },
    { description: 'Static messages added to every request.' },
  ),
);
export type AIPromptEnrichment = Infer<typeof AIPromptEnrichment>;

export const Action = named(
  {
    name: 'Action',
    description: 'What a regex guard does with a match: Mask replaces the matched text, Reject refuses the message.',
    source: '2',
  },
  enumOf(['Mask', 'Reject']),
);
export type Action = Infer<typeof Action>;

export const BuiltIn = named(
  {
    name: 'BuiltIn',
    description:
      'A built-in pattern: Ssn (US social security number), CreditCard, PhoneNumber, Email or CaSin (Canadian social insurance number).',
    source: '2',
  },
  enumOf(['Ssn', 'CreditCard', 'PhoneNumber', 'Email', 'CaSin']),
);
export type BuiltIn = Infer<typeof BuiltIn>;

export const RegexMatch = named(
  { name: 'RegexMatch', description: 'A named regular expression.', source: '2' },
  object({
    pattern: required(refine(LongString, { description: 'Regular expression matched against the content.' })),
    name: refine(ShortString, { description: 'Name of the match, reported when it fires.' }),
  }),
);
export type RegexMatch = Infer<typeof RegexMatch>;

export const Regex = named(
  {
    name: 'Regex',
    description:
      'Built-in or custom regular expressions matched against prompt or response text, masking or rejecting matches.',
    source: '2',
    notes:
      'The spec shows action, matches and builtins and leaves the remaining fields "not shown"; agentgateway\'s ' +
      'regex guard has no further fields, so gw has none. gw requires at least one of matches and builtins ' +
      '(a guard with nothing to look for is a mistake). Unset action means Mask at run time.',
  },
  object(
    {
      action: refine(Action, {
        description:
          'What a match does: Mask replaces the matched text, Reject refuses the message. Unset means Mask. Mask is not applied to streamed content.',
      }),
      matches: array(RegexMatch, { description: 'Custom patterns; used together with builtins.' }),
      builtins: array(BuiltIn, { description: 'Predefined detectors.', listType: 'set' }),
    },
    { rules: [atLeastOneOf(['matches', 'builtins'])] },
  ),
);
export type Regex = Infer<typeof Regex>;

export const Webhook = named(
  {
    name: 'Webhook',
    description: 'An HTTP service that reviews prompt or response text.',
    source: 'gw',
    notes:
      "Fields not shown in the spec; gw follows agentgateway's webhook guard: the guard service is named by a " +
      'required backendRef (no url), headers adds CEL-computed headers to the guard call, forwardHeaderMatches ' +
      'selects client headers to forward, failureMode decides what a guard failure does (unset = FailClosed).',
  },
  object({
    backendRef: required(BackendObjectReference),
    headers: map(CELExpression, {
      maxProperties: 64,
      description: 'Headers added to the guard request; values are CEL expressions.',
    }),
    forwardHeaderMatches: array(HTTPHeaderMatch, {
      maxItems: 16,
      description: 'Client request headers matching any entry are forwarded to the guard service.',
    }),
    failureMode: refine(FailureMode, {
      default: 'FailClosed',
      description: 'FailClosed (the default) rejects the request when the guard call fails; FailOpen lets it through.',
    }),
  }),
);
export type Webhook = Infer<typeof Webhook>;

export const CustomResponse = named(
  {
    name: 'CustomResponse',
    description: 'The answer a guard sends when it rejects: a message and an HTTP status code.',
    source: '2',
  },
  object({
    message: string({
      description:
        'Body returned on rejection. Unset: "The request was rejected due to inappropriate content" for request guards, "The response was rejected due to inappropriate content" for response guards.',
    }),
    statusCode: integer({
      format: 'int32',
      minimum: 200,
      maximum: 599,
      default: 403,
      description: 'HTTP status returned on rejection.',
    }),
  }),
);
export type CustomResponse = Infer<typeof CustomResponse>;

// The three guard services share one connection-policy shape; only the auth type differs.
const guardConnectionFields = {
  tcp: BackendTCP,
  tls: BackendTLS,
  http: BackendHTTP,
  tunnel: BackendTunnel,
};

export const AlphaModerationPolicies = named(
  {
    name: 'AlphaModerationPolicies',
    description: 'Connection and credential settings for calling the OpenAI moderation API.',
    source: '2',
  },
  object({ ...guardConnectionFields, auth: AlphaModerationAuth }),
);
export type AlphaModerationPolicies = Infer<typeof AlphaModerationPolicies>;

export const ZetaGuardrailsPolicies = named(
  {
    name: 'ZetaGuardrailsPolicies',
    description: 'Connection and credential settings for calling Amazon Bedrock Guardrails.',
    source: '2',
  },
  object({ ...guardConnectionFields, auth: ZetaGuardrailsAuth }),
);
export type ZetaGuardrailsPolicies = Infer<typeof ZetaGuardrailsPolicies>;

export const CloudtwoModelArmorPolicies = named(
  {
    name: 'CloudtwoModelArmorPolicies',
    description: 'Connection and credential settings for calling Google Cloud Model Armor.',
    source: '2',
  },
  object({ ...guardConnectionFields, auth: CloudtwoModelArmorAuth }),
);
export type CloudtwoModelArmorPolicies = Infer<typeof CloudtwoModelArmorPolicies>;

export const AlphaModeration = named(
  { name: 'AlphaModeration', description: 'The OpenAI moderation API (alpha) as a prompt guard.', source: '2' },
  object({
    model: string({ description: "Moderation model to use; unset uses the service's default moderation model." }),
    policies: refine(AlphaModerationPolicies, {
      description: 'Connection and authentication to the moderation service.',
    }),
  }),
);
export type AlphaModeration = Infer<typeof AlphaModeration>;

export const CloudoneGuardrailConfig = named(
  {
    name: 'CloudoneGuardrailConfig',
    description: 'An Amazon Bedrock guardrail, by identifier and version.',
    source: '2',
  },
  object({
    identifier: required(refine(ShortString, { description: 'Guardrail identifier.' })),
    version: required(refine(ShortString, { description: 'Guardrail version.' })),
  }),
);
export type CloudoneGuardrailConfig = Infer<typeof CloudoneGuardrailConfig>;

export const ZetaGuardrails = named(
  { name: 'ZetaGuardrails', description: 'Amazon Bedrock Guardrails (zeta) as a guard.', source: '2' },
  object({
    identifier: required(refine(ShortString, { description: 'Guardrail identifier.' })),
    version: required(refine(ShortString, { description: 'Guardrail version.' })),
    region: required(refine(ShortString, { description: 'Region the guardrail lives in.' })),
    policies: refine(ZetaGuardrailsPolicies, {
      description: 'Connection and authentication to the guardrail service.',
    }),
  }),
);
export type ZetaGuardrails = Infer<typeof ZetaGuardrails>;

export const CloudtwoModelArmor = named(
  { name: 'CloudtwoModelArmor', description: 'Google Cloud Model Armor (cloudtwo) as a guard.', source: '2' },
  object({
    templateId: required(refine(ShortString, { description: 'Model-armor template identifier.' })),
    projectId: required(refine(ShortString, { description: 'Project that owns the template.' })),
    location: refine(ShortString, { default: 'us-central1', description: 'Location of the template.' }),
    policies: refine(CloudtwoModelArmorPolicies, {
      description: 'Connection and authentication to the model-armor service.',
    }),
  }),
);
export type CloudtwoModelArmor = Infer<typeof CloudtwoModelArmor>;

const guardResponse = refine(CustomResponse, { description: 'What a rejection returns to the client.' });

export const PromptguardRequest = named(
  {
    name: 'PromptguardRequest',
    description: 'One guard applied to the request (the prompt) before it is sent.',
    source: '2',
  },
  object(
    {
      regex: Regex,
      webhook: Webhook,
      alphaModeration: AlphaModeration,
      zetaGuardrails: ZetaGuardrails,
      cloudtwoModelArmor: CloudtwoModelArmor,
      response: guardResponse,
    },
    { rules: [exactlyOneOf(['regex', 'webhook', 'alphaModeration', 'zetaGuardrails', 'cloudtwoModelArmor'])] },
  ),
);
export type PromptguardRequest = Infer<typeof PromptguardRequest>;

export const PromptguardResponse = named(
  {
    name: 'PromptguardResponse',
    description: 'One guard applied to the response before the client gets it.',
    source: '2',
  },
  object(
    {
      regex: Regex,
      webhook: Webhook,
      zetaGuardrails: ZetaGuardrails,
      cloudtwoModelArmor: CloudtwoModelArmor,
      response: guardResponse,
    },
    { rules: [exactlyOneOf(['regex', 'webhook', 'zetaGuardrails', 'cloudtwoModelArmor'])] },
  ),
);
export type PromptguardResponse = Infer<typeof PromptguardResponse>;

export const AIPromptGuard = named(
  {
    name: 'AIPromptGuard',
    description:
      'Guards that inspect prompts before they reach the provider and responses before they reach the client.',
    source: '2',
  },
  object({
    streaming: enumOf(['Enabled'], {
      description:
        'Enabled applies response guards to streamed responses; unset means disabled. Mask cannot change streamed content, but a guard can still reject.',
    }),
    request: array(PromptguardRequest, {
      minItems: 1,
      maxItems: 8,
      description: 'Guards run on the request, in order.',
    }),
    response: array(PromptguardResponse, {
      minItems: 1,
      maxItems: 8,
      description: 'Guards run on the response, in order.',
    }),
  }),
);
export type AIPromptGuard = Infer<typeof AIPromptGuard>;

export const FieldDefault = named(
  { name: 'FieldDefault', description: 'A request body field and the value it gets.', source: '2' },
  object({
    field: required(refine(ShortString, { description: 'Top-level key of the JSON request body.' })),
    value: required(refine(JSONValue, { description: 'Value to set; any JSON value.' })),
  }),
);
export type FieldDefault = Infer<typeof FieldDefault>;

export const FieldTransformation = named(
  {
    name: 'FieldTransformation',
    description: 'A request body field and the CEL expression that computes its value.',
    source: '2',
  },
  object({
    field: required(refine(ShortString, { description: 'Top-level key of the JSON request body.' })),
    expression: required(
      refine(CELExpression, { description: 'CEL over the current request body; its result overwrites the field.' }),
    ),
  }),
);
export type FieldTransformation = Infer<typeof FieldTransformation>;

export const PromptCachingConfig = named(
  {
    name: 'PromptCachingConfig',
    description:
      'Prompt-cache markers added to requests for providers that take them (Anthropic Messages; Amazon Bedrock Converse for Claude and Nova models).',
    source: '2',
    notes:
      'Markers go to Anthropic Messages bodies (gamma, Claude on Vertex and on Foundry) and to Bedrock Converse bodies (zeta) of Claude and Nova models. OpenAI and Gemini cache prompts automatically; no markers are needed, and gw sends none.',
  },
  object({
    cacheSystem: boolean({ default: true, description: 'Mark the system prompt as cacheable.' }),
    cacheMessages: boolean({ default: true, description: 'Mark conversation messages as cacheable.' }),
    cacheTools: boolean({ default: false, description: 'Mark tool definitions as cacheable.' }),
    minTokens: integer({ minimum: 0, default: 1024, description: 'Smallest prompt (in tokens) worth caching.' }),
    cacheMessageOffset: integer({
      minimum: 0,
      default: 0,
      description: 'Where the message cache point goes, counted back from the end; 0 is the second-to-last message.',
    }),
  }),
);
export type PromptCachingConfig = Infer<typeof PromptCachingConfig>;

export const BackendAI = named(
  {
    name: 'BackendAI',
    description:
      'LLM request processing of an ai backend or GwModel: prompts, guards, defaults, overrides, transformations, model aliases, prompt caching and route types.',
    source: '2',
  },
  object({
    prompt: refine(AIPromptEnrichment, { description: 'Prompt enrichment; applies to chat completion traffic only.' }),
    promptGuard: AIPromptGuard,
    defaults: array(FieldDefault, {
      minItems: 1,
      maxItems: 64,
      description: 'Request body fields set only when the client did not set them.',
    }),
    overrides: array(FieldDefault, {
      minItems: 1,
      maxItems: 64,
      description: 'Request body fields set always, replacing client values.',
    }),
    transformations: array(FieldTransformation, {
      minItems: 1,
      maxItems: 64,
      description: 'Computed request body fields; for the same field they win over overrides.',
    }),
    finalTransformations: array(FieldTransformation, {
      minItems: 1,
      maxItems: 64,
      description: "Computed fields applied after the request is converted to the provider's format.",
    }),
    modelAliases: map(string(), {
      maxProperties: 64,
      description: 'Client model name to provider model name; applied by the data plane only.',
    }),
    promptCaching: PromptCachingConfig,
    routes: map(RouteType, {
      description:
        'Request path suffix (ends-with match; * matches any path) to route type. Unmatched traffic is Completions.',
    }),
  }),
);
export type BackendAI = Infer<typeof BackendAI>;
