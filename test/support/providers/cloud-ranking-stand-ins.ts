// Stand-ins on loopback for the two cloud ranking APIs gw translates Cohere's rerank API to, each
// in its vendor's exact wire format (tests prove them with the vendor's own SDK first):
// - Bedrock Agent Runtime's Rerank (POST /rerank): a SigV4 signature (service bedrock) recomputed
//   with test/helpers/sigv4.ts, the body {queries, sources, rerankingConfiguration} checked as
//   Bedrock validates it, the answer {results: [{index, relevanceScore}]}; errors are AWS's
//   {"message"} with x-amzn-errortype (ValidationException for an unknown model ARN).
// - Vertex AI's ranking API (Discovery Engine's Rank: POST
//   /v1/projects/{project}/locations/{location}/rankingConfigs/default_ranking_config:rank): a
//   Bearer access token, the body {model, query, records: [{id, content}], topN?,
//   ignoreRecordDetailsInResponse?}, the answer {records: [{id, score, content?}]} in proto3 JSON
//   (a score of 0 left out); errors are Google's {"error": {code, message, status}}. The model
//   `semantic-ranker-renumbered@latest` answers with ids that are not those it was sent, as a
//   broken server would.
// Both score a document as rerank-mock.ts does (the share of the query's words it contains) and
// record each request with the Host it was sent to.
import { createServer, type IncomingHttpHeaders } from 'node:http';
import { sendAwsError, verifiedOrRefused } from '../../helpers/aws-json-service.ts';
import { closeServer, listen, readBody, sendJson } from '../../helpers/http-server.ts';
import type { Sigv4Secrets, Verified } from '../../helpers/sigv4.ts';
import { relevanceOf } from './rerank-mock.ts';

export interface RankingCall {
  /** The request target as received. */
  url: string;
  headers: IncomingHttpHeaders;
  body: Record<string, unknown>;
}

export interface RankingStandIn {
  port: number;
  url: string;
  calls: RankingCall[];
  close(): Promise<void>;
}

/** The ranking of `texts` for `query`: indexes and scores, best first, at most `limit`. */
function rank(query: string, texts: readonly string[], limit: number): { index: number; score: number }[] {
  return texts
    .map((text, index) => ({ index, score: relevanceOf(query, text) }))
    .sort((a, b) => b.score - a.score || a.index - b.index)
    .slice(0, limit);
}

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

// Bedrock's foundation-model ARNs (arn:{partition}:bedrock:{region}::foundation-model/{id}).
const MODEL_ARN = /^arn:aws(-cn|-us-gov)?:bedrock:[a-z0-9-]+::foundation-model\/(.+)$/;
const BEDROCK_RERANK_MODELS = new Set(['cohere.rerank-v3-5:0', 'amazon.rerank-v1:0']);

export interface BedrockRerankCall extends RankingCall {
  verified: Verified;
}

export interface BedrockRankingStandIn extends Omit<RankingStandIn, 'calls'> {
  calls: BedrockRerankCall[];
  /** Requests refused for their signature, with the reason. */
  refused: string[];
}

/** Why a Rerank body is not one Bedrock takes, or the query, texts, limit and model id. */
function bedrockRerankRequest(
  body: Record<string, unknown>,
): string | { query: string; texts: string[]; limit: number; modelId: string } {
  const queries = body.queries;
  if (!Array.isArray(queries) || queries.length !== 1) return 'queries must hold exactly one query';
  const query = queries[0];
  if (
    !isObject(query) ||
    query.type !== 'TEXT' ||
    !isObject(query.textQuery) ||
    typeof query.textQuery.text !== 'string'
  )
    return 'queries[0] must be a TEXT query with textQuery.text';
  const sources = body.sources;
  if (!Array.isArray(sources) || sources.length < 1 || sources.length > 1000)
    return 'sources must hold 1 to 1000 sources';
  const texts: string[] = [];
  for (const source of sources) {
    const inline = isObject(source) && source.type === 'INLINE' ? source.inlineDocumentSource : undefined;
    if (!isObject(inline) || inline.type !== 'TEXT' || !isObject(inline.textDocument))
      return 'each source must be an INLINE TEXT document';
    if (typeof inline.textDocument.text !== 'string') return 'textDocument.text is required';
    texts.push(inline.textDocument.text);
  }
  const configuration = body.rerankingConfiguration;
  const bedrock = isObject(configuration) ? configuration.bedrockRerankingConfiguration : undefined;
  if (!isObject(configuration) || configuration.type !== 'BEDROCK_RERANKING_MODEL' || !isObject(bedrock))
    return 'rerankingConfiguration must be a BEDROCK_RERANKING_MODEL configuration';
  const model = isObject(bedrock.modelConfiguration) ? bedrock.modelConfiguration.modelArn : undefined;
  const arn = typeof model === 'string' ? MODEL_ARN.exec(model) : null;
  if (arn === null) return `modelArn ${JSON.stringify(model)} is not a foundation model ARN`;
  const limit = bedrock.numberOfResults ?? texts.length;
  if (typeof limit !== 'number' || !Number.isInteger(limit) || limit < 1 || limit > 1000)
    return 'numberOfResults must be an integer from 1 to 1000';
  return { query: query.textQuery.text, texts, limit, modelId: arn[2]! };
}

