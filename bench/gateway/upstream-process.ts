// Child process: the upstream mock providers, in their own process so that they do not share an
// event loop with the load generator or a gateway under test. Reports its ports to the parent
// over IPC and runs until the parent disconnects.
import { startAnthropicMock } from '../../test/support/providers/anthropic-mock.ts';
import { startOpenAiMock } from '../../test/support/providers/openai-mock.ts';
import type { UpstreamPorts } from './upstream.ts';

// Nothing reads the request log here: keep one entry so memory stays flat under load.
const log = { maxRecordedRequests: 1 };
const mocks = {
  openaiFixed: await startOpenAiMock({ fixed: true, ...log }),
  openaiStream: await startOpenAiMock(log),
  anthropicFixed: await startAnthropicMock({ fixed: true, ...log }),
  anthropicStream: await startAnthropicMock(log),
};
const ports: UpstreamPorts = {
  openaiFixed: mocks.openaiFixed.port,
  openaiStream: mocks.openaiStream.port,
  anthropicFixed: mocks.anthropicFixed.port,
  anthropicStream: mocks.anthropicStream.port,
};

const shutDown = () => {
  Promise.all(Object.values(mocks).map((mock) => mock.close())).finally(() => process.exit(0));
};
process.on('disconnect', shutDown);
process.on('SIGTERM', shutDown);
process.send!({ ports });
