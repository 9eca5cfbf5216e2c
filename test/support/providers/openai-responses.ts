// POST /v1/responses: a `response` object, or the typed event stream that builds one
// (`event:` + `data:` lines, each event with its sequence_number).
import type {
  Response,
  ResponseFunctionToolCall,
  ResponseOutputItem,
  ResponseOutputMessage,
  ResponseOutputText,
  ResponseStreamEvent,
  ResponseUsage,
} from 'openai/resources/responses/responses';
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
import { contentText } from './openai-chat.ts';

/**
 * The response object as it travels: `output_text` is a convenience the SDK adds after parsing,
 * and `usage` is null until the response is done.
 */
type WireResponse = Omit<Response, 'output_text' | 'usage'> & { usage: ResponseUsage | null };

type WireEvent = ResponseStreamEvent extends infer Event
  ? Event extends { response: Response }
    ? Omit<Event, 'response'> & { response: WireResponse }
    : Event
  : never;

type PlannedItem =
  | { kind: 'message'; id: string; text: string }
  | { kind: 'function_call'; id: string; callId: string; name: string; arguments: string };

export function responseReply(body: Record<string, unknown>, context: AnswerContext): Reply {
  const { model } = body;
  if (typeof model !== 'string' || model === '') {
    return context.error({
      status: 400,
      message: "Missing required parameter: 'model'.",
      param: 'model',
      code: 'missing_required_parameter',
    });
  }
  const unknown = context.unknownModel(model);
  if (unknown) return unknown;

  const turn = lastTurn(body);
  const limit = limitWords(
    echoAnswer(turn.text),
    typeof body.max_output_tokens === 'number' ? body.max_output_tokens : undefined,
  );
  const tools = turn.mayCallTools ? requestedTools(turn.text, offeredTools(body.tools)) : [];
  const items: PlannedItem[] =
    tools.length > 0
      ? tools.map((tool) => ({
          kind: 'function_call',
          id: context.id('fc_'),
          callId: context.id('call_'),
          name: tool.name,
          arguments: JSON.stringify(toolArguments(tool.parameters)),
        }))
      : [{ kind: 'message', id: context.id('msg_'), text: limit.text }];
  const cut = tools.length === 0 && limit.cut;
  const outputTokens = items.reduce(
    (sum, item) => sum + countWords(item.kind === 'message' ? item.text : `${item.name} ${item.arguments}`),
    0,
  );
  const inputTokens = turn.inputTokens;
  const usage: ResponseUsage = {
    input_tokens: inputTokens,
    input_tokens_details: { cached_tokens: 0, cache_write_tokens: 0 },
    output_tokens: outputTokens,
    output_tokens_details: { reasoning_tokens: 0 },
    total_tokens: inputTokens + outputTokens,
  };

  const start: WireResponse = {
    id: context.id('resp_'),
    object: 'response',
    created_at: Math.floor(Date.now() / 1000),
    status: 'in_progress',
    background: false,
    error: null,
    incomplete_details: null,
    instructions: typeof body.instructions === 'string' ? body.instructions : null,
    max_output_tokens: typeof body.max_output_tokens === 'number' ? body.max_output_tokens : null,
    metadata: isObject(body.metadata) ? (body.metadata as Record<string, string>) : {},
    model,
    output: [],
    parallel_tool_calls: typeof body.parallel_tool_calls === 'boolean' ? body.parallel_tool_calls : true,
    previous_response_id: typeof body.previous_response_id === 'string' ? body.previous_response_id : null,
    service_tier: 'default',
    temperature: typeof body.temperature === 'number' ? body.temperature : 1,
    text: { format: { type: 'text' } },
    tool_choice: (body.tool_choice ?? 'auto') as Response['tool_choice'],
    tools: (Array.isArray(body.tools) ? body.tools : []) as Response['tools'],
    top_p: typeof body.top_p === 'number' ? body.top_p : 1,
    truncation: 'disabled',
    usage: null,
  };
  const done: WireResponse = {
    ...start,
    status: cut ? 'incomplete' : 'completed',
    completed_at: cut ? null : start.created_at,
    incomplete_details: cut ? { reason: 'max_output_tokens' } : null,
    output: items.map((item) => outputItem(item, cut ? 'incomplete' : 'completed')),
    usage,
  };

  if (body.stream !== true) return { kind: 'json', status: 200, body: done };
  return { kind: 'stream', events: streamEvents(start, done, items) };
}

