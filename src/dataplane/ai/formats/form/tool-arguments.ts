// A tool call's arguments between the two ways formats carry them: JSON text (OpenAI's
// `arguments`) and a decoded object (Anthropic's `input`, Bedrock's `input`, Gemini's `args`).
// In the form a string is JSON text and anything else the decoded value (types.ts ToolCallPart).
import { isPlainObject } from '../json.ts';
import type { JsonObject } from '../types.ts';
import type { Warnings } from '../warnings.ts';

/** The arguments as JSON text: {} when none were given. */
export function argumentsJson(args: unknown): string {
  return typeof args === 'string' ? args : JSON.stringify(args ?? {});
}

/**
 * The arguments as an object, which Anthropic's input must be. Arguments that are not a JSON
 * object become {}; with `warnings`, that is reported at `path` (a request: the client sent them).
 */
export function argumentsObject(args: unknown, path?: string, warnings?: Warnings): JsonObject {
  if (isPlainObject(args)) return args;
  if (args === undefined || args === null || (typeof args === 'string' && args.trim() === '')) return {};
  if (typeof args === 'string') {
    try {
      const parsed: unknown = JSON.parse(args);
      if (isPlainObject(parsed)) return parsed;
    } catch {
      // reported below
    }
  }
  if (warnings !== undefined && path !== undefined) warnings.changed(path, 'not a JSON object; sent as {}');
  return {};
}
