// A Chat Completions request (OpenAI) as a Messages request (Anthropic). Every mapping is listed in
// docs/llm-formats.md; fields outside the Chat Completions schema are carried over unchanged.
import { isPlainObject, isSet, numberOr, stringOr, unknownFields } from './json.ts';
import { imageSourceForUrl, parseBase64DataUrl } from './media.ts';
import { type JsonObject, type RequestTranslation, TranslationError } from './types.ts';
import { Warnings, withCarriedOver } from './warnings.ts';

/** Messages requires max_tokens; this is sent when the client gave no limit. */
export const DEFAULT_MAX_TOKENS = 4096;

// ChatCompletionCreateParams fields (openai resources/chat/completions) that gw maps.
const MAPPED_FIELDS = [
  'model',
  'messages',
  'max_completion_tokens',
  'max_tokens',
  'stop',
  'stream',
  'stream_options',
  'temperature',
  'top_p',
  'tools',
  'tool_choice',
  'parallel_tool_calls',
  'functions',
  'function_call',
  'user',
  'safety_identifier',
  'response_format',
  'reasoning_effort',
  'service_tier',
  'n',
];

// ChatCompletionCreateParams fields with no Messages equivalent: dropped, with a warning when set.
const NO_EQUIVALENT_FIELDS = [
  'audio',
  'frequency_penalty',
  'logit_bias',
  'logprobs',
  'metadata',
  'modalities',
  'moderation',
  'prediction',
  'presence_penalty',
  'prompt_cache_key',
  'prompt_cache_options',
  'prompt_cache_retention',
  'seed',
  'store',
  'top_logprobs',
  'verbosity',
  'web_search_options',
];

const KNOWN_FIELDS: ReadonlySet<string> = new Set([...MAPPED_FIELDS, ...NO_EQUIVALENT_FIELDS]);

const ANTHROPIC_EFFORTS = new Set(['low', 'medium', 'high', 'xhigh', 'max']);

type Content = string | unknown[];

interface Turn {
  role: 'user' | 'assistant';
  content: Content;
}

/** Translates a Chat Completions request body to a Messages request body. */
export function completionsToMessagesRequest(
  body: JsonObject,
  options: { defaultMaxTokens?: number } = {},
): RequestTranslation {
  if (!isPlainObject(body)) throw new TranslationError('the request body must be a JSON object');
  const warnings = new Warnings('the Messages API');
  const conversation = new Conversation(warnings);
  conversation.addAll(body.messages);

  const out: JsonObject = {};
  if (body.model !== undefined) out.model = body.model;
  const system = conversation.system();
  if (system !== undefined) out.system = system;
  out.messages = conversation.messages();
  out.max_tokens =
    numberOr(body.max_completion_tokens) ?? numberOr(body.max_tokens) ?? options.defaultMaxTokens ?? DEFAULT_MAX_TOKENS;
  const stop = stopSequences(body.stop);
  if (stop !== undefined) out.stop_sequences = stop;
  if (isSet(body.temperature)) out.temperature = body.temperature;
  if (isSet(body.top_p)) out.top_p = body.top_p;
  if (typeof body.stream === 'boolean') out.stream = body.stream;
  if (isPlainObject(body.stream_options)) {
    // include_usage is honoured by the stream translator (Messages streams always carry usage).
    for (const key of Object.keys(body.stream_options)) {
      if (key !== 'include_usage') warnings.dropped(`stream_options.${key}`);
    }
  }

  const tools = convertTools(body, warnings);
  if (tools !== undefined) out.tools = tools;
  const choice = toolChoice(body, warnings);
  if (choice !== undefined) out.tool_choice = choice;
  if (body.parallel_tool_calls === false && tools !== undefined) {
    const withParallelism = (out.tool_choice as JsonObject | undefined) ?? { type: 'auto' };
    if (withParallelism.type !== 'none') {
      withParallelism.disable_parallel_tool_use = true;
      out.tool_choice = withParallelism;
    }
  }

  const userId = stringOr(body.safety_identifier) ?? stringOr(body.user);
  if (userId !== undefined) out.metadata = { user_id: userId };
  if (typeof body.safety_identifier === 'string' && typeof body.user === 'string' && body.user !== userId) {
    warnings.dropped('user', 'safety_identifier is sent as metadata.user_id instead');
  }

  const outputConfig = outputConfigFor(body, warnings);
  if (outputConfig !== undefined) out.output_config = outputConfig;
  if (body.service_tier === 'auto') out.service_tier = 'auto';
  else if (body.service_tier === 'default') out.service_tier = 'standard_only';
  else if (isSet(body.service_tier))
    warnings.dropped('service_tier', `no Messages service tier matches ${body.service_tier}`);
  if ((numberOr(body.n) ?? 1) > 1) warnings.dropped('n', 'the Messages API generates one choice');

  for (const field of NO_EQUIVALENT_FIELDS) {
    if (!isSet(body[field])) continue;
    if (field === 'modalities' && Array.isArray(body.modalities) && body.modalities.every((m) => m === 'text'))
      continue;
    warnings.dropped(field);
  }
  return warnings.result(withCarriedOver(out, unknownFields(body, KNOWN_FIELDS), warnings));
}

