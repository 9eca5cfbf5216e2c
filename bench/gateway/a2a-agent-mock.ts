// A fast local A2A agent for the a2a route of the tunnel benchmark: a plain node http server that
// answers every request with one fixed A2A v1.0 SendMessage result (a completed task with a short
// artifact), and the request that asks for it. It answers as the OpenAI mock the direct route ends
// at does in fixed mode (provider-mocks.ts fixedServer: at once, headers built once, the same
// keep-alive), so that the two routes differ by gw's work only.
import { fixedAnswer, fixedServer, type ProviderMock, started } from './provider-mocks.ts';

/** The path the agent serves JSON-RPC at (its card would name it). */
export const A2A_RPC_PATH = '/a2a/jsonrpc';

/** A SendMessage call as @a2a-js/sdk 1.x sends it (about 230 bytes). */
export const A2A_SEND_BODY = JSON.stringify({
  jsonrpc: '2.0',
  id: 1,
  method: 'SendMessage',
  params: {
    message: {
      messageId: '6f1c2d3e-4b5a-4c6d-8e7f-001122334455',
      role: 'ROLE_USER',
      parts: [{ text: 'Summarise the open incidents of the payments service in one paragraph.' }],
    },
  },
});

export const A2A_HEADERS: Record<string, string> = { 'content-type': 'application/json', 'a2a-version': '1.0' };

const ANSWER = JSON.stringify({
  jsonrpc: '2.0',
  id: 1,
  result: {
    task: {
      id: 'task-0001',
      contextId: 'ctx-0001',
      status: { state: 'TASK_STATE_COMPLETED', timestamp: '2026-01-01T00:00:00.000Z' },
      artifacts: [{ artifactId: 'answer', parts: [{ text: 'No incident is open for the payments service.' }] }],
    },
  },
});

export function startA2aAgentMock(): Promise<ProviderMock> {
  const answer = fixedAnswer('application/json', Buffer.from(ANSWER));
  return started(fixedServer(() => answer));
}
