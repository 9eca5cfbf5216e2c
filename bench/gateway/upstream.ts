// The upstream providers of the benchmark, run in a child process (upstream-process.ts).
import { fileURLToPath } from 'node:url';
import { type ChildHandle, spawnChild } from './child-process.ts';

export interface UpstreamPorts {
  /** OpenAI mock in fixed mode: every chat completion is the same 1 KiB answer with usage. */
  openaiFixed: number;
  /** OpenAI mock in normal mode, for streaming (time to first token). */
  openaiStream: number;
  /** Anthropic mock in fixed mode: every message is the same 1 KiB answer with usage. */
  anthropicFixed: number;
  /** Anthropic mock in normal mode, for streaming. */
  anthropicStream: number;
  /** An OAuth token endpoint that answers every token exchange with one token valid for an hour. */
  tokenEndpoint: number;
  /** Amazon Bedrock (Converse, ConverseStream) with one fixed answer each. */
  bedrock: number;
  /** The Gemini API (generateContent, streamGenerateContent) with one fixed answer each. */
  gemini: number;
  /** An A2A agent answering every JSON-RPC call with one fixed SendMessage result (a2a-agent-mock.ts). */
  a2aAgent: number;
}

export interface Upstream {
  ports: UpstreamPorts;
  pid: number;
  stop(): Promise<void>;
}

const upstreamProcess = fileURLToPath(new URL('./upstream-process.ts', import.meta.url));

export async function startUpstream(): Promise<Upstream> {
  const child: ChildHandle = spawnChild('upstream mocks', process.execPath, [upstreamProcess], { ipc: true });
  try {
    const { ports } = (await child.nextMessage()) as { ports: UpstreamPorts };
    return { ports, pid: child.pid, stop: () => child.stop() };
  } catch (error) {
    await child.stop();
    throw error;
  }
}

export function upstreamUrl(port: number): string {
  return `http://127.0.0.1:${port}`;
}
