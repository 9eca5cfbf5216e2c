// Messages requests (Anthropic, MessageCreateParams of @anthropic-ai/sdk resources/messages) read
// into the chat form and written from it. Every mapping is listed in docs/llm-formats.md; fields
// outside the Messages schema are carried over.

import { newChatRequest } from '../form/request.ts';
import { reportCallSignature } from '../form/signatures.ts';
import { argumentsObject } from '../form/tool-arguments.ts';
import type {
  ChatRequest,
  DocumentPart,
  Dropped,
  FunctionTool,
  ImagePart,
  MediaSource,
  Message,
  Part,
  ReasoningPart,
  TextPart,
  Tool,
  ToolChoice,
  ToolResultPart,
} from '../form/types.ts';
import { extraFields, isPlainObject, isSet, numberOr, stringOr, unknownFields } from '../json.ts';
import { type JsonObject, type RequestTranslation, TranslationError } from '../types.ts';
import { Warnings, withCarriedOver, withExtra } from '../warnings.ts';

/** Messages requires max_tokens; this is sent when the client gave no limit. */
export const DEFAULT_MAX_TOKENS = 4096;

// MessageCreateParams fields that the form holds. temperature and top_p are long-standing
// Messages parameters the current SDK types no longer list; gw still maps them.
const MAPPED_FIELDS = [
  'model',
  'messages',
  'system',
  'max_tokens',
  'stop_sequences',
  'stream',
  'temperature',
  'top_p',
  'top_k',
  'thinking',
  'tools',
  'tool_choice',
  'metadata',
  'output_config',
  'service_tier',
];

// MessageCreateParams fields only Messages has: the form notes them as dropped when set.
const OWN_FIELDS = [
  'cache_control',
  'container',
  'diagnostics',
  'inference_geo',
  'speed',
  'user_profile_id',
  'workspace_id',
];

const KNOWN_FIELDS: ReadonlySet<string> = new Set([...MAPPED_FIELDS, ...OWN_FIELDS]);

// Anthropic content blocks the form has no place for (server tools, search results).
const OWN_BLOCKS = new Set([
  'search_result',
  'server_tool_use',
  'web_search_tool_result',
  'web_fetch_tool_result',
  'code_execution_tool_result',
  'bash_code_execution_tool_result',
  'text_editor_code_execution_tool_result',
  'tool_search_tool_result',
  'container_upload',
]);

// Fields of an Anthropic custom tool that the form has no place for.
const OWN_TOOL_FIELDS = [
  'cache_control',
  'defer_loading',
  'eager_input_streaming',
  'input_examples',
  'allowed_callers',
];

const ANTHROPIC_EFFORTS = new Set(['low', 'medium', 'high', 'xhigh', 'max']);

const MESSAGES_API = { full: 'the Messages API', short: 'Messages' };

// ---------------------------------------------------------------------------------------------
// Reading: a Messages request body into the form. Throws TranslationError for a body Messages
// itself rejects.

