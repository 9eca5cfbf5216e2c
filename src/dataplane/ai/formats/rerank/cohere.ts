// The two halves of Cohere's rerank API that a translation to another vendor's ranking API needs:
// the request read into what every ranking API takes (the query, the documents' texts, how many
// results, whether to echo the documents), and the answer written back from (document index,
// score) pairs. The vendors' own shapes: bedrock.ts (Bedrock Agent Runtime's Rerank) and
// vertex.ts (Vertex AI's ranking API).
import { isPlainObject, stringOr } from '../json.ts';
import { type JsonObject, TranslationError, type TranslationWarning } from '../types.ts';

/** A Cohere rerank request, as read for another vendor's API. */
export interface CohereRerank {
  query: string;
  /** Each document's text, by its index in the request. */
  texts: string[];
  /** `top_n`: how many results to answer; undefined is all of them. */
  topN: number | undefined;
  /** `return_documents`: the answer echoes each result's document (Cohere v1's default is false, as v2's). */
  returnDocuments: boolean;
  /** The fields other than model, query, documents, top_n and return_documents. */
  rest: JsonObject;
}

const READ = new Set(['model', 'query', 'documents', 'top_n', 'return_documents']);

/**
 * Reads a Cohere rerank body for `api` (named in errors). A document is a string (v2, v1) or an
 * object with a `text` string (v1). Throws TranslationError (the client is answered 400) for a
 * body that is not one, and for an empty `documents`, which no ranking API takes.
 */
export function readCohereRerank(body: JsonObject, api: string): CohereRerank {
  const query = stringOr(body.query);
  if (query === undefined) throw new TranslationError('"query" must be a string');
  const documents = body.documents;
  if (!Array.isArray(documents)) throw new TranslationError('"documents" must be an array');
  if (documents.length === 0)
    throw new TranslationError(`"documents" must list at least one document: ${api} ranks no empty list`);
  const texts = documents.map((document, index) => {
    const text =
      typeof document === 'string' ? document : isPlainObject(document) ? stringOr(document.text) : undefined;
    if (text === undefined) {
      throw new TranslationError(`documents[${index}] must be a string or an object with a "text" string`);
    }
    return text;
  });
  const topN = body.top_n;
  if (topN !== undefined && (typeof topN !== 'number' || !Number.isInteger(topN) || topN < 1)) {
    throw new TranslationError('"top_n" must be a positive integer');
  }
  const returnDocuments = body.return_documents;
  if (returnDocuments !== undefined && typeof returnDocuments !== 'boolean') {
    throw new TranslationError('"return_documents" must be a boolean');
  }
  const rest: JsonObject = {};
  for (const key in body) if (!READ.has(key)) rest[key] = body[key];
  return { query, texts, topN, returnDocuments: returnDocuments === true, rest };
}

/** Each field of `rest` as dropped: `api` has no place for it. */
export function droppedFields(rest: JsonObject, api: string): TranslationWarning[] {
  return Object.keys(rest).map((path) => ({ path, message: `${api} has no such field; dropped` }));
}

/** One ranked document of a vendor's answer: its index in the request and its score. */
export interface Ranked {
  index: number;
  score: number;
}

/**
 * Cohere's answer ({results: [{index, relevance_score, document?}]}) from a vendor's ranking, in
 * its order (best first); with `return_documents` each result carries its document's text from
 * the request (the vendors echo it only on request, and not always). Throws TranslationError (502)
 * for an index that is not one of the request's documents.
 */
export function cohereRerankAnswer(ranked: readonly Ranked[], request: CohereRerank): JsonObject {
  const results = ranked.map(({ index, score }) => {
    if (!Number.isInteger(index) || index < 0 || index >= request.texts.length) {
      throw new TranslationError(`a result names document ${index}, which the request does not have`);
    }
    const result: JsonObject = { index, relevance_score: score };
    if (request.returnDocuments) result.document = { text: request.texts[index] };
    return result;
  });
  return { results };
}
