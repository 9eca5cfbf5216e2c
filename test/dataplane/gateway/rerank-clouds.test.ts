// The Rerank route type on the cloud families: zeta (Amazon Bedrock Agent Runtime's Rerank) and
// epsilon (Vertex AI's ranking API). Each stand-in (test/support/providers/cloud-ranking-stand-ins.ts)
// is first proven in its vendor's wire format by the vendor's own client — @aws-sdk/client-bedrock-agent-runtime's
// RerankCommand (SigV4 recomputed by the stand-in) and @google-cloud/discoveryengine's RankServiceClient
// over its REST transport — then a plain fetch Cohere-style client reaches it through gw, which
// translates the request and the answer, signs for bedrock (or sends the access token), echoes the
// documents when asked, records the rerank operation (neither API reports usage) and words the
// provider's errors and its own in Cohere's {"message"} shape.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { BedrockAgentRuntimeClient, RerankCommand } from '@aws-sdk/client-bedrock-agent-runtime';
import { RankServiceClient } from '@google-cloud/discoveryengine';
import { NodeHttpHandler } from '@smithy/node-http-handler';
import {
  aiBackendYaml,
  freePort,
  gatewayYaml,
  lastAccessLogLine,
  llmRouteYaml,
  startTestGateway,
  type TestGateway,
} from '../../helpers/gateway.ts';
import { restClientOptions } from '../../helpers/google-stand-ins.ts';
import { authBackendYaml } from '../../helpers/objects.ts';
import {
  type BedrockRankingStandIn,
  type RankingStandIn,
  startBedrockRankingStandIn,
  startVertexRankingStandIn,
} from '../../support/providers/cloud-ranking-stand-ins.ts';

const KEYS = { accessKeyId: 'AKIDRERANK', secretAccessKey: 'rerank/secret+key' };
const REGION = 'us-west-2';
const BEDROCK_MODEL = 'cohere.rerank-v3-5:0';
const PROJECT = 'my-project';
const TOKEN = 'ya29.rerank-access-token';
const RANKER = 'semantic-ranker-default@latest';
const QUERY = 'What is the capital of France?';
const DOCUMENTS = [
  'Berlin is the capital of Germany.',
  'Paris is the capital of France.',
  'Bananas are yellow.',
  'France has the Eiffel tower.',
];

type RankClientOptions = NonNullable<ConstructorParameters<typeof RankServiceClient>[0]>;

/** A Bedrock Rerank body for QUERY over DOCUMENTS, 2 results of BEDROCK_MODEL, `more` in its model configuration. */
function bedrockRerankBody(more: Record<string, unknown>) {
  return {
    queries: [{ type: 'TEXT' as const, textQuery: { text: QUERY } }],
    sources: DOCUMENTS.map((text) => ({
      type: 'INLINE' as const,
      inlineDocumentSource: { type: 'TEXT' as const, textDocument: { text } },
    })),
    rerankingConfiguration: {
      type: 'BEDROCK_RERANKING_MODEL' as const,
      bedrockRerankingConfiguration: {
        numberOfResults: 2,
        modelConfiguration: { modelArn: `arn:aws:bedrock:${REGION}::foundation-model/${BEDROCK_MODEL}`, ...more },
      },
    },
  };
}

interface CohereAnswer {
  id?: string;
  results: { index: number; relevance_score: number; document?: { text: string } }[];
  meta?: unknown;
}

/** A 200 Cohere answer ranking DOCUMENTS in `order`, each result with its document echoed. */
async function rankedDocuments(response: Response, order: number[]): Promise<CohereAnswer> {
  assert.equal(response.status, 200);
  const answer = (await response.json()) as CohereAnswer;
  assert.deepEqual(
    answer.results.map((result) => [result.index, result.document?.text]),
    order.map((index) => [index, DOCUMENTS[index]]),
  );
  return answer;
}