function streamEvents(start: WireResponse, done: WireResponse, items: PlannedItem[]): SseEvent[] {
  const events: WireEvent[] = [];
  let sequence = 0;
  const next = () => sequence++;
  events.push({ type: 'response.created', sequence_number: next(), response: start });
  events.push({ type: 'response.in_progress', sequence_number: next(), response: start });
  items.forEach((item, outputIndex) => {
    const output_index = outputIndex;
    events.push({
      type: 'response.output_item.added',
      sequence_number: next(),
      output_index,
      item: outputItem(item, 'in_progress'),
    });
    if (item.kind === 'message') {
      const item_id = item.id;
      const content_index = 0;
      events.push({
        type: 'response.content_part.added',
        sequence_number: next(),
        item_id,
        output_index,
        content_index,
        part: textPart(''),
      });
      for (const delta of wordPieces(item.text)) {
        events.push({
          type: 'response.output_text.delta',
          sequence_number: next(),
          item_id,
          output_index,
          content_index,
          delta,
          logprobs: [],
        });
      }
      events.push({
        type: 'response.output_text.done',
        sequence_number: next(),
        item_id,
        output_index,
        content_index,
        text: item.text,
        logprobs: [],
      });
      events.push({
        type: 'response.content_part.done',
        sequence_number: next(),
        item_id,
        output_index,
        content_index,
        part: textPart(item.text),
      });
    } else {
      for (const delta of chunkString(item.arguments)) {
        events.push({
          type: 'response.function_call_arguments.delta',
          sequence_number: next(),
          item_id: item.id,
          output_index,
          delta,
        });
      }
      events.push({
        type: 'response.function_call_arguments.done',
        sequence_number: next(),
        item_id: item.id,
        output_index,
        name: item.name,
        arguments: item.arguments,
      });
    }
    events.push({
      type: 'response.output_item.done',
      sequence_number: next(),
      output_index,
      item: done.output[outputIndex],
    });
  });
  if (done.status === 'incomplete') {
    events.push({ type: 'response.incomplete', sequence_number: next(), response: done });
  } else {
    events.push({ type: 'response.completed', sequence_number: next(), response: done });
  }
  return events.map((event) => ({ event: event.type, data: JSON.stringify(event) }));
}

function outputItem(item: PlannedItem, status: 'in_progress' | 'completed' | 'incomplete'): ResponseOutputItem {
  if (item.kind === 'message') {
    const message: ResponseOutputMessage = {
      id: item.id,
      type: 'message',
      status,
      role: 'assistant',
      content: status === 'in_progress' ? [] : [textPart(item.text)],
    };
    return message;
  }
  const call: ResponseFunctionToolCall = {
    id: item.id,
    type: 'function_call',
    status,
    call_id: item.callId,
    name: item.name,
    arguments: status === 'in_progress' ? '' : item.arguments,
  };
  return call;
}

function textPart(text: string): ResponseOutputText {
  return { type: 'output_text', annotations: [], logprobs: [], text };
}

/**
 * What the answer echoes and counts: `input` is a string (one user turn) or a list of items.
 * A trailing function_call_output is echoed and cannot trigger tools; otherwise the last user
 * message is echoed, and tools are called only when that message is the last item.
 */
function lastTurn(body: Record<string, unknown>): { text: string; mayCallTools: boolean; inputTokens: number } {
  const instructionTokens = typeof body.instructions === 'string' ? countWords(body.instructions) : 0;
  const { input } = body;
  if (typeof input === 'string') {
    return { text: input, mayCallTools: true, inputTokens: instructionTokens + countWords(input) };
  }
  const items = Array.isArray(input) ? input.filter(isObject) : [];
  const inputTokens = items.reduce((sum, item) => sum + countWords(itemText(item)), instructionTokens);
  const last = items.at(-1);
  if (last?.type === 'function_call_output') return { text: itemText(last), mayCallTools: false, inputTokens };
  const lastUser = items.findLast((item) => item.role === 'user');
  return { text: lastUser ? itemText(lastUser) : '', mayCallTools: last?.role === 'user', inputTokens };
}

function itemText(item: Record<string, unknown>): string {
  if (item.type === 'function_call_output') return contentText(item.output);
  if (item.type === undefined || item.type === 'message') return contentText(item.content);
  return '';
}

function offeredTools(tools: unknown): OfferedTool[] {
  if (!Array.isArray(tools)) return [];
  return tools
    .filter(isObject)
    .filter((tool) => tool.type === 'function' && typeof tool.name === 'string')
    .map((tool) => ({ name: tool.name as string, parameters: tool.parameters }));
}
