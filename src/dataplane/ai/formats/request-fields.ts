// Small readings of a request body the proxy needs before (or instead of) translating it.
import { isPlainObject } from './json.ts';
import type { ApiFormat, JsonObject } from './types.ts';

/** The model a request names, if it names one. */
export function requestModel(body: unknown): string | undefined {
  return isPlainObject(body) && typeof body.model === 'string' ? body.model : undefined;
}

/**
 * Whether the client asked for a streamed (SSE) response in its body. A Gemini client asks in its
 * URL (:streamGenerateContent, gemini/path.ts), never in its body.
 */
export function isStreaming(format: ApiFormat, body: unknown): boolean {
  if (format === 'embeddings' || format === 'count_tokens' || format === 'gemini' || format === 'gemini_count_tokens')
    return false;
  return isPlainObject(body) && body.stream === true;
}

/** Whether a Chat Completions client asked for the usage chunk (stream_options.include_usage). */
export function streamIncludesUsage(body: unknown): boolean {
  return isPlainObject(body) && isPlainObject(body.stream_options) && body.stream_options.include_usage === true;
}

/**
 * A streaming Chat Completions request that also asks for the usage chunk, so that gw can count
 * tokens; `added` says gw asked on the client's behalf (then the observer drops that chunk).
 */
export function withStreamUsage(body: JsonObject): { body: JsonObject; added: boolean } {
  if (body.stream !== true || streamIncludesUsage(body)) return { body, added: false };
  const options = isPlainObject(body.stream_options) ? body.stream_options : {};
  return { body: { ...body, stream_options: { ...options, include_usage: true } }, added: true };
}
