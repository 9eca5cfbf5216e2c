// POST /v1/embeddings: a list of `embedding` objects, float arrays or base64 float32 strings.
import type { CreateEmbeddingResponse } from 'openai/resources/embeddings';
import { countWords, DEFAULT_EMBEDDING_DIMENSIONS, float32Base64, mockEmbedding } from './deterministic.ts';
import type { AnswerContext, Reply } from './mock-server.ts';

const MAX_DIMENSIONS = 4096;

/** One input: its text (what the vector is derived from) and its token count. */
interface EmbeddingInput {
  text: string;
  tokens: number;
}

export function embeddingsReply(body: Record<string, unknown>, context: AnswerContext): Reply {
  const { model, input, dimensions, encoding_format: encoding } = body;
  if (typeof model !== 'string' || model === '') {
    return context.error({ status: 400, message: 'you must provide a model parameter' });
  }
  const inputs = embeddingInputs(input);
  if (inputs === undefined) {
    return context.error({
      status: 400,
      message: "'input' must be a non-empty string, array of strings, array of tokens or array of token arrays.",
      param: 'input',
    });
  }
  const size = dimensions ?? DEFAULT_EMBEDDING_DIMENSIONS;
  if (typeof size !== 'number' || !Number.isInteger(size) || size < 1 || size > MAX_DIMENSIONS) {
    return context.error({
      status: 400,
      message: `Invalid 'dimensions': expected an integer from 1 to ${MAX_DIMENSIONS}.`,
      param: 'dimensions',
    });
  }
  if (encoding !== undefined && encoding !== 'float' && encoding !== 'base64') {
    return context.error({
      status: 400,
      message: "Invalid value for 'encoding_format': expected 'float' or 'base64'.",
      param: 'encoding_format',
    });
  }
  const unknown = context.unknownModel(model);
  if (unknown) return unknown;

  const tokens = inputs.reduce((sum, entry) => sum + entry.tokens, 0);
  const response = {
    object: 'list',
    model,
    data: inputs.map((entry, index) => {
      const vector = mockEmbedding(entry.text, size);
      return { object: 'embedding', index, embedding: encoding === 'base64' ? float32Base64(vector) : vector };
    }),
    usage: { prompt_tokens: tokens, total_tokens: tokens },
  } satisfies Omit<CreateEmbeddingResponse, 'data'> & {
    // The SDK types `embedding` as numbers only; base64 strings are what it receives and decodes.
    data: Array<Omit<CreateEmbeddingResponse['data'][number], 'embedding'> & { embedding: number[] | string }>;
  };
  return { kind: 'json', status: 200, body: response };
}

/** A string, strings, a token array, or token arrays; undefined when the input is none of these or empty. */
function embeddingInputs(input: unknown): EmbeddingInput[] | undefined {
  if (typeof input === 'string') return input === '' ? undefined : [{ text: input, tokens: countWords(input) }];
  if (!Array.isArray(input) || input.length === 0) return undefined;
  if (input.every((entry) => typeof entry === 'string' && entry !== '')) {
    return input.map((text: string) => ({ text, tokens: countWords(text) }));
  }
  if (input.every(isToken)) return [{ text: input.join(' '), tokens: input.length }];
  if (input.every((entry) => Array.isArray(entry) && entry.length > 0 && entry.every(isToken))) {
    return input.map((tokens: number[]) => ({ text: tokens.join(' '), tokens: tokens.length }));
  }
  return undefined;
}

function isToken(value: unknown): value is number {
  return typeof value === 'number' && Number.isInteger(value) && value >= 0;
}
