// A new chat request in the form. Every field is present from the start (undefined when unset),
// in one order, so that all requests share one object shape and the writers' reads of them stay
// monomorphic: translation is on every translated request's path.
import type { ChatRequest, Message } from './types.ts';

export function newChatRequest(messages: Message[]): ChatRequest {
  return {
    model: undefined,
    messages,
    maxTokens: undefined,
    stopSequences: undefined,
    stopSequencesPath: undefined,
    temperature: undefined,
    topP: undefined,
    topK: undefined,
    frequencyPenalty: undefined,
    presencePenalty: undefined,
    seed: undefined,
    choices: undefined,
    stream: undefined,
    tools: undefined,
    toolChoice: undefined,
    parallelToolCalls: undefined,
    user: undefined,
    responseFormat: undefined,
    reasoning: undefined,
    serviceTier: undefined,
    dropped: [],
    extra: {},
  };
}
