// A Chat Completions response (OpenAI) as a Messages response (Anthropic), non-streaming.
import { isPlainObject, stringOr } from './json.ts';
import { stopReasonFor } from './stop-reasons.ts';
import { type JsonObject, TranslationError } from './types.ts';
import { messagesUsage, usageFromCompletions } from './usage.ts';

/**
 * The first choice becomes the message: its text (and refusal) a text block, each function tool
 * call a tool_use block whose input is the parsed arguments ({} when they are not a JSON object:
 * Anthropic's input must be one). `model`, when given, replaces the provider's model name.
 */
export function completionsToMessagesResponse(body: JsonObject, options: { model?: string } = {}): JsonObject {
  const choice = isPlainObject(body) && Array.isArray(body.choices) ? body.choices[0] : undefined;
  if (!isPlainObject(choice) || !isPlainObject(choice.message)) {
    throw new TranslationError('the provider response is not a Chat Completions response (no choices[0].message)');
  }
  const message = choice.message;
  const content: JsonObject[] = [];
  const text = messageText(message.content);
  if (text) content.push({ type: 'text', text });
  if (typeof message.refusal === 'string' && message.refusal) content.push({ type: 'text', text: message.refusal });
  if (Array.isArray(message.tool_calls)) {
    message.tool_calls.forEach((call, i) => {
      if (!isPlainObject(call) || !isPlainObject(call.function) || typeof call.function.name !== 'string') return;
      const id = stringOr(call.id) ?? `toolu_${i}`;
      content.push({ type: 'tool_use', id, name: call.function.name, input: toolInput(call.function.arguments) });
    });
  }
  if (isPlainObject(message.function_call) && typeof message.function_call.name === 'string') {
    const input = toolInput(message.function_call.arguments);
    content.push({ type: 'tool_use', id: 'legacy_function_call', name: message.function_call.name, input });
  }
  const usage = usageFromCompletions(body.usage);
  return {
    id: stringOr(body.id) ?? '',
    type: 'message',
    role: 'assistant',
    model: options.model ?? stringOr(body.model) ?? '',
    content,
    stop_reason: stopReasonFor(choice.finish_reason),
    stop_sequence: null,
    usage: usage ? messagesUsage(usage) : { input_tokens: 0, output_tokens: 0 },
  };
}

/** Message content as text: a string, or the text parts some compatible servers return. */
function messageText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content.map((part) => (isPlainObject(part) && typeof part.text === 'string' ? part.text : '')).join('');
}

function toolInput(args: unknown): JsonObject {
  if (typeof args !== 'string') return isPlainObject(args) ? args : {};
  try {
    const parsed: unknown = JSON.parse(args);
    return isPlainObject(parsed) ? parsed : {};
  } catch {
    return {};
  }
}