export function readMessagesRequest(body: JsonObject): ChatRequest {
  if (!isPlainObject(body)) throw new TranslationError('the request body must be a JSON object');
  const dropped: Dropped[] = [];
  const messages: Message[] = [];
  if (isSet(body.system)) messages.push(systemMessage(body.system, 'system', 'system'));
  if (!Array.isArray(body.messages)) throw new TranslationError('messages: must be an array');
  body.messages.forEach((message, i) => {
    messages.push(readMessage(message, `messages[${i}]`));
  });
  const request = newChatRequest(messages);
  request.dropped = dropped;
  if (body.model !== undefined) request.model = body.model;
  if (isSet(body.max_tokens)) request.maxTokens = body.max_tokens;
  if (Array.isArray(body.stop_sequences)) {
    request.stopSequences = body.stop_sequences;
    request.stopSequencesPath = 'stop_sequences';
  }
  if (isSet(body.temperature)) request.temperature = body.temperature;
  if (isSet(body.top_p)) request.topP = body.top_p;
  if (isSet(body.top_k)) request.topK = { value: body.top_k, path: 'top_k' };
  if (typeof body.stream === 'boolean') request.stream = body.stream;

  const tools = readTools(body.tools);
  if (tools !== undefined) request.tools = tools;
  if (isSet(body.tool_choice)) {
    request.toolChoice = readToolChoice(body.tool_choice);
    if (isPlainObject(body.tool_choice) && body.tool_choice.disable_parallel_tool_use === true) {
      request.parallelToolCalls = false;
    }
  }
  if (isPlainObject(body.metadata)) {
    for (const key in body.metadata) {
      const value = body.metadata[key];
      if (key === 'user_id' && typeof value === 'string') request.user = { value, path: 'metadata.user_id' };
      else if (isSet(value)) dropped.push({ kind: 'dropped', path: `metadata.${key}` });
    }
  }
  if (isPlainObject(body.output_config)) readOutputConfig(body.output_config, request);
  // Switched off explicitly is what every other format does by default.
  const thinking = body.thinking;
  if (isSet(thinking) && !(isPlainObject(thinking) && thinking.type === 'disabled')) {
    const budget = isPlainObject(thinking) ? numberOr(thinking.budget_tokens) : undefined;
    request.reasoning = { ...request.reasoning, thinking: { path: 'thinking' } };
    if (budget !== undefined) request.reasoning.thinking!.budgetTokens = budget;
  }
  if (isSet(body.service_tier)) {
    const tier = body.service_tier === 'auto' ? 'auto' : body.service_tier === 'standard_only' ? 'standard' : 'other';
    request.serviceTier = { tier, value: body.service_tier, path: 'service_tier' };
  }
  for (const field of OWN_FIELDS) if (isSet(body[field])) dropped.push({ kind: 'dropped', path: field });
  request.extra = unknownFields(body, KNOWN_FIELDS);
  return request;
}

function systemMessage(system: unknown, path: string, contentPath: string): Message {
  if (typeof system === 'string') return { role: 'system', content: system, path };
  if (!Array.isArray(system)) {
    throw new TranslationError(`${contentPath}: must be a string or an array of text blocks`);
  }
  const parts = system.map((block, j): Part => {
    const blockPath = `${contentPath}[${j}]`;
    return isPlainObject(block) && block.type === 'text' ? textPart(block, blockPath) : raw(block, blockPath);
  });
  return { role: 'system', content: parts, path };
}

function raw(value: unknown, path: string): Part {
  return { type: 'raw', value, path };
}

function readMessage(message: unknown, path: string): Message {
  if (!isPlainObject(message)) throw new TranslationError(`${path}: must be an object`);
  switch (message.role) {
    case 'user':
      return { role: 'user', content: userContent(message.content, path), path };
    case 'assistant':
      return { role: 'assistant', content: assistantContent(message.content, path), path };
    case 'system':
      // The SDK's SystemMessageParam: a system prompt in place.
      return systemMessage(message.content, path, `${path}.content`);
    default:
      throw new TranslationError(`${path}.role: unknown role ${JSON.stringify(message.role)}`);
  }
}

function userContent(content: unknown, path: string): string | Part[] {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) throw new TranslationError(`${path}.content: must be a string or an array`);
  return content.map((block, j) => {
    const blockPath = `${path}.content[${j}]`;
    return isPlainObject(block) && block.type === 'tool_result'
      ? toolResult(block, blockPath)
      : userPart(block, blockPath);
  });
}

function userPart(block: unknown, path: string): Part {
  if (!isPlainObject(block)) return raw(block, path);
  switch (block.type) {
    case 'text':
      return textPart(block, path);
    case 'image':
      return imagePart(block, path);
    case 'document':
      return documentPart(block, path);
    case 'tool_use':
      return { kind: 'dropped', path, why: 'a tool_use block belongs in an assistant turn' };
    case 'thinking':
    case 'redacted_thinking':
      return reasoningPart(block, path);
    default:
      return ownBlock(block, path) ?? raw(block, path);
  }
}

