// Shared by the provider tests: compile or fail the test, plan or fail the test.
import assert from 'node:assert/strict';
import type { RouteType } from '../../../src/api/types/ai.ts';
import type { LLMProvider } from '../../../src/api/types/llm-provider.ts';
import type { JsonObject } from '../../../src/dataplane/ai/formats/index.ts';
import {
  type ClientFormat,
  type CompiledProvider,
  type CompileProviderOptions,
  compileProvider,
  PlanError,
  type PlanInput,
  ProviderConfigError,
  type UpstreamPlan,
} from '../../../src/dataplane/ai/providers/index.ts';

export function compiled(provider: LLMProvider, options?: CompileProviderOptions): CompiledProvider {
  const result = compileProvider(provider, options);
  if (result instanceof ProviderConfigError) assert.fail(`unexpected config error: ${result.message}`);
  return result;
}

/** The route type the proxy gives for each client format. */
export const ROUTE_OF: Record<ClientFormat, RouteType> = {
  completions: 'Completions',
  messages: 'Messages',
  responses: 'Responses',
  embeddings: 'Embeddings',
  count_tokens: 'GammaTokenCount',
  gemini: 'GenerateContent',
  gemini_count_tokens: 'DeltaCountTokens',
  models: 'Models',
  rerank: 'Rerank',
  realtime: 'Realtime',
};

export function input(
  clientFormat: ClientFormat,
  body: JsonObject | undefined,
  extra: Partial<PlanInput> = {},
): PlanInput {
  return { clientFormat, routeType: ROUTE_OF[clientFormat], body, stream: body?.stream === true, ...extra };
}

export function planned(provider: CompiledProvider, planInput: PlanInput): UpstreamPlan {
  const result = provider.plan(planInput);
  if (result instanceof PlanError) assert.fail(`unexpected plan error: ${result.message}`);
  return result;
}

export function refused(provider: CompiledProvider, planInput: PlanInput): PlanError {
  const result = provider.plan(planInput);
  assert.ok(result instanceof PlanError, 'expected a PlanError');
  return result;
}

export const CHAT_BODY: JsonObject = {
  model: 'gpt-4o-mini',
  messages: [
    { role: 'system', content: 'Be terse.' },
    { role: 'user', content: 'hello there' },
  ],
};

export const MESSAGES_BODY: JsonObject = {
  model: 'claude-test',
  max_tokens: 100,
  system: 'Be terse.',
  messages: [{ role: 'user', content: 'hello there' }],
};

export const RESPONSES_BODY: JsonObject = { model: 'gpt-4o-mini', input: 'hello there' };
export const EMBEDDINGS_BODY: JsonObject = { model: 'text-embedding-3-small', input: 'hello there' };
export const COUNT_TOKENS_BODY: JsonObject = {
  model: 'claude-test',
  messages: [{ role: 'user', content: 'hello there' }],
};

export const RERANK_BODY: JsonObject = {
  model: 'rerank-v3.5',
  query: 'What is the capital of France?',
  documents: ['Paris is the capital of France.', 'Berlin is in Germany.'],
  top_n: 1,
};

export const GEMINI_BODY: JsonObject = {
  model: 'gemini-test',
  contents: [{ role: 'user', parts: [{ text: 'hello there' }] }],
};

export const BODY_OF: Record<ClientFormat, JsonObject | undefined> = {
  completions: CHAT_BODY,
  messages: MESSAGES_BODY,
  responses: RESPONSES_BODY,
  embeddings: EMBEDDINGS_BODY,
  count_tokens: COUNT_TOKENS_BODY,
  gemini: GEMINI_BODY,
  gemini_count_tokens: GEMINI_BODY,
  models: undefined,
  rerank: RERANK_BODY,
  realtime: undefined,
};

/** The ProviderConfigError a provider compiles to (failing when it compiles). */
export function configError(provider: LLMProvider, options?: CompileProviderOptions): ProviderConfigError {
  const result = compileProvider(provider, options);
  assert.ok(result instanceof ProviderConfigError, 'expected a ProviderConfigError');
  return result;
}

/** A planned path with its query, as a request line shows it: `/openai/models?api-version=2024-10-21`. */
export function pathAndQuery(plan: { path: string; query: readonly (readonly [string, string])[] }): string {
  if (plan.query.length === 0) return plan.path;
  return `${plan.path}?${new URLSearchParams(plan.query.map(([name, value]): [string, string] => [name, value]))}`;
}
