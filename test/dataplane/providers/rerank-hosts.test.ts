// Where a rerank request of a cloud family goes: Bedrock's (zeta) to Bedrock Agent Runtime's host,
// Vertex AI's (epsilon) to Discovery Engine's, each with a connection pool of its own whose TLS
// names that host (SNI) and whose requests carry it as Host; chat requests keep the family's host;
// a host the provider names takes every request. Real traffic to the stand-ins (with a host
// override) is test/dataplane/gateway/rerank-clouds.test.ts.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { LLMProvider } from '../../../src/api/types/llm-provider.ts';
import { compileEndpoint, type ProviderEndpoint, upstreamClient } from '../../../src/dataplane/ai/endpoint.ts';
import type { BackendCompileContext } from '../../../src/dataplane/backends/backend.ts';
import type { UpstreamClient } from '../../../src/dataplane/upstream/client.ts';
import type { ConnectionSettings } from '../../../src/dataplane/upstream/connection-settings.ts';
import { CHAT_BODY, compiled, input, planned, RERANK_BODY, refused } from './helpers.ts';

const VERTEX_RANK = '/v1/projects/p1/locations/global/rankingConfigs/default_ranking_config:rank';

describe('the hosts of rerank requests on zeta and epsilon', () => {
  it('zeta: /rerank on bedrock-agent-runtime.{region}, chat on bedrock-runtime, a named host for both', () => {
    const zeta = compiled({ zeta: { region: 'eu-west-1' } });
    const rerank = planned(zeta, input('rerank', RERANK_BODY));
    assert.deepEqual(rerank.origin, {
      protocol: 'https:',
      host: 'bedrock-agent-runtime.eu-west-1.amazonaws.com',
      port: 443,
    });
    assert.deepEqual([rerank.method, rerank.path, rerank.providerFormat], ['POST', '/rerank', 'rerank']);
    assert.equal(rerank.response.kind, 'convert');
    assert.equal(planned(zeta, input('completions', CHAT_BODY)).origin.host, 'bedrock-runtime.eu-west-1.amazonaws.com');
    assert.deepEqual(zeta.routeOrigins, [rerank.origin]);
    const named = compiled({ zeta: { region: 'eu-west-1' }, host: 'bedrock.internal', port: 8443 });
    assert.deepEqual(planned(named, input('rerank', RERANK_BODY)).origin, named.origin);
    // A port alone keeps the rerank API's host.
    const ported = compiled({ zeta: {}, port: 8080 });
    assert.deepEqual(planned(ported, input('rerank', RERANK_BODY)).origin, {
      protocol: 'http:',
      host: 'bedrock-agent-runtime.us-east-1.amazonaws.com',
      port: 8080,
    });
  });

  it('epsilon: the ranking API on discoveryengine.googleapis.com under the project and region', () => {
    const epsilon = compiled({ epsilon: { projectId: 'p1' } });
    const rerank = planned(epsilon, input('rerank', { ...RERANK_BODY, model: 'semantic-ranker-fast-004' }));
    assert.deepEqual(rerank.origin, { protocol: 'https:', host: 'discoveryengine.googleapis.com', port: 443 });
    assert.equal(rerank.path, VERTEX_RANK);
    assert.equal(rerank.upstreamModel, 'semantic-ranker-fast-004');
    assert.equal(planned(epsilon, input('completions', CHAT_BODY)).origin.host, 'aiplatform.googleapis.com');
    const us = planned(compiled({ epsilon: { projectId: 'p1', region: 'us' } }), input('rerank', RERANK_BODY));
    assert.equal(us.path, '/v1/projects/p1/locations/us/rankingConfigs/default_ranking_config:rank');
    const named = compiled({ epsilon: { projectId: 'p1' }, host: 'vertex.internal' });
    assert.equal(planned(named, input('rerank', RERANK_BODY)).origin.host, 'vertex.internal');
  });

  it('a configured path (the chat endpoint) and a missing model refuse a rerank request, naming why', () => {
    assert.match(
      refused(compiled({ zeta: {}, path: '/custom/converse' }), input('rerank', RERANK_BODY)).message,
      /configured path is its Converse endpoint; reranking is served only at Bedrock Agent Runtime's \/rerank/,
    );
    assert.match(
      refused(compiled({ epsilon: { projectId: 'p1' }, path: '/x' }), input('rerank', RERANK_BODY)).message,
      /configured path is its Gemini endpoint; reranking/,
    );
    const { model: _model, ...noModel } = RERANK_BODY;
    assert.match(refused(compiled({ zeta: {} }), input('rerank', noModel)).message, /must name a model/);
  });

  it('the endpoint opens a pool for the rerank host: its TLS names that host, as its Host header does', () => {
    const opened: ConnectionSettings[] = [];
    const context = {
      gateway: 'default/ai',
      data: () => undefined,
      backends: {},
      models: {},
      client: (settings: ConnectionSettings) => {
        opened.push(settings);
        return { settings } as unknown as UpstreamClient;
      },
      report: () => {},
    } as unknown as BackendCompileContext;
    const endpointOf = (provider: LLMProvider) => {
      const endpoint = compileEndpoint(
        { name: 'p', ...provider },
        { auth: { key: 'k' } },
        { namespace: 'default', context },
      );
      assert.ok('provider' in endpoint, JSON.stringify(endpoint));
      return endpoint as ProviderEndpoint;
    };
    const settingsOf = (client: UpstreamClient) => (client as unknown as { settings: ConnectionSettings }).settings;
    for (const [provider, chatHost, rerankHost] of [
      [
        { zeta: { region: 'us-west-2' } },
        'bedrock-runtime.us-west-2.amazonaws.com',
        'bedrock-agent-runtime.us-west-2.amazonaws.com',
      ],
      [{ epsilon: { projectId: 'p1' } }, 'aiplatform.googleapis.com', 'discoveryengine.googleapis.com'],
    ] as const) {
      const endpoint = endpointOf(provider);
      const rerank = settingsOf(
        upstreamClient(endpoint, planned(endpoint.provider, input('rerank', RERANK_BODY)).origin),
      );
      assert.equal(rerank.origin, `https://${rerankHost}:443`);
      assert.equal(rerank.socket.host, rerankHost);
      assert.equal(rerank.socket.tls?.servername, rerankHost);
      assert.equal(rerank.http1?.hostHeader, rerankHost);
      const chat = settingsOf(
        upstreamClient(endpoint, planned(endpoint.provider, input('completions', CHAT_BODY)).origin),
      );
      assert.equal(chat.socket.tls?.servername, chatHost);
      assert.equal(chat.http1?.hostHeader, chatHost);
    }
    // A named host serves every request: one pool.
    opened.length = 0;
    const named = endpointOf({ zeta: {}, host: 'bedrock.internal' });
    assert.equal(opened.length, 1);
    assert.equal(named.routeClients, undefined);
  });
});