function stopSequences(stop: unknown): string[] | undefined {
  if (typeof stop === 'string') return [stop];
  if (Array.isArray(stop)) return stop.filter((s): s is string => typeof s === 'string');
  return undefined;
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
  // Legacy function calling has no call ids: gw names each call so that its result can refer to it.
  #legacyCalls = 0;
  #lastLegacyCallId: string | undefined;

  constructor(warnings: Warnings) {
    this.#warnings = warnings;
  }

  addAll(messages: unknown): void {
    if (!Array.isArray(messages)) throw new TranslationError('messages: must be an array');
    for (const [i, message] of messages.entries()) this.#add(message, `messages[${i}]`);
  }

  system(): string | unknown[] | undefined {
    if (this.#systemBlocks.length === 0) return undefined;
    const only = this.#systemBlocks[0];
    const single = this.#systemMessages === 1 && this.#systemIsPlainString && this.#systemBlocks.length === 1;
    return single && isTextPart(only) ? only.text : this.#systemBlocks;
  }

  messages(): JsonObject[] {
    return this.#turns.map((turn) => ({ role: turn.role, content: turn.content }));
  }

  #add(message: unknown, path: string): void {
    if (!isPlainObject(message)) throw new TranslationError(`${path}: must be an object`);
    switch (message.role) {
      case 'system':
      case 'developer':
        this.#addSystem(message, path);
        break;
      case 'user':
        if (isSet(message.name)) this.#warnings.dropped(`${path}.name`);
        this.#push('user', userContent(message.content, `${path}.content`, this.#warnings));
        break;
      case 'assistant':
        this.#addAssistant(message, path);
        break;
      case 'tool':
        this.#push('user', [toolResult(message, path, this.#warnings)]);
        break;
      case 'function':
        this.#addLegacyFunctionResult(message, path);
        break;
      default:
        throw new TranslationError(`${path}.role: unknown role ${JSON.stringify(message.role)}`);
    }
  }

  #addSystem(message: JsonObject, path: string): void {
    if (this.#turns.length > 0) {
      this.#warnings.changed(path, 'a system message after the conversation began is sent in the top-level system');
    }
    if (isSet(message.name)) this.#warnings.dropped(`${path}.name`);
    this.#systemMessages++;
    if (typeof message.content === 'string') {
      if (message.content !== '') this.#systemBlocks.push({ type: 'text', text: message.content });
      return;
    }
    if (!Array.isArray(message.content)) throw new TranslationError(`${path}.content: must be a string or an array`);
    this.#systemIsPlainString = false;
    for (const part of message.content) this.#systemBlocks.push(isTextPart(part) ? textBlock(part) : part);
  }

  #addAssistant(message: JsonObject, path: string): void {
    const hasCalls =
      (Array.isArray(message.tool_calls) && message.tool_calls.length > 0) || isPlainObject(message.function_call);
    if (isSet(message.name)) this.#warnings.dropped(`${path}.name`);
    if (isSet(message.audio)) this.#warnings.dropped(`${path}.audio`, 'audio replies have no Messages equivalent');
    const refusal = stringOr(message.refusal);
    if (typeof message.content === 'string' && !hasCalls && !refusal) {
      if (message.content === '') this.#warnings.dropped(path, 'an empty assistant message');
      else this.#push('assistant', message.content);
      return;
    }
    const blocks: unknown[] = [];
    const content = message.content;
    if (typeof content === 'string') {
      if (content !== '') blocks.push({ type: 'text', text: content });
    } else if (Array.isArray(content)) {
      for (const part of content) {
        if (isTextPart(part)) {
          if (part.text !== '') blocks.push(textBlock(part));
        } else if (isPlainObject(part) && part.type === 'refusal' && typeof part.refusal === 'string') {
          blocks.push({ type: 'text', text: part.refusal });
        } else {
          blocks.push(part);
        }
      }
    } else if (content !== undefined && content !== null) {
      throw new TranslationError(`${path}.content: must be a string, an array or null`);
    }
    if (refusal) blocks.push({ type: 'text', text: refusal });
    if (Array.isArray(message.tool_calls)) {
      message.tool_calls.forEach((call, j) => {
        const block = toolUseBlock(call, `${path}.tool_calls[${j}]`, this.#warnings);
        if (block) blocks.push(block);
      });
    }
    if (isPlainObject(message.function_call)) {
      this.#lastLegacyCallId = `legacy_function_call_${++this.#legacyCalls}`;
      blocks.push({
        type: 'tool_use',
        id: this.#lastLegacyCallId,
        name: stringOr(message.function_call.name) ?? '',
        input: toolInput(message.function_call.arguments, `${path}.function_call.arguments`, this.#warnings),
      });
    }
    if (blocks.length === 0) this.#warnings.dropped(path, 'an empty assistant message');
    else this.#push('assistant', blocks);
  }

  #addLegacyFunctionResult(message: JsonObject, path: string): void {
    if (this.#lastLegacyCallId === undefined) {
      throw new TranslationError(`${path}: a function message must follow an assistant function_call`);
    }
    const block: JsonObject = { type: 'tool_result', tool_use_id: this.#lastLegacyCallId };
    if (typeof message.content === 'string') block.content = message.content;
    this.#push('user', [block]);
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

function isTextPart(part: unknown): part is JsonObject & { text: string } {
  return isPlainObject(part) && part.type === 'text' && typeof part.text === 'string';
}

/** Copies a part's fields gw does not know onto its block (for example a client's own cache_control). */
function carryPartFields(part: JsonObject, block: JsonObject, known: readonly string[]): JsonObject {
  for (const [key, value] of Object.entries(part)) if (!known.includes(key) && !(key in block)) block[key] = value;
  return block;
}

function withCacheBreakpoint(part: JsonObject, block: JsonObject): JsonObject {
  if (isSet(part.prompt_cache_breakpoint)) block.cache_control = { type: 'ephemeral' };
  return block;
}

function textBlock(part: JsonObject & { text: string }): JsonObject {
  const block = withCacheBreakpoint(part, { type: 'text', text: part.text });
  return carryPartFields(part, block, ['type', 'text', 'prompt_cache_breakpoint']);
}

function userContent(content: unknown, path: string, warnings: Warnings): Content {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) throw new TranslationError(`${path}: must be a string or an array`);
  const blocks: unknown[] = [];
  content.forEach((part, j) => {
    const block = userBlock(part, `${path}[${j}]`, warnings);
    if (block !== undefined) blocks.push(block);
  });
  return blocks;
}

function userBlock(part: unknown, path: string, warnings: Warnings): unknown {
  if (!isPlainObject(part)) return part;
  switch (part.type) {
    case 'text':
      return isTextPart(part) ? textBlock(part) : part;
    case 'image_url':
      return imageBlock(part, path, warnings);
    case 'file':
      return documentBlock(part, path, warnings);
    case 'input_audio':
      warnings.dropped(path, 'audio input has no Messages equivalent');
      return undefined;
    default:
      return part;
  }
}

function imageBlock(part: JsonObject, path: string, warnings: Warnings): JsonObject | undefined {
  const image = part.image_url;
  const url = typeof image === 'string' ? image : stringOr(isPlainObject(image) ? image.url : undefined);
  if (url === undefined) throw new TranslationError(`${path}.image_url.url: must be a string`);
  const source = imageSourceForUrl(url);
  if (!source) {
    warnings.dropped(path, 'an image URL that is neither http(s) nor a base64 data: URL');
    return undefined;
  }
  if (isPlainObject(image) && isSet(image.detail) && image.detail !== 'auto')
    warnings.dropped(`${path}.image_url.detail`);
  const block = withCacheBreakpoint(part, { type: 'image', source });
  return carryPartFields(part, block, ['type', 'image_url', 'prompt_cache_breakpoint']);
}

/** An OpenAI file part with inline PDF or plain-text data as an Anthropic document block. */
function documentBlock(part: JsonObject, path: string, warnings: Warnings): JsonObject | undefined {
  const file = isPlainObject(part.file) ? part.file : {};
  const inline = typeof file.file_data === 'string' ? parseBase64DataUrl(file.file_data) : undefined;
  let source: JsonObject | undefined;
  if (inline?.mediaType === 'application/pdf') {
    source = { type: 'base64', media_type: 'application/pdf', data: inline.data };
  } else if (inline?.mediaType === 'text/plain') {
    source = { type: 'text', media_type: 'text/plain', data: Buffer.from(inline.data, 'base64').toString('utf8') };
  }
  if (!source) {
    const why = isSet(file.file_id)
      ? 'an OpenAI file ID is not valid at Anthropic'
      : 'only inline PDF and plain-text files have a Messages equivalent';
    warnings.dropped(path, why);
    return undefined;
  }
  const block = withCacheBreakpoint(part, { type: 'document', source });
  return carryPartFields(part, block, ['type', 'file', 'prompt_cache_breakpoint']);
}

function toolUseBlock(call: unknown, path: string, warnings: Warnings): JsonObject | undefined {
  if (!isPlainObject(call)) throw new TranslationError(`${path}: must be an object`);
  if (call.type === 'custom') {
    warnings.dropped(path, 'custom tool calls have no Messages equivalent');
    return undefined;
  }
  const fn = call.function;
  if (!isPlainObject(fn) || typeof fn.name !== 'string') throw new TranslationError(`${path}.function.name: required`);
  if (typeof call.id !== 'string') throw new TranslationError(`${path}.id: required`);
  return {
    type: 'tool_use',
    id: call.id,
    name: fn.name,
    input: toolInput(fn.arguments, `${path}.function.arguments`, warnings),
  };
}

/**
 * Tool-call arguments (a JSON string) as a tool_use input (an object). Arguments that are not a
 * JSON object cannot be sent to Anthropic: they become {} and a warning says so.
 */
function toolInput(args: unknown, path: string, warnings: Warnings): JsonObject {
  if (isPlainObject(args)) return args;
  if (args === undefined || args === null || (typeof args === 'string' && args.trim() === '')) return {};
  if (typeof args === 'string') {
    try {
      const parsed: unknown = JSON.parse(args);
      if (isPlainObject(parsed)) return parsed;
    } catch {
      // reported below
    }
  }
  warnings.changed(path, 'not a JSON object; sent as {}');
  return {};
}

function toolResult(message: JsonObject, path: string, warnings: Warnings): JsonObject {
  if (typeof message.tool_call_id !== 'string') throw new TranslationError(`${path}.tool_call_id: required`);
  const block: JsonObject = { type: 'tool_result', tool_use_id: message.tool_call_id };
  const content = message.content;
  if (typeof content === 'string') {
    block.content = content;
  } else if (Array.isArray(content)) {
    const parts: unknown[] = [];
    content.forEach((part, j) => {
      const converted = userBlock(part, `${path}.content[${j}]`, warnings);
      if (converted !== undefined) parts.push(converted);
    });
    block.content = parts;
  } else if (content !== undefined && content !== null) {
    throw new TranslationError(`${path}.content: must be a string or an array`);
  }
  return block;
}

function functionTool(fn: unknown, path: string, extra: JsonObject): JsonObject {
  if (!isPlainObject(fn) || typeof fn.name !== 'string') throw new TranslationError(`${path}.name: required`);
  const tool: JsonObject = { name: fn.name };
  if (typeof fn.description === 'string') tool.description = fn.description;
  tool.input_schema = isPlainObject(fn.parameters) ? fn.parameters : { type: 'object', properties: {} };
  if (typeof fn.strict === 'boolean') tool.strict = fn.strict;
  carryPartFields(fn, tool, ['name', 'description', 'parameters', 'strict']);
  return carryPartFields(extra, tool, ['type', 'function']);
}

function convertTools(body: JsonObject, warnings: Warnings): unknown[] | undefined {
  const tools: unknown[] = [];
  if (Array.isArray(body.tools)) {
    body.tools.forEach((tool, i) => {
      const path = `tools[${i}]`;
      if (isPlainObject(tool) && tool.type === 'function')
        tools.push(functionTool(tool.function, `${path}.function`, tool));
      else if (isPlainObject(tool) && tool.type === 'custom')
        warnings.dropped(path, 'custom tools have no Messages equivalent');
      // Other kinds are not Chat Completions tools (for example an Anthropic server tool): carried over.
      else tools.push(tool);
    });
  } else if (isSet(body.tools)) {
    throw new TranslationError('tools: must be an array');
  }
  if (Array.isArray(body.functions)) {
    for (const [i, fn] of body.functions.entries()) tools.push(functionTool(fn, `functions[${i}]`, {}));
  }
  return tools.length > 0 ? tools : undefined;
}

function toolChoice(body: JsonObject, warnings: Warnings): JsonObject | undefined {
  const value = isSet(body.tool_choice) ? body.tool_choice : body.function_call;
  const path = isSet(body.tool_choice) ? 'tool_choice' : 'function_call';
  if (!isSet(value)) return undefined;
  if (value === 'auto') return { type: 'auto' };
  if (value === 'none') return { type: 'none' };
  if (value === 'required') return { type: 'any' };
  if (isPlainObject(value)) {
    if (path === 'function_call' && typeof value.name === 'string') return { type: 'tool', name: value.name };
    if (value.type === 'function' && isPlainObject(value.function) && typeof value.function.name === 'string') {
      return { type: 'tool', name: value.function.name };
    }
    if (value.type === 'allowed_tools') {
      warnings.changed(path, 'the allowed_tools list has no Messages equivalent; only its mode is sent');
      const mode = isPlainObject(value.allowed_tools) ? value.allowed_tools.mode : undefined;
      return { type: mode === 'required' ? 'any' : 'auto' };
    }
    if (value.type === 'custom') {
      warnings.dropped(path, 'custom tools have no Messages equivalent');
      return undefined;
    }
  }
  throw new TranslationError(`${path}: not a valid tool choice`);
}

function outputConfigFor(body: JsonObject, warnings: Warnings): JsonObject | undefined {
  const config: JsonObject = {};
  const format = body.response_format;
  if (isPlainObject(format)) {
    if (format.type === 'json_schema') {
      const schema = isPlainObject(format.json_schema) ? format.json_schema.schema : undefined;
      if (isPlainObject(schema)) config.format = { type: 'json_schema', schema };
      else warnings.dropped('response_format', 'a json_schema format without a schema');
    } else if (format.type === 'json_object') {
      warnings.dropped('response_format', 'json_object mode has no Messages equivalent (json_schema has)');
    }
  }
  const effort = body.reasoning_effort;
  if (typeof effort === 'string' && ANTHROPIC_EFFORTS.has(effort)) {
    config.effort = effort;
  } else if (effort === 'minimal') {
    config.effort = 'low';
    warnings.changed('reasoning_effort', 'minimal is sent as output_config.effort low, the lowest Anthropic effort');
  } else if (isSet(effort)) {
    warnings.dropped('reasoning_effort', `no Anthropic effort matches ${JSON.stringify(effort)}`);
  }
  return Object.keys(config).length > 0 ? config : undefined;
}
