// Provider signatures in the chat form (docs/decisions/0025-provider-signatures.md): what a
// provider signs (Anthropic and Bedrock thinking, Gemini's thoughtSignature on a function call)
// must come back to it unchanged in the next turn, through a client format that may have no
// field for it.
//
// - Messages and Responses clients have no signature on a tool call, but do have signed
//   reasoning (a thinking block, a reasoning item's encrypted_content): a signed call is written
//   as signed reasoning with no text right before it (callSignaturesAsReasoning), and the Gemini
//   request writer puts such a signature back on the call that follows it (signaturesOntoCalls).
// - A Responses reasoning item's encrypted_content is opaque to the client: gw writes the
//   signature (or the redacted reasoning) there in an envelope of its own (encryptedContent), so
//   that reading it back tells gw's own from an OpenAI value that means nothing elsewhere.
// - A Responses provider's own reasoning item (its id and encrypted_content) is the signature of
//   the reasoning part read from it (responsesItemSignature), written back as that item.
import type { Warnings } from '../warnings.ts';
import type { Part, ReasoningPart, ToolCallPart } from './types.ts';

/**
 * The parts with each signed tool call preceded by a reasoning part that has the call's signature
 * and no text, for a client format that signs reasoning but not tool calls. The calls keep their
 * signature (writers of those formats do not write it).
 */
export function callSignaturesAsReasoning(parts: Part[]): Part[] {
  if (!parts.some((part) => 'type' in part && part.type === 'tool_call' && part.signature !== undefined)) return parts;
  const out: Part[] = [];
  for (const part of parts) {
    if ('type' in part && part.type === 'tool_call' && part.signature !== undefined) {
      out.push({ type: 'reasoning', text: '', signature: part.signature, path: part.path });
    }
    out.push(part);
  }
  return out;
}

/**
 * For a provider format with no signature on a tool call (Messages, Converse, Responses): the
 * call's signature (another provider's, Gemini's) is reported as dropped. Sent, it would be
 * refused as a foreign signature; left out, the call is an ordinary one of the conversation.
 */
export function reportCallSignature(part: ToolCallPart, warnings: Warnings): void {
  if (part.signature !== undefined) warnings.droppedWithout(part.path, "another provider's signature of a tool call");
}

/** A reasoning part with a signature, no text and nothing redacted: a carried call signature, or an empty signed thought. */
function isBareSignature(part: Part | undefined): part is ReasoningPart & { signature: string } {
  return (
    part !== undefined &&
    'type' in part &&
    part.type === 'reasoning' &&
    part.text === '' &&
    part.signature !== undefined &&
    part.redacted === undefined
  );
}

/**
 * The parts with each bare signature (signed reasoning without text) that directly precedes an
 * unsigned tool call moved onto that call: what callSignaturesAsReasoning wrote, read back. For
 * Gemini, which wants the signature on the functionCall part itself.
 */
export function signaturesOntoCalls(parts: Part[]): Part[] {
  const out: Part[] = [];
  for (let i = 0; i < parts.length; i++) {
    const part = parts[i]!;
    const next = parts[i + 1];
    if (isBareSignature(part) && next !== undefined && 'type' in next && next.type === 'tool_call') {
      if (next.signature === undefined) {
        const call: ToolCallPart = { ...next, signature: part.signature };
        out.push(call);
        i++;
        continue;
      }
    }
    out.push(part);
  }
  return out;
}

/**
 * The parts with each bare signature that directly follows unsigned reasoning with text moved onto
 * that reasoning: a stream signs a thought after its text, in a part of its own (Gemini's
 * thoughtSignature part; gw's Gemini stream writer's reasoningSignature), and the providers that
 * check thinking (Claude, Bedrock) want text and signature in one block.
 */
export function signaturesOntoReasoning(parts: Part[]): Part[] {
  const out: Part[] = [];
  for (const part of parts) {
    const last = out.at(-1);
    if (
      isBareSignature(part) &&
      last !== undefined &&
      'type' in last &&
      last.type === 'reasoning' &&
      last.text !== '' &&
      last.signature === undefined &&
      last.redacted === undefined
    ) {
      out[out.length - 1] = { ...last, signature: part.signature };
      continue;
    }
    out.push(part);
  }
  return out;
}

// gw's envelopes in a Responses reasoning item's encrypted_content: the version names the shape.
const SIGNATURE_PREFIX = 'gw.signature.v1:';
const REDACTED_PREFIX = 'gw.redacted.v1:';

/** A reasoning part's signature or redacted data as encrypted_content; undefined when it has neither. */
export function encryptedContent(part: ReasoningPart): string | undefined {
  if (part.redacted !== undefined) return REDACTED_PREFIX + part.redacted;
  if (part.signature !== undefined) return SIGNATURE_PREFIX + part.signature;
  return undefined;
}

/** The signature or redacted data an encrypted_content written by gw holds; undefined for any other value. */
export function readEncryptedContent(value: unknown): { signature: string } | { redacted: string } | undefined {
  if (typeof value !== 'string') return undefined;
  if (value.startsWith(SIGNATURE_PREFIX) && value.length > SIGNATURE_PREFIX.length) {
    return { signature: value.slice(SIGNATURE_PREFIX.length) };
  }
  if (value.startsWith(REDACTED_PREFIX) && value.length > REDACTED_PREFIX.length) {
    return { redacted: value.slice(REDACTED_PREFIX.length) };
  }
  return undefined;
}

// A Responses provider's reasoning item as the signature of a reasoning part: the item's id and
// its encrypted_content, both of which the provider wants back in the next turn's input.
const RESPONSES_ITEM_PREFIX = 'openai.reasoning.v1:';

/** A Responses provider's reasoning item (its id and encrypted_content) as a reasoning part's signature. */
export function responsesItemSignature(id: string, encrypted: string): string {
  return `${RESPONSES_ITEM_PREFIX}${id}:${encrypted}`;
}

/** The reasoning item a signature written by responsesItemSignature stands for; undefined for any other signature. */
export function readResponsesItemSignature(signature: string): { id: string; encrypted: string } | undefined {
  if (!signature.startsWith(RESPONSES_ITEM_PREFIX)) return undefined;
  const rest = signature.slice(RESPONSES_ITEM_PREFIX.length);
  const colon = rest.indexOf(':');
  if (colon <= 0 || colon === rest.length - 1) return undefined;
  return { id: rest.slice(0, colon), encrypted: rest.slice(colon + 1) };
}

/**
 * Google's convention for a signature on a Chat Completions tool call (its OpenAI-compatible
 * API): `extra_content.google.thought_signature`, which OpenAI clients keep and send back.
 */
export function completionsCallExtra(signature: string): { google: { thought_signature: string } } {
  return { google: { thought_signature: signature } };
}

/** The signature in a Chat Completions tool call's (or tool call delta's) extra_content, when it has one. */
export function completionsCallSignature(call: Record<string, unknown>): string | undefined {
  const extra = call.extra_content;
  if (typeof extra !== 'object' || extra === null) return undefined;
  const google = (extra as Record<string, unknown>).google;
  if (typeof google !== 'object' || google === null) return undefined;
  const signature = (google as Record<string, unknown>).thought_signature;
  return typeof signature === 'string' && signature !== '' ? signature : undefined;
}