export async function startBedrockRankingStandIn(secrets: Sigv4Secrets): Promise<BedrockRankingStandIn> {
  const calls: BedrockRerankCall[] = [];
  const refused: string[] = [];
  const server = createServer(async (req, res) => {
    const text = await readBody(req);
    const fail = (status: number, type: string, message: string) => sendAwsError(res, status, type, message);
    const verified = verifiedOrRefused(req, text, { secrets, service: 'bedrock' }, res, refused);
    if (verified === undefined) return;
    if (req.method !== 'POST' || req.url !== '/rerank')
      return fail(404, 'UnknownOperationException', 'Unknown operation');
    const body = JSON.parse(text) as Record<string, unknown>;
    calls.push({ url: req.url, headers: req.headers, body, verified });
    const request = bedrockRerankRequest(body);
    if (typeof request === 'string') return fail(400, 'ValidationException', request);
    if (!BEDROCK_RERANK_MODELS.has(request.modelId))
      return fail(400, 'ValidationException', `The provided model identifier is invalid: ${request.modelId}`);
    sendJson(res, 200, {
      results: rank(request.query, request.texts, request.limit).map(({ index, score }) => ({
        index,
        relevanceScore: score,
      })),
    });
  });
  const port = await listen(server);
  return { port, url: `http://127.0.0.1:${port}`, calls, refused, close: () => closeServer(server) };
}

const RANK_PATH = /^\/v1\/projects\/([^/]+)\/locations\/([^/]+)\/rankingConfigs\/default_ranking_config:rank$/;
const RENUMBERING_MODEL = 'semantic-ranker-renumbered@latest';

/** A Vertex AI ranking API for `project` (any location), taking the access token `token`. */
export async function startVertexRankingStandIn(project: string, token: string): Promise<RankingStandIn> {
  const calls: RankingCall[] = [];
  const server = createServer(async (req, res) => {
    const text = await readBody(req);
    const fail = (code: number, status: string, message: string) =>
      sendJson(res, code, { error: { code, message, status } });
    const path = (req.url ?? '').split('?')[0]!;
    const match = RANK_PATH.exec(path);
    if (req.method !== 'POST' || match === null) return fail(404, 'NOT_FOUND', `no method at ${path}`);
    if (req.headers.authorization !== `Bearer ${token}`)
      return fail(401, 'UNAUTHENTICATED', 'Request had invalid authentication credentials.');
    const body = JSON.parse(text) as Record<string, unknown>;
    calls.push({ url: req.url ?? '', headers: req.headers, body });
    if (match[1] !== project)
      return fail(
        403,
        'PERMISSION_DENIED',
        `Discovery Engine API has not been used in project ${match[1]} before or it is disabled.`,
      );
    const { model, query, records, topN, ignoreRecordDetailsInResponse } = body;
    if (typeof query !== 'string' || query === '') return fail(400, 'INVALID_ARGUMENT', 'query must be set.');
    if (!Array.isArray(records) || records.length === 0 || records.length > 200)
      return fail(400, 'INVALID_ARGUMENT', 'records must hold 1 to 200 records.');
    const ids: string[] = [];
    const texts: string[] = [];
    for (const record of records) {
      if (!isObject(record) || typeof record.id !== 'string' || typeof record.content !== 'string')
        return fail(400, 'INVALID_ARGUMENT', 'Each record needs an id and content.');
      ids.push(record.id);
      texts.push(record.content);
    }
    if (topN !== undefined && (typeof topN !== 'number' || !Number.isInteger(topN) || topN < 0))
      return fail(400, 'INVALID_ARGUMENT', 'topN must be a non-negative integer.');
    const ranked = rank(query, texts, typeof topN === 'number' && topN > 0 ? topN : texts.length);
    sendJson(res, 200, {
      records: ranked.map(({ index, score }) => {
        const record: Record<string, unknown> = { id: model === RENUMBERING_MODEL ? `doc-${ids[index]}` : ids[index] };
        // proto3 JSON leaves out fields at their default: a score of 0 is not written.
        if (score !== 0) record.score = score;
        if (ignoreRecordDetailsInResponse !== true) record.content = texts[index];
        return record;
      }),
    });
  });
  const port = await listen(server);
  return { port, url: `http://127.0.0.1:${port}`, calls, close: () => closeServer(server) };
}
