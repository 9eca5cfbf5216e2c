// Cohere's rerank API as Vertex AI's ranking API (Discovery Engine's RankService.Rank: POST
// /v1/projects/{project}/locations/{location}/rankingConfigs/default_ranking_config:rank on
// discoveryengine.googleapis.com): each document a record whose id is its index ("0", "1", ...),
// top_n as topN, and ignoreRecordDetailsInResponse (gw echoes the documents from the request
// itself when asked). The answer ({records: [{id, score}]}, best first) is Cohere's: each id read
// back as the document's index (a record that is not one is a 502); it reports no usage.

import type { ExchangeTranslation } from '../exchange-translation.ts';
import { isPlainObject, numberOr, stringOr } from '../json.ts';
import { type JsonObject, TranslationError } from '../types.ts';
import { cohereRerankAnswer, droppedFields, type Ranked, readCohereRerank } from './cohere.ts';

const API = 'The Vertex AI ranking API';

const INDEX = /^(0|[1-9][0-9]{0,8})$/;

/** A Cohere rerank body as a RankRequest for `model`, a ranking model (semantic-ranker-default@latest...). */
export function translateVertexRerank(body: JsonObject, model: string): ExchangeTranslation {
  const request = readCohereRerank(body, API);
  const rank: JsonObject = {
    model,
    query: request.query,
    records: request.texts.map((content, index) => ({ id: String(index), content })),
  };
  if (request.topN !== undefined) rank.topN = request.topN;
  rank.ignoreRecordDetailsInResponse = true;
  const warnings = droppedFields(request.rest, API);
  return {
    body: rank,
    ...(warnings.length > 0 ? { warnings } : {}),
    // Google's {"error": {code, message, status}}, as Gemini's.
    errorsFrom: 'gemini',
    readAnswer: (answer) => ({ body: cohereRerankAnswer(vertexRanking(answer), request), usage: undefined }),
  };
}

/** The (index, score) pairs of a RankResponse. */
function vertexRanking(answer: JsonObject): Ranked[] {
  // A ranking of nothing is written as {} (proto3 JSON leaves out an empty list).
  const records = answer.records ?? [];
  if (!Array.isArray(records)) throw new TranslationError('"records" is not an array');
  return records.map((record, position) => {
    const id = isPlainObject(record) ? stringOr(record.id) : undefined;
    if (id === undefined || !INDEX.test(id)) {
      throw new TranslationError(
        `records[${position}] has the id ${JSON.stringify(id)}, which is no document index gw sent`,
      );
    }
    // proto3 JSON leaves out a score of 0.
    const score = isPlainObject(record) && record.score !== undefined ? numberOr(record.score) : 0;
    if (score === undefined) throw new TranslationError(`records[${position}] has a "score" that is not a number`);
    return { index: Number(id), score };
  });
}