describe('Rerank on zeta (Bedrock) and epsilon (Vertex AI) through gw', () => {
  let bedrock: BedrockRankingStandIn;
  let vertex: RankingStandIn;
  let gw: TestGateway;
  let port: number;
  const rerank = (path: string, body: unknown) =>
    fetch(`http://127.0.0.1:${port}${path}`, {
      method: 'POST',
      headers: { authorization: 'Bearer client-token', 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });

  before(async () => {
    bedrock = await startBedrockRankingStandIn((id) =>
      id === KEYS.accessKeyId ? { secretAccessKey: KEYS.secretAccessKey } : undefined,
    );
    vertex = await startVertexRankingStandIn(PROJECT, TOKEN);
    port = await freePort();
    gw = await startTestGateway({
      'gateway.yaml': [
        gatewayYaml(port),
        `apiVersion: v1
kind: Secret
metadata: {name: aws}
stringData: {accessKey: ${KEYS.accessKeyId}, secretKey: "${KEYS.secretAccessKey}"}
---
`,
        authBackendYaml(
          'bedrock',
          `ai: {provider: {host: 127.0.0.1, port: ${bedrock.port}, zeta: {region: ${REGION}}}}`,
          '{cloudone: {secretRef: {name: aws}}}',
        ),
        aiBackendYaml('vertex', vertex.port, `epsilon: {projectId: ${PROJECT}}`, TOKEN, undefined),
        aiBackendYaml('elsewhere', vertex.port, 'epsilon: {projectId: other-project}', TOKEN, undefined),
        llmRouteYaml(['bedrock', 'vertex', 'elsewhere']),
      ].join(''),
    });
  });

  after(async () => {
    await gw?.stop();
    await bedrock?.close();
    await vertex?.close();
  });

  it("the Bedrock stand-in reranks as the AWS SDK's RerankCommand expects, and refuses an unknown model as Bedrock does", async () => {
    const client = new BedrockAgentRuntimeClient({
      endpoint: bedrock.url,
      region: REGION,
      credentials: KEYS,
      maxAttempts: 1,
      requestHandler: new NodeHttpHandler(),
    });
    const answer = await client.send(new RerankCommand(bedrockRerankBody({})));
    assert.deepEqual(
      answer.results?.map((result) => result.index),
      [1, 0],
    );
    assert.ok((answer.results?.[0]?.relevanceScore ?? 0) > (answer.results?.[1]?.relevanceScore ?? 1));
    const call = bedrock.calls.at(-1)!;
    assert.equal(call.verified.service, 'bedrock');
    assert.equal(call.verified.region, REGION);
    // The body the AWS SDK writes: gw's is checked against the same below.
    assert.deepEqual(call.body, bedrockRerankBody({}));
    await assert.rejects(
      client.send(
        new RerankCommand({
          queries: [{ type: 'TEXT', textQuery: { text: QUERY } }],
          sources: [{ type: 'INLINE', inlineDocumentSource: { type: 'TEXT', textDocument: { text: 'x' } } }],
          rerankingConfiguration: {
            type: 'BEDROCK_RERANKING_MODEL',
            bedrockRerankingConfiguration: {
              modelConfiguration: { modelArn: `arn:aws:bedrock:${REGION}::foundation-model/no.such-model` },
            },
          },
        }),
      ),
      (error: Error) => error.name === 'ValidationException' && /model identifier is invalid/.test(error.message),
    );
    assert.deepEqual(bedrock.refused, []);
  });

  it('gw reranks on Bedrock: the Cohere request translated and signed for bedrock, the answer in Cohere shape, no usage', async () => {
    const before = bedrock.calls.length;
    const response = await rerank('/bedrock/v1/rerank', {
      model: BEDROCK_MODEL,
      query: QUERY,
      documents: DOCUMENTS,
      top_n: 2,
      return_documents: true,
      max_tokens_per_doc: 512,
    });
    const answer = await rankedDocuments(response, [1, 0]);
    assert.ok(answer.results[0]!.relevance_score > answer.results[1]!.relevance_score);
    assert.equal(bedrock.calls.length, before + 1);
    const call = bedrock.calls.at(-1)!;
    assert.deepEqual(call.body, bedrockRerankBody({ additionalModelRequestFields: { max_tokens_per_doc: 512 } }));
    // Signed with gw's key for bedrock in the provider's region; the explicit host took the request.
    assert.equal(call.verified.accessKeyId, KEYS.accessKeyId);
    assert.equal(call.verified.service, 'bedrock');
    assert.equal(call.verified.region, REGION);
    assert.equal(call.headers.host, `127.0.0.1:${bedrock.port}`);
    assert.deepEqual(bedrock.refused, []);
    const line = await lastAccessLogLine(gw, '/bedrock/v1/rerank');
    assert.equal(line['gen_ai.operation.name'], 'rerank');
    assert.equal(line['gen_ai.request.model'], BEDROCK_MODEL);
    assert.equal(line['gen_ai.usage.input_tokens'], undefined);
  });

  it('Bedrock: a full model ARN goes as it is, top_n absent asks for every document, without documents echoed', async () => {
    const arn = `arn:aws:bedrock:${REGION}::foundation-model/amazon.rerank-v1:0`;
    const response = await rerank('/bedrock/v1/rerank', { model: arn, query: QUERY, documents: DOCUMENTS });
    assert.equal(response.status, 200);
    const answer = (await response.json()) as CohereAnswer;
    assert.equal(answer.results.length, DOCUMENTS.length);
    assert.equal(answer.results[0]!.document, undefined);
    const config = (bedrock.calls.at(-1)!.body.rerankingConfiguration as Record<string, Record<string, unknown>>)
      .bedrockRerankingConfiguration!;
    assert.equal((config.modelConfiguration as { modelArn: string }).modelArn, arn);
    assert.equal(config.numberOfResults, DOCUMENTS.length);
  });

  it("Bedrock's errors reach the client in Cohere's shape; gw refuses empty documents itself", async () => {
    let response = await rerank('/bedrock/v1/rerank', { model: 'no.such-model', query: QUERY, documents: DOCUMENTS });
    assert.equal(response.status, 400);
    assert.deepEqual(await response.json(), { message: 'The provided model identifier is invalid: no.such-model' });
    const before = bedrock.calls.length;
    response = await rerank('/bedrock/v1/rerank', { model: BEDROCK_MODEL, query: QUERY, documents: [] });
    assert.equal(response.status, 400);
    const refused = (await response.json()) as Record<string, unknown>;
    assert.deepEqual(Object.keys(refused), ['message']);
    assert.match(refused.message as string, /"documents" must list at least one document/);
    response = await rerank('/bedrock/v1/rerank', { model: BEDROCK_MODEL, query: QUERY, documents: ['a', 7] });
    assert.equal(response.status, 400);
    assert.match(((await response.json()) as { message: string }).message, /documents\[1\] must be a string/);
    assert.equal(bedrock.calls.length, before);
  });

  it('the Vertex stand-in ranks as the Discovery Engine client (REST transport) expects', async () => {
    const client = new RankServiceClient(restClientOptions(vertex.port, TOKEN) as unknown as RankClientOptions);
    try {
      const [answer] = await client.rank({
        rankingConfig: client.rankingConfigPath(PROJECT, 'global', 'default_ranking_config'),
        model: RANKER,
        query: QUERY,
        records: DOCUMENTS.map((content, index) => ({ id: String(index), content })),
        topN: 3,
        ignoreRecordDetailsInResponse: true,
      });
      assert.deepEqual(
        answer.records?.map((record) => record.id),
        ['1', '0', '3'],
      );
      assert.ok((answer.records?.[0]?.score ?? 0) > (answer.records?.[2]?.score ?? 1));
      assert.equal(answer.records?.[0]?.content ?? '', '');
      const call = vertex.calls.at(-1)!;
      assert.equal(
        call.url.split('?')[0],
        `/v1/projects/${PROJECT}/locations/global/rankingConfigs/default_ranking_config:rank`,
      );
      assert.equal(call.headers.authorization, `Bearer ${TOKEN}`);
      // The body Google's own client writes (with an empty userLabels map, which gw leaves out):
      // the shape gw's is checked against below.
      const { userLabels, ...written } = call.body;
      assert.deepEqual(userLabels, {});
      assert.deepEqual(written, {
        model: RANKER,
        query: QUERY,
        records: DOCUMENTS.map((content, index) => ({ id: String(index), content })),
        topN: 3,
        ignoreRecordDetailsInResponse: true,
      });
    } finally {
      await client.close();
    }
  });

  it('gw ranks on Vertex AI: the Cohere request as a RankRequest under the project, ids read back as indexes', async () => {
    const response = await rerank('/vertex/v1/rerank', {
      model: RANKER,
      query: QUERY,
      documents: [...DOCUMENTS.slice(0, 3), { text: DOCUMENTS[3] }],
      top_n: 4,
      return_documents: true,
    });
    const answer = await rankedDocuments(response, [1, 0, 3, 2]);
    // The stand-in leaves out a score of 0, as proto3 JSON does: it reads as 0.
    assert.equal(answer.results[3]!.relevance_score, 0);
    const call = vertex.calls.at(-1)!;
    assert.equal(call.url, `/v1/projects/${PROJECT}/locations/global/rankingConfigs/default_ranking_config:rank`);
    assert.equal(call.headers.authorization, `Bearer ${TOKEN}`);
    assert.deepEqual(call.body, {
      model: RANKER,
      query: QUERY,
      records: DOCUMENTS.map((content, index) => ({ id: String(index), content })),
      topN: 4,
      ignoreRecordDetailsInResponse: true,
    });
    const line = await lastAccessLogLine(gw, '/vertex/v1/rerank');
    assert.equal(line['gen_ai.operation.name'], 'rerank');
    assert.equal(line['gen_ai.request.model'], RANKER);
    assert.equal(line['gen_ai.usage.input_tokens'], undefined);
  });

  it("Vertex AI's errors in Cohere's shape; an answer naming no document it was sent is a 502", async () => {
    let response = await rerank('/elsewhere/v1/rerank', { model: RANKER, query: QUERY, documents: DOCUMENTS });
    assert.equal(response.status, 403);
    assert.deepEqual(await response.json(), {
      message: 'Discovery Engine API has not been used in project other-project before or it is disabled.',
    });
    response = await rerank('/vertex/v1/rerank', {
      model: 'semantic-ranker-renumbered@latest',
      query: QUERY,
      documents: DOCUMENTS,
    });
    assert.equal(response.status, 502);
    assert.match(((await response.json()) as { message: string }).message, /records\[0\] has the id "doc-1"/);
    response = await rerank('/vertex/v1/rerank', { query: QUERY, documents: DOCUMENTS });
    assert.equal(response.status, 400);
    assert.match(((await response.json()) as { message: string }).message, /must name a ranking model/);
  });
});
