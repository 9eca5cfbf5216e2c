// Which LLM API format a provider's answer is in, told from its shape alone. The Detect route
// type forwards the client's request as it is, so gw does not know the format in advance; it
// reads the answer only to meter it. Formats gw does not know are left unread (undefined).
import { isPlainObject, objectOr } from './json.ts';
import type { ApiFormat, JsonObject } from './types.ts';

/** The format of a whole (non-streamed) response body, or undefined when it is none gw knows. */
export function detectedResponseFormat(body: JsonObject): ApiFormat | undefined {
  if (body.type === 'message') return 'messages';
  if (body.object === 'response') return 'responses';
  if (body.object === 'chat.completion' || body.object === 'text_completion') return 'completions';
  if (body.object === 'list' && isPlainObject(body.usage)) return 'embeddings';
  // Anthropic's count_tokens answer ({input_tokens}) and OpenAI's response.input_tokens.
  if (typeof body.input_tokens === 'number' && body.usage === undefined) return 'count_tokens';
  // APIs gw has no format for (images, audio, moderations, OpenAI-compatible servers that leave
  // out `object`) still spell their usage the way one of the formats does.
  const usage = objectOr(body.usage);
  if (usage === undefined) return undefined;
  if (typeof usage.prompt_tokens === 'number') return 'completions';
  if (typeof usage.input_tokens !== 'number') return undefined;
  // Anthropic counts cache reads and writes apart from input_tokens; OpenAI includes them.
  return 'cache_read_input_tokens' in usage || 'cache_creation_input_tokens' in usage ? 'messages' : 'responses';
}

/**
 * The format of a stream, from one of its events; undefined when that event does not tell
 * (a `ping`, an `error`, an API gw does not know): ask again with the next one.
 */
export function detectedEventFormat(event: JsonObject): 'completions' | 'messages' | 'responses' | undefined {
  if (event.object === 'chat.completion.chunk' || Array.isArray(event.choices)) return 'completions';
  const type = event.type;
  if (typeof type !== 'string') return undefined;
  if (type.startsWith('response.')) return 'responses';
  if (type.startsWith('message_') || type.startsWith('content_block_')) return 'messages';
  return undefined;
}
