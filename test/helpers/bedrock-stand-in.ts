// A loopback stand-in for Amazon Bedrock's runtime Converse API: POST /model/{modelId}/converse
// answers Converse JSON, /converse-stream the same answer as ConverseStream events in AWS
// event-stream frames (written with @smithy/eventstream-codec, each frame split over several
// writes). Every request must carry a SigV4 signature (service bedrock) that the stand-in
// recomputes with test/helpers/sigv4.ts; it records what it received. The answer: a toolUse when
// the request declares tools and its last message holds no toolResult, else text naming the model;
// with thinking asked for it starts with signed reasoning, and a tool turn without it is refused
// as Claude on Bedrock refuses it (bedrock-thinking.ts); a request with a guardrailConfig whose last
// message speaks of GUARDED_TOPIC is answered as Bedrock answers a guardrail's intervention: the
// blocked message, stopReason guardrail_intervened.
// Tests prove it with @aws-sdk/client-bedrock-runtime before pointing gw at it. InvokeModel of
// embedding models and CountTokens: bedrock-model-operations.ts.
import { createServer } from 'node:http';
import { BedrockRuntimeClient } from '@aws-sdk/client-bedrock-runtime';
import { EventStreamCodec } from '@smithy/eventstream-codec';
import { NodeHttpHandler } from '@smithy/node-http-handler';
import { bedrockModelOperation } from './bedrock-model-operations.ts';
import {
  converseReasoningSignatureOf,
  converseReasoningText,
  converseThinkingRefusal,
  converseThinkingRequested,
} from './bedrock-thinking.ts';
import { closeServer, listen } from './http-server.ts';
import { type Sigv4Secrets, type Verified, verifySigv4 } from './sigv4.ts';

export interface BedrockCall {
  /** The request target as received (still encoded). */
  url: string;
  /** The model id, decoded from the path. */
  modelId: string;
  stream: boolean;
  body: Record<string, unknown>;
  verified: Verified;
}

export interface BedrockStandIn {
  port: number;
  url: string;
  calls: BedrockCall[];
  /** Requests refused for their signature, with the reason. */
  refused: string[];
  close(): Promise<void>;
}

const codec = new EventStreamCodec(
  (bytes) => new TextDecoder().decode(bytes),
  (text) => new TextEncoder().encode(text),
);

/** One ConverseStream event frame. */
export function eventFrame(type: string, payload: unknown): Uint8Array {
  return codec.encode({
    headers: {
      ':message-type': { type: 'string', value: 'event' },
      ':event-type': { type: 'string', value: type },
      ':content-type': { type: 'string', value: 'application/json' },
    },
    body: new TextEncoder().encode(JSON.stringify(payload)),
  });
}

/** An exception frame, as Bedrock ends a stream that failed. */
export function exceptionFrame(type: string, message: string): Uint8Array {
  return codec.encode({
    headers: {
      ':message-type': { type: 'string', value: 'exception' },
      ':exception-type': { type: 'string', value: type },
      ':content-type': { type: 'string', value: 'application/json' },
    },
    body: new TextEncoder().encode(JSON.stringify({ message })),
  });
}

const USAGE = { inputTokens: 11, outputTokens: 7, totalTokens: 21, cacheReadInputTokens: 3 };

/** The topic a request's guardrail (guardrailConfig) blocks, and what Bedrock answers instead. */
export const GUARDED_TOPIC = 'stock tips';
export const GUARDRAIL_BLOCKED_MESSAGE = 'Sorry, the model cannot answer this question.';

function guardrailIntervenes(body: Record<string, unknown>): boolean {
  if (body.guardrailConfig === undefined) return false;
  const last = (body.messages as { content: Record<string, unknown>[] }[]).at(-1);
  return last?.content.some((block) => typeof block.text === 'string' && block.text.includes(GUARDED_TOPIC)) ?? false;
}

