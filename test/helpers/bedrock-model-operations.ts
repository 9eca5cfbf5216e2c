// The Bedrock stand-in's operations besides Converse (bedrock-stand-in.ts routes them here), in the
// wire formats @aws-sdk/client-bedrock-runtime's InvokeModelCommand and CountTokensCommand send
// and read:
// - POST /model/{modelId}/invoke of an embedding model: Amazon Titan Text Embeddings V2
//   ({inputText, dimensions 256|512|1024 (1024 unless asked), normalize} → {embedding,
//   embeddingsByType, inputTextTokenCount}) and Cohere Embed ({texts, input_type (required),
//   output_dimension on v4} → {id, response_type: "embeddings_floats", texts, embeddings}, the
//   input's token count in X-Amzn-Bedrock-Input-Token-Count); other models are refused as Bedrock
//   refuses a body its model does not take.
// - POST /model/{modelId}/count-tokens {input: {converse: {messages, system, toolConfig}}} →
//   {inputTokens}.
// Vectors are mockEmbedding(text, size); a token is a whitespace-separated word of a text, a system
// prompt's included, and each declared tool counts one.
import { countWords, isObject, mockEmbedding } from '../support/providers/deterministic.ts';

export interface OperationAnswer {
  status: number;
  body: unknown;
  headers?: Record<string, string>;
}

function validation(message: string): OperationAnswer {
  return { status: 400, body: { message }, headers: { 'x-amzn-errortype': 'ValidationException' } };
}

function titan(modelId: string, body: Record<string, unknown>): OperationAnswer {
  const known = new Set(['inputText', 'dimensions', 'normalize', 'embeddingTypes']);
  const extra = Object.keys(body).find((key) => !known.has(key));
  if (extra !== undefined) return validation(`Malformed input request: extraneous key [${extra}] is not permitted`);
  if (typeof body.inputText !== 'string' || body.inputText === '') return validation('inputText is required');
  const v2 = modelId.includes('titan-embed-text-v2');
  if (!v2 && body.dimensions !== undefined) return validation('extraneous key [dimensions] is not permitted');
  const dimensions = body.dimensions ?? (v2 ? 1024 : 1536);
  if (v2 && dimensions !== 256 && dimensions !== 512 && dimensions !== 1024) {
    return validation('dimensions: must be one of 256, 512, 1024');
  }
  const embedding = mockEmbedding(body.inputText, dimensions as number);
  return {
    status: 200,
    body: { embedding, embeddingsByType: { float: embedding }, inputTextTokenCount: countWords(body.inputText) },
  };
}

function cohere(modelId: string, body: Record<string, unknown>): OperationAnswer {
  const texts = body.texts;
  if (!Array.isArray(texts) || texts.length === 0 || !texts.every((text) => typeof text === 'string')) {
    return validation('texts: a list of strings is required');
  }
  if (typeof body.input_type !== 'string') return validation('input_type is required');
  const v4 = modelId.includes('cohere.embed-v4');
  if (!v4 && body.output_dimension !== undefined)
    return validation('extraneous key [output_dimension] is not permitted');
  const dimensions = (body.output_dimension as number | undefined) ?? (v4 ? 1536 : 1024);
  const vectors = (texts as string[]).map((text) => mockEmbedding(text, dimensions));
  const tokens = (texts as string[]).reduce((sum, text) => sum + countWords(text), 0);
  return {
    status: 200,
    body: {
      id: 'emb-1',
      response_type: 'embeddings_floats',
      texts,
      embeddings: Array.isArray(body.embedding_types) ? { float: vectors } : vectors,
    },
    headers: { 'x-amzn-bedrock-input-token-count': String(tokens) },
  };
}

function textWords(blocks: unknown): number {
  if (!Array.isArray(blocks)) return 0;
  return blocks.reduce(
    (sum: number, block) => sum + (isObject(block) && typeof block.text === 'string' ? countWords(block.text) : 0),
    0,
  );
}

function countTokens(body: Record<string, unknown>): OperationAnswer {
  const converse = isObject(body.input) ? body.input.converse : undefined;
  if (!isObject(converse) || !Array.isArray(converse.messages) || converse.messages.length === 0) {
    return validation('input.converse.messages is required');
  }
  const tools =
    isObject(converse.toolConfig) && Array.isArray(converse.toolConfig.tools) ? converse.toolConfig.tools : [];
  const inputTokens =
    converse.messages.reduce((sum: number, message) => sum + (isObject(message) ? textWords(message.content) : 0), 0) +
    textWords(converse.system) +
    tools.length;
  return { status: 200, body: { inputTokens } };
}

/** The answer of an InvokeModel (embedding models) or CountTokens request. */
export function bedrockModelOperation(
  operation: 'invoke' | 'count-tokens',
  modelId: string,
  body: Record<string, unknown>,
): OperationAnswer {
  if (operation === 'count-tokens') return countTokens(body);
  if (modelId.includes('amazon.titan-embed-text')) return titan(modelId, body);
  if (modelId.includes('cohere.embed-')) return cohere(modelId, body);
  return validation(`The provided model identifier ${modelId} does not support this stand-in's InvokeModel`);
}