/** A block type of Anthropic's own that no other format has. */
function ownBlock(block: JsonObject, path: string): Dropped | undefined {
  if (typeof block.type !== 'string' || !OWN_BLOCKS.has(block.type)) return undefined;
  return { kind: 'dropped', path, what: `a ${block.type} block` };
}

/** Fields of the block whose meaning the form does not hold, noted when set. */
function droppedFields(block: JsonObject, path: string, fields: readonly string[]): Dropped[] | undefined {
  const dropped: Dropped[] = [];
  for (const field of fields) if (isSet(block[field])) dropped.push({ kind: 'dropped', path: `${path}.${field}` });
  return dropped.length > 0 ? dropped : undefined;
}

function withCommon<T extends Part & { cache?: unknown; extra?: JsonObject; dropped?: Dropped[] }>(
  block: JsonObject,
  part: T,
  path: string,
  known: readonly string[],
  noted: readonly string[],
): T {
  if (isSet(block.cache_control)) (part as { cache?: { path: string } }).cache = { path: `${path}.cache_control` };
  const extra = extraFields(block, known);
  if (extra !== undefined) part.extra = extra;
  const dropped = droppedFields(block, path, noted);
  if (dropped !== undefined) part.dropped = dropped;
  return part;
}

function textPart(block: JsonObject, path: string): TextPart {
  if (typeof block.text !== 'string') throw new TranslationError(`${path}.text: must be a string`);
  const part: TextPart = { type: 'text', text: block.text, path };
  return withCommon(block, part, path, ['type', 'text', 'cache_control', 'citations'], ['citations']);
}

function mediaSource(source: unknown): MediaSource {
  if (!isPlainObject(source)) return { kind: 'other', value: source };
  if (source.type === 'base64' && typeof source.media_type === 'string' && typeof source.data === 'string') {
    return { kind: 'base64', mediaType: source.media_type, data: source.data };
  }
  if (source.type === 'url' && typeof source.url === 'string') return { kind: 'url', url: source.url };
  if (source.type === 'text' && typeof source.data === 'string') return { kind: 'text', text: source.data };
  if (source.type === 'file' && typeof source.file_id === 'string') return { kind: 'file', fileId: source.file_id };
  return { kind: 'other', value: source };
}

function imagePart(block: JsonObject, path: string): ImagePart {
  const part: ImagePart = { type: 'image', source: mediaSource(block.source), path };
  return withCommon(block, part, path, ['type', 'source', 'cache_control', 'transformations'], ['transformations']);
}

function documentPart(block: JsonObject, path: string): DocumentPart {
  const part: DocumentPart = { type: 'document', source: mediaSource(block.source), path };
  if (typeof block.title === 'string') part.name = block.title;
  const known = ['type', 'source', 'cache_control', 'citations', 'context', 'title'];
  return withCommon(block, part, path, known, ['citations', 'context']);
}

function reasoningPart(block: JsonObject, path: string): ReasoningPart {
  if (block.type === 'redacted_thinking')
    return { type: 'reasoning', text: '', redacted: stringOr(block.data) ?? '', path };
  const part: ReasoningPart = { type: 'reasoning', text: stringOr(block.thinking) ?? '', path };
  // An empty signature is none: gw's own streams open a thinking block with one, and a thought
  // that had no signature (Gemini's) comes back with it.
  if (typeof block.signature === 'string' && block.signature !== '') part.signature = block.signature;
  return part;
}

function toolResult(block: JsonObject, path: string): ToolResultPart {
  if (typeof block.tool_use_id !== 'string') throw new TranslationError(`${path}.tool_use_id: required`);
  const content = block.content;
  let parts: string | Part[] | undefined;
  if (typeof content === 'string') parts = content;
  else if (Array.isArray(content)) parts = content.map((item, k) => userPart(item, `${path}.content[${k}]`));
  else if (content !== undefined && content !== null) {
    throw new TranslationError(`${path}.content: must be a string or an array`);
  }
  const part: ToolResultPart = { type: 'tool_result', toolCallId: block.tool_use_id, content: parts, path };
  if (block.is_error === true) part.isError = { path: `${path}.is_error` };
  if (isSet(block.cache_control)) part.cache = { path: `${path}.cache_control` };
  return part;
}

