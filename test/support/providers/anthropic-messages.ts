// POST /v1/messages (a `message`, or its event stream) and POST /v1/messages/count_tokens.
//
// Extended thinking, as Anthropic has it: with `thinking` enabled the answer starts with a
// thinking block signed by thinkingSignatureOf (streamed as thinking deltas and a signature
// delta), and a request that continues a tool use (its last user turn has tool results) is
// refused with 400 invalid_request_error unless the assistant turn it answers starts with a
// thinking (or redacted_thinking) block; a thinking block anywhere whose signature is not the
// one given for its text is refused too.
import type {
  ContentBlock,
  Message,
  MessageTokensCount,
  RawContentBlockStartEvent,
  RawMessageStreamEvent,
  TextBlock,
  ToolUseBlock,
  Usage,
} from '@anthropic-ai/sdk/resources/messages';
import {
  chunkString,
  countWords,
  echoAnswer,
  isObject,
  limitWords,
  type OfferedTool,
  requestedTools,
  toolArguments,
  wordPieces,
} from './deterministic.ts';
import type { AnswerContext, Reply, SseEvent } from './mock-server.ts';

/** The stream's keep-alive event; the SDK types leave it out because they skip it. */
type PingEvent = { type: 'ping' };

/**
 * A text block as the real API sends it: without `citations` unless there are some. The SDK's
 * TextBlock declares `citations: … | null` and the SDK accepts a null, but other clients (the AI
 * SDK's Anthropic provider, for one) hold a stand-in to the real wire, so the field is left out.
 */
type WireTextBlock = Omit<TextBlock, 'citations'>;
type WireContentBlock = Exclude<ContentBlock, TextBlock> | WireTextBlock;
export type WireMessage = Omit<Message, 'content'> & { content: WireContentBlock[] };
type WireStreamEvent =
  | Exclude<RawMessageStreamEvent, RawContentBlockStartEvent>
  | (Omit<RawContentBlockStartEvent, 'content_block'> & {
      content_block: Exclude<RawContentBlockStartEvent['content_block'], TextBlock> | WireTextBlock;
    });

export function messagesReply(body: Record<string, unknown>, context: AnswerContext): Reply {
  const invalid = requireFields(body, ['model', 'max_tokens', 'messages'], context);
  if (invalid) return invalid;
  const model = body.model as string;
  const unknown = context.unknownModel(model);
  if (unknown) return unknown;

  const thinkingError = checkThinking(body);
  if (thinkingError !== undefined) return context.error({ status: 400, message: thinkingError });
  const conversation = readConversation(body);
  const tools = conversation.mayCallTools ? requestedTools(conversation.text, offeredTools(body.tools)) : [];
  const limit = limitWords(echoAnswer(conversation.text), body.max_tokens as number);
  const toolUses = tools.map(
    (tool): ToolUseBlock => ({
      type: 'tool_use',
      id: context.id('toolu_'),
      name: tool.name,
      input: toolArguments(tool.parameters),
      caller: { type: 'direct' },
    }),
  );
  const content: WireContentBlock[] = toolUses.length > 0 ? toolUses : [textBlock(limit.text)];
  let outputTokens =
    toolUses.length > 0
      ? toolUses.reduce((sum, use) => sum + countWords(`${use.name} ${JSON.stringify(use.input)}`), 0)
      : countWords(limit.text);
  if (thinkingEnabled(body)) {
    const thinking = `thinking about: ${conversation.text}`;
    content.unshift({ type: 'thinking', thinking, signature: thinkingSignatureOf(thinking) });
    outputTokens += countWords(thinking);
  }
  const message: WireMessage = {
    id: context.id('msg_'),
    type: 'message',
    role: 'assistant',
    model,
    content,
    stop_reason: toolUses.length > 0 ? 'tool_use' : limit.cut ? 'max_tokens' : 'end_turn',
    stop_sequence: null,
    stop_details: null,
    container: null,
    diagnostics: null,
    usage: usage(conversation.inputTokens, outputTokens),
  };
  if (body.stream !== true) return { kind: 'json', status: 200, body: message };
  return { kind: 'stream', events: streamEvents(message) };
}

