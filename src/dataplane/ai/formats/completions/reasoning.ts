// Reasoning on a Chat Completions assistant message (docs/decisions/0025-provider-signatures.md).
// OpenAI's schema has no reasoning field; the convention of the OpenAI-compatible servers that
// show reasoning (DeepSeek, vLLM, LiteLLM) is `reasoning_content`, the thinking text, and
// agentgateway's is `reasoning_signature` beside it, the provider's signature of that text
// (Anthropic's and Bedrock's, which refuse a tool turn of a thinking model whose assistant
// message does not start with its signed thinking). gw writes both on answers (message fields;
// in streams `delta.reasoning_content` fragments, then the signature in a delta of its own) and
// reads them back from a client's assistant message as the reasoning the message starts with.
//
// One message carries one reasoning block: several blocks in one answer (interleaved thinking)
// have their texts joined and no signature, redacted reasoning has no field; neither can be
// replayed to the provider that signed it.
import type { Part, ReasoningPart } from '../form/types.ts';
import { type JsonObject, TranslationError } from '../types.ts';
import type { Warnings } from '../warnings.ts';

/**
 * The reasoning an assistant message carries, as a part; undefined when it has none. A client's
 * field that is not a string is refused (`strict`); a provider's is ignored, as any field of an
 * answer the form does not know.
 */
export function readMessageReasoning(message: JsonObject, path: string, strict = true): ReasoningPart | undefined {
  const text = optionalString(message.reasoning_content, `${path}.reasoning_content`, strict);
  const signature = optionalString(message.reasoning_signature, `${path}.reasoning_signature`, strict);
  if (text === undefined && signature === undefined) return undefined;
  const part: ReasoningPart = { type: 'reasoning', text: text ?? '', path: `${path}.reasoning_content` };
  if (signature !== undefined) part.signature = signature;
  return part;
}

/** A string field; undefined when absent, null or empty (an empty signature is none). */
function optionalString(value: unknown, path: string, strict: boolean): string | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'string') {
    if (strict) throw new TranslationError(`${path}: must be a string`);
    return undefined;
  }
  return value === '' ? undefined : value;
}

/**
 * The reasoning fields of a message written from its parts: the reasoning texts joined as
 * `reasoning_content`, and `reasoning_signature` when they are one signed block. What cannot be
 * carried is reported to `warnings` when given (a request); an answer has no warnings.
 */
export function messageReasoningFields(parts: readonly Part[], warnings?: Warnings): JsonObject {
  const reasoning = parts.filter((part): part is ReasoningPart => 'type' in part && part.type === 'reasoning');
  const readable = reasoning.filter((part) => part.redacted === undefined);
  const signed = readable.filter((part) => part.signature !== undefined);
  const oneSignedBlock = readable.length === 1 && signed.length === 1;
  // Reported in the order of the source body.
  for (const part of reasoning) {
    if (part.redacted !== undefined) warnings?.droppedWithout(part.path, 'redacted reasoning');
    else if (part.signature !== undefined && !oneSignedBlock) {
      warnings?.dropped(part.path, 'a message carries one signed reasoning block in Chat Completions');
    }
  }
  const out: JsonObject = {};
  const text = readable.map((part) => part.text).join('');
  if (text !== '') out.reasoning_content = text;
  if (oneSignedBlock) out.reasoning_signature = signed[0]!.signature;
  return out;
}
