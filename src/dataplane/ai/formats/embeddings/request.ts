// The client side of OpenAI's Embeddings API (POST /v1/embeddings) when the provider speaks
// another vendor's embeddings API (Gemini, Vertex AI, Bedrock): the request read into the texts to
// embed, the dimensions asked for and how the vectors are to be encoded in the answer. The
// provider side of each vendor is in its own folder; docs/llm-formats.md lists every mapping.
import { isPlainObject, unknownFields } from '../json.ts';
import { type JsonObject, TranslationError } from '../types.ts';

export interface EmbeddingsRequest {
  /** The texts to embed, in the client's order (a string input is one text). */
  texts: string[];
  /** `dimensions`: the size of each vector the client wants. */
  dimensions?: number;
  /** `encoding_format: base64`: the vectors go back as base64 little-endian float32, as OpenAI sends them. */
  base64: boolean;
  /** `user`: an end-user id, which none of the translated APIs has. */
  user?: string;
  /** Fields gw does not know, carried over to the provider's body as they are (as for chat requests). */
  extra: JsonObject;
}

const KNOWN_FIELDS: ReadonlySet<string> = new Set(['model', 'input', 'dimensions', 'encoding_format', 'user']);

/** Throws TranslationError for a body OpenAI would refuse, or one gw cannot translate (token arrays). */
export function readEmbeddingsRequest(body: JsonObject): EmbeddingsRequest {
  if (!isPlainObject(body)) throw new TranslationError('the request body must be a JSON object');
  const request: EmbeddingsRequest = { texts: readInput(body.input), base64: false, extra: {} };
  const dimensions = body.dimensions;
  if (dimensions !== undefined && dimensions !== null) {
    if (typeof dimensions !== 'number' || !Number.isInteger(dimensions) || dimensions < 1) {
      throw new TranslationError('dimensions: must be a positive integer');
    }
    request.dimensions = dimensions;
  }
  const encoding = body.encoding_format;
  if (encoding === 'base64') request.base64 = true;
  else if (encoding !== undefined && encoding !== null && encoding !== 'float') {
    throw new TranslationError('encoding_format: must be "float" or "base64"');
  }
  if (typeof body.user === 'string') request.user = body.user;
  request.extra = unknownFields(body, KNOWN_FIELDS);
  return request;
}

function readInput(input: unknown): string[] {
  if (typeof input === 'string') {
    if (input === '') throw new TranslationError('input: must not be empty');
    return [input];
  }
  if (!Array.isArray(input) || input.length === 0) {
    throw new TranslationError('input: must be a non-empty string or array of strings');
  }
  return input.map((item, i) => {
    if (typeof item === 'string') {
      if (item === '') throw new TranslationError(`input[${i}]: must not be empty`);
      return item;
    }
    // OpenAI also takes token ids (tiktoken's); other vendors' models have tokenizers of their own.
    if (typeof item === 'number' || Array.isArray(item)) {
      throw new TranslationError(
        'input: token arrays cannot be translated for this provider (its model has its own tokenizer); send the text',
      );
    }
    throw new TranslationError(`input[${i}]: must be a string`);
  });
}
