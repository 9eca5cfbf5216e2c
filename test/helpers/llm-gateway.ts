// gw as an OpenAI-compatible gateway for policy tests: the OpenAI mock behind GwBackend openai,
// served at /v1 by HTTPRoute llm, with the test's policies, and the official SDK pointed at gw.
import OpenAI from 'openai';
import type { MockServer } from '../support/providers/mock-server.ts';
import { startOpenAiMock } from '../support/providers/openai-mock.ts';
import { aiBackendYaml, freePort, gatewayYaml, startTestGateway, type TestGateway } from './gateway.ts';
import { prefixRouteYaml } from './policy-yaml.ts';

/** The key gw sends the mock (clients send their own). */
const UPSTREAM_KEY = 'sk-upstream';

export interface LlmGateway {
  gw: TestGateway;
  /** The OpenAI mock: what reached the provider. */
  provider: MockServer;
  /** An OpenAI client of gw at /v1, without retries. */
  client: OpenAI;
  /** Stops gw, then the mock. */
  stop(): Promise<void>;
}

/** gw in front of the OpenAI mock (chat completions at /v1), with `policies` (YAML documents ending with ---). */
export async function startLlmGateway(policies: string): Promise<LlmGateway> {
  const provider = await startOpenAiMock({ apiKey: UPSTREAM_KEY });
  const port = await freePort();
  const backend = aiBackendYaml(
    'openai',
    provider.port,
    'alpha: {}',
    UPSTREAM_KEY,
    '{/v1/chat/completions: Completions}',
  );
  const gw = await startTestGateway({
    'gateway.yaml': `${gatewayYaml(port)}${backend}${prefixRouteYaml('llm', { prefix: '/v1', backend: 'openai' })}${policies}`,
  });
  return {
    gw,
    provider,
    client: new OpenAI({ apiKey: 'client-key', baseURL: `http://127.0.0.1:${port}/v1`, maxRetries: 0 }),
    stop: async () => {
      await gw.stop();
      await provider.close();
    },
  };
}
