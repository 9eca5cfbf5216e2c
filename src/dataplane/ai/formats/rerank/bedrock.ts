// Cohere's rerank API as Amazon Bedrock Agent Runtime's Rerank operation (POST /rerank on
// bedrock-agent-runtime.{region}.amazonaws.com): the query as one TEXT query, each document as an
// INLINE TEXT source, the model as a Bedrock model ARN in a BEDROCK_RERANKING_MODEL configuration
// with numberOfResults (top_n, else every document); `max_tokens_per_doc` (Cohere v2) goes in the
// model configuration's additionalModelRequestFields, which Bedrock hands to the model. The answer
// ({results: [{index, relevanceScore}], nextToken?}) is Cohere's; it reports no usage.

import type { ExchangeTranslation } from '../exchange-translation.ts';
import { isPlainObject, numberOr } from '../json.ts';
import { type JsonObject, TranslationError } from '../types.ts';
import { cohereRerankAnswer, droppedFields, type Ranked, readCohereRerank } from './cohere.ts';

const API = 'Bedrock Rerank';

/** Cohere fields a Bedrock reranking model reads from additionalModelRequestFields. */
const MODEL_FIELDS: ReadonlySet<string> = new Set(['max_tokens_per_doc']);

/** The ARN partition of a region (China and GovCloud regions have their own). */
function partition(region: string): string {
  if (region.startsWith('cn-')) return 'aws-cn';
  if (region.startsWith('us-gov-')) return 'aws-us-gov';
  return 'aws';
}

/** A foundation model's ARN in `region`; an ARN (a custom or imported model's) is kept as it is. */
export function bedrockModelArn(model: string, region: string): string {
  return model.startsWith('arn:') ? model : `arn:${partition(region)}:bedrock:${region}::foundation-model/${model}`;
}

/** A Cohere rerank body as a Bedrock Rerank request for `model` (an id or an ARN) in `region`. */
export function translateBedrockRerank(body: JsonObject, model: string, region: string): ExchangeTranslation {
  const request = readCohereRerank(body, API);
  const modelFields: JsonObject = {};
  const others: JsonObject = {};
  for (const [key, value] of Object.entries(request.rest)) {
    if (MODEL_FIELDS.has(key)) modelFields[key] = value;
    else others[key] = value;
  }
  const modelConfiguration: JsonObject = { modelArn: bedrockModelArn(model, region) };
  if (Object.keys(modelFields).length > 0) modelConfiguration.additionalModelRequestFields = modelFields;
  const warnings = droppedFields(others, API);
  return {
    body: {
      queries: [{ type: 'TEXT', textQuery: { text: request.query } }],
      sources: request.texts.map((text) => ({
        type: 'INLINE',
        inlineDocumentSource: { type: 'TEXT', textDocument: { text } },
      })),
      rerankingConfiguration: {
        type: 'BEDROCK_RERANKING_MODEL',
        bedrockRerankingConfiguration: {
          numberOfResults: request.topN ?? request.texts.length,
          modelConfiguration,
        },
      },
    },
    ...(warnings.length > 0 ? { warnings } : {}),
    // Bedrock's errors are AWS's {"message"} (the type in x-amzn-errortype), as Converse's.
    errorsFrom: 'converse',
    readAnswer: (answer) => ({ body: cohereRerankAnswer(bedrockRanking(answer), request), usage: undefined }),
  };
}

/** The (index, score) pairs of a Bedrock Rerank answer. */
function bedrockRanking(answer: JsonObject): Ranked[] {
  if (!Array.isArray(answer.results)) throw new TranslationError('the answer has no "results" array');
  return answer.results.map((result, position) => {
    const index = isPlainObject(result) ? numberOr(result.index) : undefined;
    const score = isPlainObject(result) ? numberOr(result.relevanceScore) : undefined;
    if (index === undefined || score === undefined) {
      throw new TranslationError(`results[${position}] has no numeric "index" and "relevanceScore"`);
    }
    return { index, score };
  });
}
