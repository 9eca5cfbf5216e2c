// LLM provider adapters: compile an LLMProvider once, then plan each upstream request.
// docs/providers.md describes the families, the overrides and every planning rule.
export { ALPHA_DEFAULT_HOST } from './alpha.ts';
export { type CompileProviderOptions, compileProvider } from './compile.ts';
export { DELTA_DEFAULT_HOST } from './delta.ts';
export { type ClientFormat, clientErrorBody, errorFormat, PlanError, ProviderConfigError } from './errors.ts';
export { GAMMA_DEFAULT_HOST } from './gamma.ts';
export { ANTHROPIC_VERSION, ROUTE_CLIENT_FORMAT } from './planner.ts';
export type {
  CompiledProvider,
  Origin,
  PlanInput,
  ProviderFamily,
  ProviderKeyStyle,
  ProviderService,
  ResponseHandling,
  ServiceResolver,
  UpstreamFormat,
  UpstreamPlan,
} from './types.ts';
