// Shared helpers of the AI policy tests.
import assert from 'node:assert/strict';
import type { BackendAI } from '../../../src/api/types/ai.ts';
import {
  type CompiledAiRequestPolicy,
  compileAiRequestPolicy,
  type ModelRequestPolicies,
} from '../../../src/dataplane/ai/policies/index.ts';

/** Compiles a policy that must compile. */
export function policy(ai: BackendAI | undefined, model?: ModelRequestPolicies): CompiledAiRequestPolicy {
  const compiled = compileAiRequestPolicy(ai, model);
  assert.ok(!Array.isArray(compiled), `unexpected errors: ${JSON.stringify(compiled)}`);
  return compiled;
}

export function chatBody(extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { model: 'fast', messages: [{ role: 'user', content: 'Hello' }], ...extra };
}

export function messagesBody(extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { model: 'fast', max_tokens: 256, messages: [{ role: 'user', content: 'Hello' }], ...extra };
}
