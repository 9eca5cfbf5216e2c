// AI request policies of an AI backend: route types, model aliases, prompt enrichment,
// defaults, overrides, transformations and final transformations. docs/ai-policies.md.
export { compileModelAliases, type ModelAliasResolver } from './model-aliases.ts';
export { compilePromptEnrichment, type PromptEnricher } from './prompt-enrichment.ts';
export {
  type CompiledAiRequestPolicy,
  compileAiRequestPolicy,
  type ModelRequestPolicies,
} from './request-policy.ts';
export { compileRouteTypes, type PolicySteps, policyStepsFor, type RouteTypeOf } from './route-types.ts';
export { BODY_VARIABLE } from './transformations.ts';
export type { AiFinalResult, AiPolicyError, AiPolicyWarning, AiRequestRejection, AiRequestResult } from './types.ts';