export function countTokensReply(body: Record<string, unknown>, context: AnswerContext): Reply {
  const invalid = requireFields(body, ['model', 'messages'], context);
  if (invalid) return invalid;
  const unknown = context.unknownModel(body.model as string);
  if (unknown) return unknown;
  const count: MessageTokensCount = { input_tokens: readConversation(body).inputTokens };
  return { kind: 'json', status: 200, body: count };
}

/**
 * message_start (content empty, usage with the input tokens), then per block content_block_start,
 * deltas and content_block_stop (a ping after the first start), then message_delta with the stop
 * reason and the output tokens, then message_stop.
 */
function streamEvents(message: WireMessage): SseEvent[] {
  const events: Array<WireStreamEvent | PingEvent> = [];
  events.push({
    type: 'message_start',
    message: {
      ...message,
      content: [],
      stop_reason: null,
      usage: { ...message.usage, output_tokens: 1 },
    },
  });
  message.content.forEach((block, index) => {
    if (block.type === 'text') {
      events.push({ type: 'content_block_start', index, content_block: textBlock('') });
      if (index === 0) events.push({ type: 'ping' });
      for (const text of wordPieces(block.text)) {
        events.push({ type: 'content_block_delta', index, delta: { type: 'text_delta', text } });
      }
    } else if (block.type === 'thinking') {
      events.push({
        type: 'content_block_start',
        index,
        content_block: { type: 'thinking', thinking: '', signature: '' },
      });
      if (index === 0) events.push({ type: 'ping' });
      for (const thinking of wordPieces(block.thinking)) {
        events.push({ type: 'content_block_delta', index, delta: { type: 'thinking_delta', thinking } });
      }
      events.push({
        type: 'content_block_delta',
        index,
        delta: { type: 'signature_delta', signature: block.signature },
      });
    } else if (block.type === 'tool_use') {
      events.push({ type: 'content_block_start', index, content_block: { ...block, input: {} } });
      if (index === 0) events.push({ type: 'ping' });
      // The real API opens every tool input with an empty piece.
      for (const partial_json of ['', ...chunkString(JSON.stringify(block.input))]) {
        events.push({ type: 'content_block_delta', index, delta: { type: 'input_json_delta', partial_json } });
      }
    }
    events.push({ type: 'content_block_stop', index });
  });
  events.push({
    type: 'message_delta',
    delta: { stop_reason: message.stop_reason, stop_sequence: null, stop_details: null, container: null },
    usage: {
      input_tokens: message.usage.input_tokens,
      output_tokens: message.usage.output_tokens,
      cache_creation_input_tokens: 0,
      cache_read_input_tokens: 0,
      output_tokens_details: null,
      server_tool_use: null,
    },
  });
  events.push({ type: 'message_stop' });
  return events.map((event) => ({ event: event.type, data: JSON.stringify(event) }));
}

function textBlock(text: string): WireTextBlock {
  return { type: 'text', text };
}

export function usage(inputTokens: number, outputTokens: number): Usage {
  return {
    input_tokens: inputTokens,
    output_tokens: outputTokens,
    cache_creation_input_tokens: 0,
    cache_read_input_tokens: 0,
    cache_creation: { ephemeral_5m_input_tokens: 0, ephemeral_1h_input_tokens: 0 },
    server_tool_use: null,
    service_tier: 'standard',
    inference_geo: null,
    output_tokens_details: null,
    speed: null,
  };
}

/** The signature the stand-in gives a thinking block (opaque to clients, checked when it comes back). */
export function thinkingSignatureOf(thinking: string): string {
  return Buffer.from(`claude-thinking:${thinking}`).toString('base64');
}

function thinkingEnabled(body: Record<string, unknown>): boolean {
  return isObject(body.thinking) && (body.thinking.type === 'enabled' || body.thinking.type === 'adaptive');
}