function wantsTool(body: Record<string, unknown>): { name: string } | undefined {
  const tools = (body.toolConfig as { tools?: { toolSpec: { name: string } }[] } | undefined)?.tools;
  const messages = body.messages as { content: Record<string, unknown>[] }[];
  const last = messages.at(-1);
  if (!tools?.length || last?.content.some((block) => 'toolResult' in block)) return undefined;
  return { name: tools[0]!.toolSpec.name };
}

/** The Converse answer to a request; `thinking`: it starts with signed reasoning. */
export function converseAnswer(
  modelId: string,
  body: Record<string, unknown>,
  thinking = converseThinkingRequested(body),
): Record<string, unknown> {
  if (guardrailIntervenes(body))
    return {
      output: { message: { role: 'assistant', content: [{ text: GUARDRAIL_BLOCKED_MESSAGE }] } },
      stopReason: 'guardrail_intervened',
      usage: { inputTokens: 11, outputTokens: 0, totalTokens: 11 },
      metrics: { latencyMs: 5 },
    };
  const tool = wantsTool(body);
  const content: Record<string, unknown>[] = tool
    ? [{ toolUse: { toolUseId: 'tooluse_1', name: tool.name, input: { city: 'Paris' } } }]
    : [{ text: `Hello from ${modelId}` }];
  if (thinking) {
    const text = converseReasoningText(body);
    content.unshift({ reasoningContent: { reasoningText: { text, signature: converseReasoningSignatureOf(text) } } });
  }
  return {
    output: { message: { role: 'assistant', content } },
    stopReason: tool ? 'tool_use' : 'end_turn',
    usage: USAGE,
    metrics: { latencyMs: 5 },
  };
}

/** The same answer as ConverseStream event frames. */
export function converseStreamFrames(
  modelId: string,
  body: Record<string, unknown>,
  thinking = converseThinkingRequested(body),
): Uint8Array[] {
  const tool = wantsTool(body);
  const frames = [eventFrame('messageStart', { role: 'assistant' })];
  if (guardrailIntervenes(body)) {
    frames.push(
      eventFrame('contentBlockDelta', { contentBlockIndex: 0, delta: { text: GUARDRAIL_BLOCKED_MESSAGE } }),
      eventFrame('contentBlockStop', { contentBlockIndex: 0 }),
      eventFrame('messageStop', { stopReason: 'guardrail_intervened' }),
      eventFrame('metadata', {
        usage: { inputTokens: 11, outputTokens: 0, totalTokens: 11 },
        metrics: { latencyMs: 5 },
      }),
    );
    return frames;
  }
  let index = 0;
  if (thinking) {
    // Reasoning text in two deltas, then its signature, in a block of its own.
    const text = converseReasoningText(body);
    const half = Math.floor(text.length / 2);
    for (const piece of [text.slice(0, half), text.slice(half)]) {
      frames.push(
        eventFrame('contentBlockDelta', { contentBlockIndex: index, delta: { reasoningContent: { text: piece } } }),
      );
    }
    const signature = converseReasoningSignatureOf(text);
    frames.push(
      eventFrame('contentBlockDelta', { contentBlockIndex: index, delta: { reasoningContent: { signature } } }),
      eventFrame('contentBlockStop', { contentBlockIndex: index }),
    );
    index++;
  }
  if (tool) {
    frames.push(
      eventFrame('contentBlockStart', {
        contentBlockIndex: index,
        start: { toolUse: { toolUseId: 'tooluse_1', name: tool.name } },
      }),
      eventFrame('contentBlockDelta', { contentBlockIndex: index, delta: { toolUse: { input: '{"city":' } } }),
      eventFrame('contentBlockDelta', { contentBlockIndex: index, delta: { toolUse: { input: '"Paris"}' } } }),
      eventFrame('contentBlockStop', { contentBlockIndex: index }),
    );
  } else {
    frames.push(
      eventFrame('contentBlockDelta', { contentBlockIndex: index, delta: { text: 'Hello from ' } }),
      eventFrame('contentBlockDelta', { contentBlockIndex: index, delta: { text: modelId } }),
      eventFrame('contentBlockStop', { contentBlockIndex: index }),
    );
  }
  frames.push(
    eventFrame('messageStop', { stopReason: tool ? 'tool_use' : 'end_turn' }),
    eventFrame('metadata', { usage: USAGE, metrics: { latencyMs: 5 } }),
  );
  return frames;
}

