// Prompt guards compiled outside a gateway, for tests of the guard pipeline: a compile input
// whose configuration has no secrets or backends (regex guards need none), the request a guard
// checks for, and compiled guards whose results are asserted synchronous (regex guards never
// wait, and the exchange relies on it); for tests through gw, a GwModel with a promptGuard and the
// error an SDK call that gw refuses fails with.
import assert from 'node:assert/strict';
import Anthropic from '@anthropic-ai/sdk';
import type { AIPromptGuard } from '../../src/api/types/ai.ts';
import type { JsonObject } from '../../src/dataplane/ai/formats/types.ts';
import type { GuardCompileInput } from '../../src/dataplane/ai/guards/guard.ts';
import {
  compilePromptGuards,
  type GuardRequestContext,
  type GuardResult,
} from '../../src/dataplane/ai/guards/prompt-guard.ts';
import type { StreamGuard, StreamRejection } from '../../src/dataplane/ai/guards/stream-guard.ts';
import type { ClientFormat } from '../../src/dataplane/ai/providers/index.ts';
import type { BackendCompileContext } from '../../src/dataplane/backends/backend.ts';
import { gwModelYaml } from './objects.ts';

/** A configuration with nothing in it: enough for guards that call no service. */
export const EMPTY_GUARD_INPUT: GuardCompileInput = {
  namespace: 'default',
  context: {
    gateway: 'default/gw',
    data: () => undefined,
    backends: {},
    models: {},
    report: () => {},
  } as unknown as BackendCompileContext,
};

/** EMPTY_GUARD_INPUT with some of its configuration given (backends, a client for guard services). */
export function guardInput(context: Partial<BackendCompileContext>): GuardCompileInput {
  return { ...EMPTY_GUARD_INPUT, context: { ...EMPTY_GUARD_INPUT.context, ...context } };
}

/** The request guards check for: no headers, no variables, never aborted. */
export const GUARD_REQUEST: GuardRequestContext = {
  headers: {},
  variables: {} as GuardRequestContext['variables'],
  signal: new AbortController().signal,
};

/** Compiled guards whose results are synchronous (asserted). */
export interface SyncGuards {
  guardRequest(body: JsonObject, format: ClientFormat): GuardResult;
  guardResponse(body: JsonObject, format: ClientFormat): GuardResult;
  /** The stream guard of one answer in `format`, for GUARD_REQUEST. */
  streamGuard(format: ClientFormat): StreamGuard | undefined;
}

export function syncGuards(config: AIPromptGuard): SyncGuards {
  const compiled = compilePromptGuards(config, 'ai.promptGuard', EMPTY_GUARD_INPUT);
  assert.ok(compiled !== undefined && !('path' in compiled), JSON.stringify(compiled));
  const now = (result: GuardResult | Promise<GuardResult>): GuardResult => {
    assert.ok(!(result instanceof Promise), 'these guards answer synchronously');
    return result;
  };
  return {
    guardRequest: (body, format) => now(compiled.guardRequest(body, format, GUARD_REQUEST)),
    guardResponse: (body, format) => now(compiled.guardResponse(body, format, GUARD_REQUEST)),
    streamGuard: (format) => compiled.streamGuard(format, GUARD_REQUEST),
  };
}

/**
 * GwModel `name` (on HTTPRoute models, objects.ts) served by the OpenAI API at 127.0.0.1:`port`
 * with `key`, guarded by `promptGuard` (an AIPromptGuard in YAML flow style); ends with ---.
 */
export function guardedModelYaml(name: string, port: number, key: string, promptGuard: string): string {
  return gwModelYaml(
    name,
    `  provider: Alpha
  baseURL: http://127.0.0.1:${port}/v1
  policies:
    auth: {key: ${key}}
    promptGuard: ${promptGuard}
`,
  );
}

/** The error a call that should fail fails with (one helper for every test: failure-of.ts). */
export { failureOf } from './failure-of.ts';

/** Passes `text` through a stream guard whose guards answer at once (asserted): its rejection, or undefined when it is sent. */
export function inspectNow(guard: StreamGuard, text: string): StreamRejection | undefined {
  const step = guard.pass(text);
  assert.ok(!(step instanceof Promise), 'regex stream guards answer synchronously');
  if (step.rejected === undefined) assert.equal(step.send, text, 'nothing is held');
  return step.rejected;
}

/** One SSE event of a streamed answer in `format` carrying `piece` as generated text (`sequence`: a Responses event's number). */
export function streamEvent(format: ClientFormat, piece: string, sequence: number): string {
  switch (format) {
    case 'completions':
      return `data: ${JSON.stringify({ choices: [{ index: 0, delta: { content: piece } }] })}\n\n`;
    case 'messages':
      return `event: content_block_delta\ndata: ${JSON.stringify({ type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: piece } })}\n\n`;
    case 'responses':
      return `event: response.output_text.delta\ndata: ${JSON.stringify({ type: 'response.output_text.delta', output_index: 0, content_index: 0, delta: piece, sequence_number: sequence })}\n\n`;
    default:
      return `data: ${JSON.stringify({ candidates: [{ index: 0, content: { role: 'model', parts: [{ text: piece }] } }] })}\n\n`;
  }
}

/** The status and message of an Anthropic SDK error (asserted to be one): a refusal in the Messages format. */
export function anthropicRefusal(error: unknown): { status: number | undefined; message: string } {
  assert.ok(error instanceof Anthropic.APIError, String(error));
  return { status: error.status, message: (error.error as { error: { message: string } }).error.message };
}