function assistantContent(content: unknown, path: string): string | Part[] {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) throw new TranslationError(`${path}.content: must be a string or an array`);
  return content.map((block, j): Part => {
    const blockPath = `${path}.content[${j}]`;
    if (!isPlainObject(block)) return raw(block, blockPath);
    switch (block.type) {
      case 'text':
        return textPart(block, blockPath);
      case 'tool_use':
        if (typeof block.id !== 'string' || typeof block.name !== 'string') {
          throw new TranslationError(`${blockPath}: a tool_use block needs an id and a name`);
        }
        return {
          type: 'tool_call',
          id: block.id,
          name: block.name,
          arguments: block.input,
          argumentsPath: `${blockPath}.input`,
          path: blockPath,
        };
      case 'thinking':
      case 'redacted_thinking':
        return reasoningPart(block, blockPath);
      default:
        return ownBlock(block, blockPath) ?? raw(block, blockPath);
    }
  });
}

function readTools(tools: unknown): Tool[] | undefined {
  if (!isSet(tools)) return undefined;
  if (!Array.isArray(tools)) throw new TranslationError('tools: must be an array');
  return tools.map((tool, i): Tool => {
    const path = `tools[${i}]`;
    if (!isPlainObject(tool)) return { type: 'raw', value: tool, path };
    const custom = tool.type === undefined || tool.type === null || tool.type === 'custom';
    // Server tools (web search, code execution...) run at Anthropic.
    if (!custom) return { kind: 'dropped', path, what: `the ${String(tool.type)} tool` };
    if (typeof tool.name !== 'string') throw new TranslationError(`${path}.name: required`);
    const out: FunctionTool = { type: 'function', name: tool.name, path };
    if (typeof tool.description === 'string') out.description = tool.description;
    if (isPlainObject(tool.input_schema)) out.parameters = tool.input_schema;
    if (typeof tool.strict === 'boolean') out.strict = tool.strict;
    const dropped = droppedFields(tool, path, OWN_TOOL_FIELDS);
    if (dropped !== undefined) out.dropped = dropped;
    const extra = extraFields(tool, ['type', 'name', 'description', 'input_schema', 'strict', ...OWN_TOOL_FIELDS]);
    if (extra !== undefined) out.extra = extra;
    return out;
  });
}

function readToolChoice(choice: unknown): ToolChoice {
  const path = 'tool_choice';
  if (isPlainObject(choice)) {
    switch (choice.type) {
      case 'auto':
        return { mode: 'auto', path };
      case 'any':
        return { mode: 'required', path };
      case 'none':
        return { mode: 'none', path };
      case 'tool':
        if (typeof choice.name === 'string') return { mode: 'tool', name: choice.name, path };
    }
  }
  throw new TranslationError('tool_choice: not a valid tool choice');
}