const PATH = /^\/model\/([^/]+)\/(converse|converse-stream|invoke|count-tokens)$/;

export async function startBedrockStandIn(secrets: Sigv4Secrets): Promise<BedrockStandIn> {
  const calls: BedrockCall[] = [];
  const refused: string[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', async () => {
      const received = {
        method: req.method ?? 'GET',
        url: req.url ?? '/',
        headers: req.headers,
        body: Buffer.concat(chunks),
      };
      const answer = (status: number, body: unknown, type = 'application/json') => {
        res.writeHead(status, { 'content-type': type, 'x-amzn-requestid': 'req-1' });
        res.end(JSON.stringify(body));
      };
      let verified: Verified;
      try {
        verified = verifySigv4(received, { secrets, service: 'bedrock' });
      } catch (error) {
        refused.push((error as Error).message);
        return answer(403, {
          message: 'The request signature we calculated does not match the signature you provided.',
        });
      }
      const match = PATH.exec(received.url);
      if (received.method !== 'POST' || !match) return answer(404, { message: 'Unknown operation' });
      const modelId = decodeURIComponent(match[1]!);
      const stream = match[2] === 'converse-stream';
      const body = JSON.parse(received.body.toString('utf8')) as Record<string, unknown>;
      calls.push({ url: received.url, modelId, stream, body, verified });
      if (match[2] === 'invoke' || match[2] === 'count-tokens') {
        const operation = bedrockModelOperation(match[2], modelId, body);
        res.writeHead(operation.status, {
          'content-type': 'application/json',
          'x-amzn-requestid': 'req-1',
          ...operation.headers,
        });
        res.end(JSON.stringify(operation.body));
        return;
      }
      if (!Array.isArray(body.messages)) return answer(400, { message: 'messages is required' });
      const thinking = converseThinkingRequested(body);
      const refusal = converseThinkingRefusal(body, thinking);
      if (refusal !== undefined) {
        res.writeHead(400, { 'content-type': 'application/json', 'x-amzn-errortype': 'ValidationException' });
        res.end(JSON.stringify({ message: refusal }));
        return;
      }
      if (!stream) return answer(200, converseAnswer(modelId, body, thinking));
      res.writeHead(200, { 'content-type': 'application/vnd.amazon.eventstream', 'x-amzn-requestid': 'req-1' });
      for (const frame of converseStreamFrames(modelId, body, thinking)) {
        // Split each frame in three writes, so that readers must put frames together.
        const third = Math.max(1, Math.floor(frame.byteLength / 3));
        for (const piece of [frame.subarray(0, third), frame.subarray(third, 2 * third), frame.subarray(2 * third)]) {
          res.write(piece);
          await new Promise((resolve) => setImmediate(resolve));
        }
      }
      res.end();
    });
  });
  const port = await listen(server);
  return { port, url: `http://127.0.0.1:${port}`, calls, refused, close: () => closeServer(server) };
}

/** The AWS SDK's client pointed at the stand-in, signing for `region` with `credentials`. */
export function standInClient(
  standIn: Pick<BedrockStandIn, 'url'>,
  region: string,
  credentials: { accessKeyId: string; secretAccessKey: string },
): BedrockRuntimeClient {
  return new BedrockRuntimeClient({
    endpoint: standIn.url,
    region,
    credentials,
    maxAttempts: 1,
    // The stand-in speaks HTTP/1.1; the SDK would stream over HTTP/2.
    requestHandler: new NodeHttpHandler(),
  });
}
