// A Messages response (Anthropic) as a Chat Completions response (OpenAI), non-streaming.
import { isPlainObject, stringOr } from './json.ts';
import { finishReasonFor } from './stop-reasons.ts';
import { type JsonObject, TranslationError } from './types.ts';
import { completionsUsage, usageFromMessages } from './usage.ts';

/**
 * Text blocks join into the message content, tool_use blocks become tool_calls; reasoning and
 * server-tool blocks have no Chat Completions field and are left out. `model`, when given,
 * replaces the provider's model name (the name the client asked for).
 */
export function messagesToCompletionsResponse(body: JsonObject, options: { model?: string } = {}): JsonObject {
  if (!isPlainObject(body) || !Array.isArray(body.content)) {
    throw new TranslationError('the provider response is not a Messages response (no content array)');
  }
  let text = '';
  let hasText = false;
  const toolCalls: JsonObject[] = [];
  for (const block of body.content) {
    if (!isPlainObject(block)) continue;
    if (block.type === 'text' && typeof block.text === 'string') {
      text += block.text;
      hasText = true;
    } else if (block.type === 'tool_use' && typeof block.name === 'string') {
      toolCalls.push({
        id: stringOr(block.id) ?? `call_${toolCalls.length}`,
        type: 'function',
        function: { name: block.name, arguments: JSON.stringify(block.input ?? {}) },
      });
    }
  }
  const message: JsonObject = {
    role: 'assistant',
    content: hasText ? text : toolCalls.length > 0 ? null : '',
    refusal: null,
  };
  if (toolCalls.length > 0) message.tool_calls = toolCalls;
  const out: JsonObject = {
    id: stringOr(body.id) ?? '',
    object: 'chat.completion',
    created: Math.floor(Date.now() / 1000),
    model: options.model ?? stringOr(body.model) ?? '',
    choices: [{ index: 0, message, logprobs: null, finish_reason: finishReasonFor(body.stop_reason) }],
  };
  const usage = usageFromMessages(body.usage);
  if (usage) out.usage = completionsUsage(usage);
  return out;
}
