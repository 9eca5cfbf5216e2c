// Request fields Chat Completions and the Responses API spell alike (OpenAI's), read into the chat
// form once for both readers, and written once for both writers.
import type { ChatRequest } from './form/types.ts';
import { isPlainObject, isSet, stringOr } from './json.ts';
import type { JsonObject } from './types.ts';
import type { Warnings } from './warnings.ts';

/**
 * The end user: safety_identifier, else user. When both are set and differ, `user` is noted as
 * dropped.
 */
export function readOpenAiUser(body: JsonObject, request: ChatRequest): void {
  const identifier = stringOr(body.safety_identifier);
  const user = identifier ?? stringOr(body.user);
  if (user !== undefined) request.user = { value: user, path: identifier !== undefined ? 'safety_identifier' : 'user' };
  if (typeof body.safety_identifier === 'string' && typeof body.user === 'string' && body.user !== user) {
    request.dropped.push({ kind: 'dropped', path: 'user', why: 'safety_identifier is sent as the user instead' });
  }
}

/** service_tier: auto, default (the standard tier), or another tier (flex, scale, priority). */
export function readOpenAiServiceTier(body: JsonObject, request: ChatRequest): void {
  if (!isSet(body.service_tier)) return;
  const tier = body.service_tier === 'auto' ? 'auto' : body.service_tier === 'default' ? 'standard' : 'other';
  request.serviceTier = { tier, value: body.service_tier, path: 'service_tier' };
}

/** The service tier as service_tier: auto, default (the standard tier); another tier is dropped. */
export function writeOpenAiServiceTier(request: ChatRequest, out: JsonObject, warnings: Warnings): void {
  const tier = request.serviceTier;
  if (tier === undefined) return;
  if (tier.tier === 'auto') out.service_tier = 'auto';
  else if (tier.tier === 'standard') out.service_tier = 'default';
  else warnings.dropped(tier.path);
}

/**
 * A structured-output format at `path`: json_schema with its schema (name and strict kept), or
 * json_object; text (the default) and unknown types change nothing. `nested`: the schema, name
 * and strict are in `json_schema` (Chat Completions), not beside `type` (the Responses API).
 */
export function readOpenAiFormat(format: unknown, path: string, request: ChatRequest, nested: boolean): void {
  if (!isPlainObject(format)) return;
  if (format.type === 'json_schema') {
    const spec = nested ? (isPlainObject(format.json_schema) ? format.json_schema : {}) : format;
    if (!isPlainObject(spec.schema)) {
      request.dropped.push({ kind: 'dropped', path, why: 'a json_schema format without a schema' });
      return;
    }
    const out: ChatRequest['responseFormat'] = { type: 'json_schema', schema: spec.schema, path };
    if (typeof spec.name === 'string') out.name = spec.name;
    if (typeof spec.strict === 'boolean') out.strict = spec.strict;
    request.responseFormat = out;
  } else if (format.type === 'json_object') {
    request.responseFormat = { type: 'json_object', path };
  }
}
