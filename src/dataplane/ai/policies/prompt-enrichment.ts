// BackendAI.prompt: static messages put before (prepend) and after (append) the client's.
// Roles are written in lower case, as both chat APIs spell them (the spec's examples say SYSTEM
// and USER). Chat Completions: every message goes into `messages`. Messages: that API has no
// system role, so system messages become text blocks of the top-level `system` field (a string
// `system` is turned into one text block first), the rest go into `messages`.
import type { AIPromptEnrichment, Message } from '../../../api/types/ai.ts';
import { isPlainObject } from '../formats/json.ts';
import type { ApiFormat, JsonObject } from '../formats/types.ts';
import type { AiRequestRejection } from './types.ts';

/** Enriches `body` in place (a copy the caller owns); a rejection when its shape does not allow it. */
export type PromptEnricher = (body: JsonObject, format: ApiFormat) => AiRequestRejection | undefined;

interface Prompt {
  role: string;
  content: string;
}

export function compilePromptEnrichment(prompt: AIPromptEnrichment | undefined): PromptEnricher | undefined {
  const prepend = normalise(prompt?.prepend);
  const append = normalise(prompt?.append);
  if (prepend.length === 0 && append.length === 0) return undefined;

  const isSystem = (message: Prompt) => message.role === 'system';
  const systemBefore = prepend.filter(isSystem);
  const systemAfter = append.filter(isSystem);
  const turnsBefore = prepend.filter((message) => !isSystem(message));
  const turnsAfter = append.filter((message) => !isSystem(message));

  return (body, format) => {
    if (format === 'completions') return spliceMessages(body, prepend, append);
    if (format !== 'messages') return undefined;
    if (systemBefore.length > 0 || systemAfter.length > 0) {
      const existing = systemBlocks(body.system);
      if (existing === undefined) {
        return reject('system: must be a string or an array of content blocks');
      }
      body.system = [...systemBefore.map(textBlock), ...existing, ...systemAfter.map(textBlock)];
    }
    return spliceMessages(body, turnsBefore, turnsAfter);
  };
}

function normalise(messages: Message[] | undefined): Prompt[] {
  return (messages ?? []).map((message) => ({ role: message.role.toLowerCase(), content: message.content }));
}

function spliceMessages(body: JsonObject, before: Prompt[], after: Prompt[]): AiRequestRejection | undefined {
  if (before.length === 0 && after.length === 0) return undefined;
  if (!Array.isArray(body.messages)) return reject('messages: must be an array');
  // Fresh message objects per request: nothing later can change the compiled policy through them.
  body.messages = [...before.map(copyPrompt), ...body.messages, ...after.map(copyPrompt)];
  return undefined;
}

/** The client's `system` as content blocks, or undefined when it is not a valid `system`. */
function systemBlocks(system: unknown): unknown[] | undefined {
  if (system === undefined || system === null) return [];
  // An empty text block is refused by the Messages API, so an empty string contributes nothing.
  if (typeof system === 'string') return system === '' ? [] : [{ type: 'text', text: system }];
  if (Array.isArray(system) && system.every(isPlainObject)) return system;
  return undefined;
}

function copyPrompt(message: Prompt): JsonObject {
  return { role: message.role, content: message.content };
}

function textBlock(message: Prompt): JsonObject {
  return { type: 'text', text: message.content };
}

function reject(message: string): AiRequestRejection {
  return { status: 400, message };
}
