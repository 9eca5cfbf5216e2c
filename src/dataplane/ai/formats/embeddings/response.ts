// The client side of OpenAI's Embeddings API, answering: vectors read from another vendor's answer
// written as OpenAI's list of embedding objects, as float arrays or, when the client asked for
// base64, as base64 of little-endian float32 values (what OpenAI sends and its SDKs decode).

import type { JsonObject } from '../types.ts';
import { TranslationError } from '../types.ts';

/** What a provider's embeddings answer holds, whatever its shape. */
export interface Embeddings {
  vectors: number[][];
  /** The input tokens the provider reports; undefined when it reports none. */
  inputTokens: number | undefined;
}

export interface EmbeddingsAnswerOptions {
  /** The model the vectors came from (the one gw asked for: the other APIs' answers name none). */
  model: string;
  base64: boolean;
}

/** A vector as it is in a provider's answer, checked: numbers only. Throws TranslationError otherwise. */
export function readVector(value: unknown, path: string): number[] {
  if (!Array.isArray(value) || !value.every((item) => typeof item === 'number' && Number.isFinite(item))) {
    throw new TranslationError(`${path}: is not an array of numbers`);
  }
  return value as number[];
}

/** The vector as OpenAI's base64: each value a little-endian float32. */
export function float32Base64(vector: readonly number[]): string {
  const bytes = Buffer.allocUnsafe(vector.length * 4);
  for (let i = 0; i < vector.length; i++) bytes.writeFloatLE(vector[i]!, i * 4);
  return bytes.toString('base64');
}

/** OpenAI's embeddings list; `usage` only when the provider counted the input. */
export function writeEmbeddingsResponse(embeddings: Embeddings, options: EmbeddingsAnswerOptions): JsonObject {
  const out: JsonObject = {
    object: 'list',
    data: embeddings.vectors.map((vector, index) => ({
      object: 'embedding',
      index,
      embedding: options.base64 ? float32Base64(vector) : vector,
    })),
    model: options.model,
  };
  if (embeddings.inputTokens !== undefined) {
    out.usage = { prompt_tokens: embeddings.inputTokens, total_tokens: embeddings.inputTokens };
  }
  return out;
}