/** Why Anthropic would refuse the request's thinking blocks (see the header); undefined when it would not. */
function checkThinking(body: Record<string, unknown>): string | undefined {
  if (!Array.isArray(body.messages)) return undefined;
  const messages = body.messages as unknown[];
  for (const [i, message] of messages.entries()) {
    if (!isObject(message) || message.role !== 'assistant' || !Array.isArray(message.content)) continue;
    for (const [j, block] of message.content.entries()) {
      if (!isObject(block) || block.type !== 'thinking') continue;
      if (typeof block.thinking !== 'string' || block.signature !== thinkingSignatureOf(block.thinking)) {
        return `messages.${i}.content.${j}: Invalid \`signature\` in \`thinking\` block`;
      }
    }
  }
  if (!thinkingEnabled(body)) return undefined;
  const lastUser = messages.findLastIndex((message) => isObject(message) && message.role === 'user');
  const user = messages[lastUser];
  const continuesToolUse =
    isObject(user) && Array.isArray(user.content) && user.content.some((b) => isObject(b) && b.type === 'tool_result');
  const answered = messages[lastUser - 1];
  if (!continuesToolUse || !isObject(answered) || answered.role !== 'assistant') return undefined;
  const first = Array.isArray(answered.content) ? answered.content[0] : undefined;
  if (isObject(first) && (first.type === 'thinking' || first.type === 'redacted_thinking')) return undefined;
  const found = isObject(first) ? String(first.type) : 'text';
  return `messages.${lastUser - 1}.content.0.type: Expected \`thinking\` or \`redacted_thinking\`, but found \`${found}\`. When \`thinking\` is enabled, a final \`assistant\` message must start with a thinking block.`;
}

/** Anthropic's validation message for a missing field: "<field>: Field required". */
function requireFields(body: Record<string, unknown>, fields: string[], context: AnswerContext): Reply | undefined {
  for (const field of fields) {
    if (body[field] === undefined) return context.error({ status: 400, message: `${field}: Field required` });
  }
  if (typeof body.model !== 'string' || body.model === '') {
    return context.error({ status: 400, message: 'model: Input should be a valid string' });
  }
  if (fields.includes('max_tokens') && (!Number.isInteger(body.max_tokens) || (body.max_tokens as number) < 1)) {
    return context.error({ status: 400, message: 'max_tokens: Input should be a positive integer' });
  }
  if (!Array.isArray(body.messages)) {
    return context.error({ status: 400, message: 'messages: Input should be a valid list' });
  }
  if (body.messages.length === 0) {
    return context.error({ status: 400, message: 'messages: at least one message is required' });
  }
  return undefined;
}

/**
 * The text the answer echoes and the input token count (words of the system prompt and of every
 * message). A last user turn made of tool results is echoed and cannot trigger tools.
 */
function readConversation(body: Record<string, unknown>): { text: string; mayCallTools: boolean; inputTokens: number } {
  const messages = (body.messages as unknown[]).filter(isObject);
  const inputTokens = messages.reduce(
    (sum, message) => sum + countWords(blocksText(message.content)),
    countWords(blocksText(body.system)),
  );
  const lastUser = messages.findLast((message) => message.role === 'user');
  const answersToolResult =
    Array.isArray(lastUser?.content) &&
    lastUser.content.some((block) => isObject(block) && block.type === 'tool_result');
  const last = messages.at(-1);
  return {
    text: blocksText(lastUser?.content),
    mayCallTools: !answersToolResult && last !== undefined && last === lastUser,
    inputTokens,
  };
}

/** The text of a content value: a string, or its text blocks and tool results joined by newlines. */
function blocksText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content
    .filter(isObject)
    .map((block) => {
      if (block.type === 'text' && typeof block.text === 'string') return block.text;
      if (block.type === 'tool_result') return blocksText(block.content);
      return '';
    })
    .filter((text) => text !== '')
    .join('\n');
}

/** Client tools (with an input schema); server tools such as web search are not called by the mock. */
function offeredTools(tools: unknown): OfferedTool[] {
  if (!Array.isArray(tools)) return [];
  return tools
    .filter(isObject)
    .filter((tool) => typeof tool.name === 'string' && isObject(tool.input_schema))
    .map((tool) => ({ name: tool.name as string, parameters: tool.input_schema }));
}