function readOutputConfig(config: JsonObject, request: ChatRequest): void {
  for (const key in config) {
    const value = config[key];
    const path = `output_config.${key}`;
    if (key === 'format' && isPlainObject(value) && value.type === 'json_schema' && isPlainObject(value.schema)) {
      request.responseFormat = { type: 'json_schema', schema: value.schema, path };
    } else if (key === 'effort' && typeof value === 'string') {
      request.reasoning = { ...request.reasoning, effort: { value, path } };
    } else if (isSet(value)) {
      request.dropped.push({ kind: 'dropped', path });
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Writing: the form as a Messages request body.

export interface MessagesWriteOptions {
  /** The max_tokens to send when the client gave no limit (Messages requires one). */
  defaultMaxTokens?: number;
}

export function writeMessagesRequest(request: ChatRequest, options: MessagesWriteOptions = {}): RequestTranslation {
  const warnings = new Warnings(MESSAGES_API);
  const conversation = new Conversation(warnings);
  for (const message of request.messages) conversation.add(message);
  const out: JsonObject = {};
  if (request.model !== undefined) out.model = request.model;
  const system = conversation.system();
  if (system !== undefined) out.system = system;
  out.messages = conversation.messages();
  out.max_tokens = numberOr(request.maxTokens) ?? options.defaultMaxTokens ?? DEFAULT_MAX_TOKENS;
  if (request.stopSequences !== undefined) out.stop_sequences = request.stopSequences;
  if (request.temperature !== undefined) out.temperature = request.temperature;
  if (request.topP !== undefined) out.top_p = request.topP;
  if (request.topK !== undefined) out.top_k = request.topK.value;
  if (request.stream !== undefined) out.stream = request.stream;

  const tools = writeTools(request.tools, warnings);
  if (tools !== undefined) out.tools = tools;
  const choice = request.toolChoice === undefined ? undefined : writeToolChoice(request.toolChoice, warnings);
  if (choice !== undefined) out.tool_choice = choice;
  if (request.parallelToolCalls === false && tools !== undefined) {
    const withParallelism = choice ?? { type: 'auto' };
    if (withParallelism.type !== 'none') {
      withParallelism.disable_parallel_tool_use = true;
      out.tool_choice = withParallelism;
    }
  }
  if (request.user !== undefined) out.metadata = { user_id: request.user.value };
  const outputConfig = writeOutputConfig(request, warnings);
  if (outputConfig !== undefined) out.output_config = outputConfig;
  const thinking = request.reasoning?.thinking;
  if (thinking?.budgetTokens !== undefined) out.thinking = { type: 'enabled', budget_tokens: thinking.budgetTokens };
  else if (thinking !== undefined) warnings.dropped(thinking.path, 'extended thinking without a token budget');
  const tier = request.serviceTier;
  if (tier?.tier === 'auto') out.service_tier = 'auto';
  else if (tier?.tier === 'standard') out.service_tier = 'standard_only';
  else if (tier !== undefined) warnings.dropped(tier.path, `no Messages service tier matches ${tier.value}`);
  if (request.choices !== undefined) warnings.dropped(request.choices.path, 'the Messages API generates one choice');
  for (const field of [request.frequencyPenalty, request.presencePenalty, request.seed]) {
    if (field !== undefined) warnings.dropped(field.path);
  }
  warnings.report(request.dropped);
  return warnings.result(withCarriedOver(out, request.extra, warnings));
}

type Content = string | unknown[];

interface Turn {
  role: 'user' | 'assistant';
  content: Content;
}

/**
 * The conversation as Anthropic wants it: system and developer messages lifted into `system`,
 * tool results as tool_result blocks of a user turn, and consecutive turns of one role merged
 * (Anthropic requires user and assistant turns to alternate).
 */
class Conversation {
  readonly #warnings: Warnings;
  readonly #systemBlocks: unknown[] = [];
  #systemMessages = 0;
  #systemIsPlainString = true;
  readonly #turns: Turn[] = [];

  constructor(warnings: Warnings) {
    this.#warnings = warnings;
  }

  system(): string | unknown[] | undefined {
    if (this.#systemBlocks.length === 0) return undefined;
    const only = this.#systemBlocks[0];
    const single = this.#systemMessages === 1 && this.#systemIsPlainString && this.#systemBlocks.length === 1;
    return single && isPlainObject(only) && typeof only.text === 'string' ? only.text : this.#systemBlocks;
  }

  messages(): JsonObject[] {
    return this.#turns.map((turn) => ({ role: turn.role, content: turn.content }));
  }

  add(message: Message): void {
    if (message.role === 'system' || message.role === 'developer') {
      if (this.#turns.length > 0) {
        this.#warnings.changed(
          message.path,
          'a system message after the conversation began is sent in the top-level system',
        );
      }
      this.#warnings.report(message.dropped);
      this.#addSystem(message.content);
      return;
    }
    this.#warnings.report(message.dropped);
    if (message.role === 'user') {
      this.#push('user', typeof message.content === 'string' ? message.content : this.#blocks(message.content, false));
      return;
    }
    const content = message.content;
    if (typeof content === 'string') {
      if (content === '') this.#warnings.dropped(message.path, 'an empty assistant message');
      else this.#push('assistant', content);
      return;
    }
    const blocks = this.#blocks(content, true);
    if (blocks.length === 0) this.#warnings.dropped(message.path, 'an empty assistant message');
    else this.#push('assistant', blocks);
  }

  #addSystem(content: string | Part[]): void {
    this.#systemMessages++;
    if (typeof content === 'string') {
      if (content !== '') this.#systemBlocks.push({ type: 'text', text: content });
      return;
    }
    this.#systemIsPlainString = false;
    for (const part of content) {
      const block = writeBlock(part, this.#warnings);
      if (block !== undefined) this.#systemBlocks.push(block);
    }
  }

  /** Parts as blocks; an assistant turn leaves out empty text, which Anthropic rejects. */
  #blocks(parts: Part[], assistant: boolean): unknown[] {
    const blocks: unknown[] = [];
    for (const part of parts) {
      if (assistant && 'type' in part && part.type === 'text' && part.text === '' && !part.refusal) continue;
      const block = writeBlock(part, this.#warnings);
      if (block !== undefined) blocks.push(block);
    }
    return blocks;
  }

  #push(role: Turn['role'], content: Content): void {
    const last = this.#turns.at(-1);
    if (last?.role !== role) {
      this.#turns.push({ role, content });
      return;
    }
    const merged = [...asBlocks(last.content), ...asBlocks(content)];
    // Anthropic reads a user turn's tool_result blocks before anything else in it.
    last.content = role === 'user' ? toolResultsFirst(merged) : merged;
  }
}

function asBlocks(content: Content): unknown[] {
  if (typeof content !== 'string') return content;
  return content === '' ? [] : [{ type: 'text', text: content }];
}

function isToolResult(block: unknown): boolean {
  return isPlainObject(block) && block.type === 'tool_result';
}

function toolResultsFirst(blocks: unknown[]): unknown[] {
  const results = blocks.filter(isToolResult);
  if (results.length === 0 || results.length === blocks.length) return blocks;
  return [...results, ...blocks.filter((block) => !isToolResult(block))];
}

function withCacheControl(part: { cache?: unknown }, block: JsonObject): JsonObject {
  if (part.cache !== undefined) block.cache_control = { type: 'ephemeral' };
  return block;
}

function isHttpUrl(url: string): boolean {
  return /^https?:\/\//i.test(url);
}

function imageSource(source: MediaSource): JsonObject | undefined {
  if (source.kind === 'base64') return { type: 'base64', media_type: source.mediaType, data: source.data };
  if (source.kind === 'url' && isHttpUrl(source.url)) return { type: 'url', url: source.url };
  return undefined;
}

function documentSource(source: MediaSource): JsonObject | string {
  if (source.kind === 'base64' && source.mediaType === 'application/pdf') {
    return { type: 'base64', media_type: 'application/pdf', data: source.data };
  }
  if (source.kind === 'base64' && source.mediaType === 'text/plain') {
    return { type: 'text', media_type: 'text/plain', data: Buffer.from(source.data, 'base64').toString('utf8') };
  }
  if (source.kind === 'text') return { type: 'text', media_type: 'text/plain', data: source.text };
  if (source.kind === 'url' && isHttpUrl(source.url)) return { type: 'url', url: source.url };
  if (source.kind === 'file') return 'a file id of another provider is not valid at Anthropic';
  return 'only inline PDF and plain-text files have a Messages equivalent';
}

/** A content part as an Anthropic content block; undefined when it has no equivalent (reported). */
function writeBlock(part: Part, warnings: Warnings): unknown {
  if ('kind' in part) {
    warnings.report([part]);
    return undefined;
  }
  switch (part.type) {
    case 'text':
      warnings.report(part.dropped);
      return withExtra(withCacheControl(part, { type: 'text', text: part.text }), part.extra);
    case 'image': {
      const source = imageSource(part.source);
      if (source === undefined) {
        warnings.dropped(part.path, 'an image URL that is neither http(s) nor a base64 data: URL');
        return undefined;
      }
      warnings.report(part.dropped);
      if (part.detail !== undefined) warnings.dropped(part.detail.path);
      return withExtra(withCacheControl(part, { type: 'image', source }), part.extra);
    }
    case 'document': {
      const source = documentSource(part.source);
      if (typeof source === 'string') {
        warnings.dropped(part.path, source);
        return undefined;
      }
      warnings.report(part.dropped);
      return withExtra(withCacheControl(part, { type: 'document', source }), part.extra);
    }
    case 'tool_call':
      warnings.report(part.dropped);
      reportCallSignature(part, warnings);
      return {
        type: 'tool_use',
        id: part.id ?? '',
        name: part.name,
        input: argumentsObject(part.arguments, part.argumentsPath, warnings),
      };
    case 'tool_result':
      return toolResultBlock(part, warnings);
    case 'reasoning':
      if (part.redacted !== undefined) return { type: 'redacted_thinking', data: part.redacted };
      // Anthropic refuses a thinking block it did not sign (another provider's reasoning, a
      // compatible server's reasoning_content): without it the turn is an ordinary one.
      if (part.signature === undefined) {
        warnings.dropped(part.path, 'reasoning without a signature, which Anthropic refuses');
        return undefined;
      }
      return { type: 'thinking', thinking: part.text, signature: part.signature };
    case 'raw':
      return part.value;
  }
}

function toolResultBlock(part: ToolResultPart, warnings: Warnings): JsonObject {
  warnings.report(part.dropped);
  const block: JsonObject = { type: 'tool_result', tool_use_id: part.toolCallId };
  const content = part.content;
  if (typeof content === 'string') {
    block.content = content;
  } else if (content !== undefined) {
    const blocks: unknown[] = [];
    for (const item of content) {
      const written = writeBlock(item, warnings);
      if (written !== undefined) blocks.push(written);
    }
    block.content = blocks;
  }
  if (part.isError !== undefined) block.is_error = true;
  return withCacheControl(part, block);
}

function writeTools(tools: Tool[] | undefined, warnings: Warnings): unknown[] | undefined {
  if (tools === undefined) return undefined;
  const out: unknown[] = [];
  for (const tool of tools) {
    if ('kind' in tool) {
      warnings.report([tool]);
    } else if (tool.type === 'raw') {
      out.push(tool.value);
    } else {
      warnings.report(tool.dropped);
      const written: JsonObject = { name: tool.name };
      if (tool.description !== undefined) written.description = tool.description;
      written.input_schema = tool.parameters ?? { type: 'object', properties: {} };
      if (tool.strict !== undefined) written.strict = tool.strict;
      out.push(withExtra(written, tool.extra));
    }
  }
  return out.length > 0 ? out : undefined;
}

function writeToolChoice(choice: ToolChoice, warnings: Warnings): JsonObject {
  if (choice.allowed !== undefined) {
    warnings.changed(choice.path, 'the allowed_tools list has no Messages equivalent; only its mode is sent');
  }
  switch (choice.mode) {
    case 'auto':
      return { type: 'auto' };
    case 'none':
      return { type: 'none' };
    case 'required':
      return { type: 'any' };
    case 'tool':
      return { type: 'tool', name: choice.name };
  }
}

function writeOutputConfig(request: ChatRequest, warnings: Warnings): JsonObject | undefined {
  const config: JsonObject = {};
  const format = request.responseFormat;
  if (format?.type === 'json_schema') config.format = { type: 'json_schema', schema: format.schema };
  else if (format?.type === 'json_object') {
    warnings.dropped(format.path, 'json_object mode has no Messages equivalent (json_schema has)');
  }
  const effort = request.reasoning?.effort;
  if (effort !== undefined) {
    if (typeof effort.value === 'string' && ANTHROPIC_EFFORTS.has(effort.value)) {
      config.effort = effort.value;
    } else if (effort.value === 'minimal') {
      config.effort = 'low';
      warnings.changed(effort.path, 'minimal is sent as output_config.effort low, the lowest Anthropic effort');
    } else {
      warnings.dropped(effort.path, `no Anthropic effort matches ${JSON.stringify(effort.value)}`);
    }
  }
  return Object.keys(config).length > 0 ? config : undefined;
}
