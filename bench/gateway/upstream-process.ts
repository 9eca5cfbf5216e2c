// Child process: the upstream mock providers, in their own process so that they do not share an
// event loop with the load generator or a gateway under test. Reports its ports to the parent
// over IPC and runs until the parent disconnects.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { startAnthropicMock } from '../../test/support/providers/anthropic-mock.ts';
import { startOpenAiMock } from '../../test/support/providers/openai-mock.ts';
import { startA2aAgentMock } from './a2a-agent-mock.ts';
import { startBedrockMock, startGeminiMock } from './provider-mocks.ts';
import type { UpstreamPorts } from './upstream.ts';

// Nothing reads the request log here: keep one entry so memory stays flat under load.
const log = { maxRecordedRequests: 1 };
const mocks = {
  openaiFixed: await startOpenAiMock({ fixed: true, ...log }),
  openaiStream: await startOpenAiMock(log),
  anthropicFixed: await startAnthropicMock({ fixed: true, ...log }),
  anthropicStream: await startAnthropicMock(log),
  bedrock: await startBedrockMock(),
  gemini: await startGeminiMock(),
  a2aAgent: await startA2aAgentMock(),
};
// The authorization server of the token-exchange target: gw caches what it answers, so it sees
// one exchange per gw process and not one per request.
const EXCHANGED_TOKEN = JSON.stringify({
  access_token: 'bench-exchanged-token',
  issued_token_type: 'urn:ietf:params:oauth:token-type:access_token',
  token_type: 'Bearer',
  expires_in: 3600,
});
const tokenEndpoint = createServer((req, res) => {
  req.resume();
  req.on('end', () => {
    res.writeHead(200, { 'content-type': 'application/json', 'cache-control': 'no-store' });
    res.end(EXCHANGED_TOKEN);
  });
});
await new Promise<void>((resolve) => tokenEndpoint.listen(0, '127.0.0.1', resolve));

const ports: UpstreamPorts = {
  openaiFixed: mocks.openaiFixed.port,
  openaiStream: mocks.openaiStream.port,
  anthropicFixed: mocks.anthropicFixed.port,
  anthropicStream: mocks.anthropicStream.port,
  tokenEndpoint: (tokenEndpoint.address() as AddressInfo).port,
  bedrock: mocks.bedrock.port,
  gemini: mocks.gemini.port,
  a2aAgent: mocks.a2aAgent.port,
};

const shutDown = () => {
  tokenEndpoint.closeAllConnections();
  tokenEndpoint.close();
  Promise.all(Object.values(mocks).map((mock) => mock.close())).finally(() => process.exit(0));
};
process.on('disconnect', shutDown);
process.on('SIGTERM', shutDown);
process.send!({ ports });
