// Chat Completions requests (OpenAI, ChatCompletionCreateParams of openai's
// resources/chat/completions) read into the chat form and written from it. Every mapping is
// listed in docs/llm-formats.md; fields outside the Chat Completions schema are carried over.

import { newChatRequest } from '../form/request.ts';
import { completionsCallExtra, completionsCallSignature } from '../form/signatures.ts';
import { argumentsJson } from '../form/tool-arguments.ts';
import type {
  ChatRequest,
  DocumentPart,
  Dropped,
  FunctionTool,
  ImagePart,
  MediaSource,
  Message,
  Part,
  TextPart,
  Tool,
  ToolCallPart,
  ToolChoice,
  ToolResultPart,
} from '../form/types.ts';
import { extraFields, isPlainObject, isSet, numberOr, stringOr, unknownFields } from '../json.ts';
import { base64DataUrl, mediaSourceOfUrl, parseBase64DataUrl } from '../media.ts';
import { readOpenAiFormat, readOpenAiServiceTier, readOpenAiUser, writeOpenAiServiceTier } from '../openai-fields.ts';
import { type JsonObject, type RequestTranslation, TranslationError } from '../types.ts';
import { Warnings, withCarriedOver, withExtra } from '../warnings.ts';
import { messageReasoningFields, readMessageReasoning } from './reasoning.ts';

// ChatCompletionCreateParams fields that the form holds.
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
  'frequency_penalty',
  'presence_penalty',
  'seed',
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

// ChatCompletionCreateParams fields only Chat Completions has: the form notes them as dropped when set.
const OWN_FIELDS = [
  'audio',
  'logit_bias',
  'logprobs',
  'metadata',
  'modalities',
  'moderation',
  'prediction',
  'prompt_cache_key',
  'prompt_cache_options',
  'prompt_cache_retention',
  'store',
  'top_logprobs',
  'verbosity',
  'web_search_options',
];

const KNOWN_FIELDS: ReadonlySet<string> = new Set([...MAPPED_FIELDS, ...OWN_FIELDS]);

const CHAT_COMPLETIONS = { full: 'Chat Completions', short: 'Chat Completions' };

// ---------------------------------------------------------------------------------------------
// Reading: a Chat Completions request body into the form. Throws TranslationError for a body
// Chat Completions itself rejects.

export function readCompletionsRequest(body: JsonObject): ChatRequest {
  if (!isPlainObject(body)) throw new TranslationError('the request body must be a JSON object');
  const request = newChatRequest(readMessages(body.messages));
  const dropped = request.dropped;
  if (body.model !== undefined) request.model = body.model;
  const maxTokens = numberOr(body.max_completion_tokens) ?? numberOr(body.max_tokens);
  if (maxTokens !== undefined) request.maxTokens = maxTokens;
  if (typeof body.stop === 'string') request.stopSequences = [body.stop];
  else if (Array.isArray(body.stop)) request.stopSequences = body.stop.filter((s) => typeof s === 'string');
  if (request.stopSequences !== undefined) request.stopSequencesPath = 'stop';
  if (isSet(body.temperature)) request.temperature = body.temperature;
  if (isSet(body.top_p)) request.topP = body.top_p;
  if (isSet(body.frequency_penalty))
    request.frequencyPenalty = { value: body.frequency_penalty, path: 'frequency_penalty' };
  if (isSet(body.presence_penalty))
    request.presencePenalty = { value: body.presence_penalty, path: 'presence_penalty' };
  if (isSet(body.seed)) request.seed = { value: body.seed, path: 'seed' };
  if (typeof body.stream === 'boolean') request.stream = body.stream;
  if (isPlainObject(body.stream_options)) {
    // include_usage is honoured by the stream translator (streamIncludesUsage).
    for (const key of Object.keys(body.stream_options)) {
      if (key !== 'include_usage') dropped.push({ kind: 'dropped', path: `stream_options.${key}` });
    }
  }
  const tools = readTools(body);
  if (tools !== undefined) request.tools = tools;
  const choice = readToolChoice(body, dropped);
  if (choice !== undefined) request.toolChoice = choice;
  if (body.parallel_tool_calls === false) request.parallelToolCalls = false;

  readOpenAiUser(body, request);
  readOpenAiFormat(body.response_format, 'response_format', request, true);
  if (isSet(body.reasoning_effort))
    request.reasoning = { effort: { value: body.reasoning_effort, path: 'reasoning_effort' } };
  readOpenAiServiceTier(body, request);
  const n = numberOr(body.n) ?? 1;
  if (n > 1) request.choices = { value: n, path: 'n' };
  for (const field of OWN_FIELDS) {
    if (!isSet(body[field])) continue;
    // Text output only is what every other format produces anyway.
    if (field === 'modalities' && Array.isArray(body.modalities) && body.modalities.every((m) => m === 'text'))
      continue;
    dropped.push({ kind: 'dropped', path: field });
  }
  request.extra = unknownFields(body, KNOWN_FIELDS);
  readThinking(body, request);
  return request;
}

/**
 * Anthropic's `thinking` switch on a Chat Completions request (outside OpenAI's schema; LiteLLM's
 * convention for Claude): enabled with a budget, it is the form's extended thinking, which every
 * target that has it writes (Converse's additionalModelRequestFields, Gemini's thinkingConfig) —
 * the way a Chat Completions client asks for the signed thinking it gets back as
 * reasoning_content. Other values stay carried over unchanged, as any unknown field.
 */
function readThinking(body: JsonObject, request: ChatRequest): void {
  const thinking = body.thinking;
  if (!isPlainObject(thinking) || thinking.type !== 'enabled' || Object.keys(thinking).length !== 2) return;
  const budgetTokens = numberOr(thinking.budget_tokens);
  if (budgetTokens === undefined) return;
  request.reasoning = { ...request.reasoning, thinking: { budgetTokens, path: 'thinking' } };
  delete request.extra.thinking;
}

function readMessages(messages: unknown): Message[] {
  if (!Array.isArray(messages)) throw new TranslationError('messages: must be an array');
  const out: Message[] = [];
  // Legacy function calling has no call ids: each call is named so that its result can refer to it.
  const legacy = { calls: 0, lastId: undefined as string | undefined };
  for (let i = 0; i < messages.length; i++) out.push(readMessage(messages[i], `messages[${i}]`, legacy));
  return out;
}

function nameDropped(message: JsonObject, path: string): Dropped[] | undefined {
  return isSet(message.name) ? [{ kind: 'dropped', path: `${path}.name` }] : undefined;
}

function readMessage(message: unknown, path: string, legacy: { calls: number; lastId: string | undefined }): Message {
  if (!isPlainObject(message)) throw new TranslationError(`${path}: must be an object`);
  switch (message.role) {
    case 'system':
    case 'developer': {
      const content = message.content;
      let parts: string | Part[];
      if (typeof content === 'string') parts = content;
      else if (Array.isArray(content)) parts = content.map((part, j) => systemPart(part, `${path}.content[${j}]`));
      else throw new TranslationError(`${path}.content: must be a string or an array`);
      return withDropped({ role: message.role, content: parts, path }, nameDropped(message, path));
    }
    case 'user':
      return withDropped(
        { role: 'user', content: userContent(message.content, `${path}.content`), path },
        nameDropped(message, path),
      );
    case 'assistant':
      return assistantMessage(message, path, legacy);
    case 'tool':
      return { role: 'user', content: [toolResult(message, path)], path };
    case 'function': {
      if (legacy.lastId === undefined) {
        throw new TranslationError(`${path}: a function message must follow an assistant function_call`);
      }
      const content = typeof message.content === 'string' ? message.content : undefined;
      const result: ToolResultPart = { type: 'tool_result', toolCallId: legacy.lastId, content, path };
      return { role: 'user', content: [result], path };
    }
    default:
      throw new TranslationError(`${path}.role: unknown role ${JSON.stringify(message.role)}`);
  }
}

function withDropped(node: Message, dropped: Dropped[] | undefined): Message {
  if (dropped !== undefined) node.dropped = dropped;
  return node;
}

function isTextPart(part: unknown): part is JsonObject & { text: string } {
  return isPlainObject(part) && part.type === 'text' && typeof part.text === 'string';
}

function withCache<T extends TextPart | ImagePart | DocumentPart>(source: JsonObject, part: T, path: string): T {
  if (isSet(source.prompt_cache_breakpoint)) part.cache = { path: `${path}.prompt_cache_breakpoint` };
  return part;
}

function textPart(part: JsonObject & { text: string }, path: string): TextPart {
  const text: TextPart = withCache(part, { type: 'text', text: part.text, path }, path);
  const extra = extraFields(part, ['type', 'text', 'prompt_cache_breakpoint']);
  if (extra !== undefined) text.extra = extra;
  return text;
}

function systemPart(part: unknown, path: string): Part {
  return isTextPart(part) ? textPart(part, path) : { type: 'raw', value: part, path };
}

function userContent(content: unknown, path: string): string | Part[] {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) throw new TranslationError(`${path}: must be a string or an array`);
  return content.map((part, j) => userPart(part, `${path}[${j}]`));
}

function userPart(part: unknown, path: string): Part {
  if (!isPlainObject(part)) return { type: 'raw', value: part, path };
  switch (part.type) {
    case 'text':
      return isTextPart(part) ? textPart(part, path) : { type: 'raw', value: part, path };
    case 'image_url':
      return imagePart(part, path);
    case 'file':
      return documentPart(part, path);
    case 'input_audio':
      return { kind: 'dropped', path, what: 'audio input' };
    default:
      return { type: 'raw', value: part, path };
  }
}

function imagePart(part: JsonObject, path: string): ImagePart {
  const image = part.image_url;
  const url = typeof image === 'string' ? image : stringOr(isPlainObject(image) ? image.url : undefined);
  if (url === undefined) throw new TranslationError(`${path}.image_url.url: must be a string`);
  const out: ImagePart = withCache(part, { type: 'image', source: mediaSourceOfUrl(url), path }, path);
  if (isPlainObject(image) && isSet(image.detail) && image.detail !== 'auto') {
    out.detail = { value: image.detail, path: `${path}.image_url.detail` };
  }
  const extra = extraFields(part, ['type', 'image_url', 'prompt_cache_breakpoint']);
  if (extra !== undefined) out.extra = extra;
  return out;
}

/** A file part: inline data (a base64 data: URL) or an OpenAI file id. */
function documentPart(part: JsonObject, path: string): DocumentPart {
  const file = isPlainObject(part.file) ? part.file : {};
  const inline = typeof file.file_data === 'string' ? parseBase64DataUrl(file.file_data) : undefined;
  let source: MediaSource;
  if (inline) source = { kind: 'base64', mediaType: inline.mediaType, data: inline.data };
  else if (typeof file.file_id === 'string') source = { kind: 'file', fileId: file.file_id };
  else source = { kind: 'other', value: file };
  const out: DocumentPart = withCache(part, { type: 'document', source, path }, path);
  if (typeof file.filename === 'string') out.name = file.filename;
  const extra = extraFields(part, ['type', 'file', 'prompt_cache_breakpoint']);
  if (extra !== undefined) out.extra = extra;
  return out;
}

function assistantMessage(
  message: JsonObject,
  path: string,
  legacy: { calls: number; lastId: string | undefined },
): Message {
  const dropped = nameDropped(message, path) ?? [];
  if (isSet(message.audio)) dropped.push({ kind: 'dropped', path: `${path}.audio`, what: 'audio replies' });
  const hasCalls =
    (Array.isArray(message.tool_calls) && message.tool_calls.length > 0) || isPlainObject(message.function_call);
  const refusal = stringOr(message.refusal);
  const content = message.content;
  const notes = dropped.length > 0 ? dropped : undefined;
  // The thinking the message was answered with comes first, where the provider that signed it wants it.
  const reasoning = readMessageReasoning(message, path);
  if (typeof content === 'string' && !hasCalls && !refusal && reasoning === undefined) {
    return withDropped({ role: 'assistant', content, path }, notes);
  }
  const parts: Part[] = reasoning === undefined ? [] : [reasoning];
  if (typeof content === 'string') {
    parts.push({ type: 'text', text: content, path: `${path}.content` });
  } else if (Array.isArray(content)) {
    content.forEach((part, j) => {
      const partPath = `${path}.content[${j}]`;
      if (isTextPart(part)) parts.push(textPart(part, partPath));
      else if (isPlainObject(part) && part.type === 'refusal' && typeof part.refusal === 'string') {
        parts.push({ type: 'text', text: part.refusal, refusal: true, path: partPath });
      } else parts.push({ type: 'raw', value: part, path: partPath });
    });
  } else if (content !== undefined && content !== null) {
    throw new TranslationError(`${path}.content: must be a string, an array or null`);
  }
  if (refusal) parts.push({ type: 'text', text: refusal, refusal: true, path: `${path}.refusal` });
  if (Array.isArray(message.tool_calls)) {
    message.tool_calls.forEach((call, j) => {
      parts.push(toolCall(call, `${path}.tool_calls[${j}]`));
    });
  }
  const fn = message.function_call;
  if (isPlainObject(fn)) {
    legacy.lastId = `legacy_function_call_${++legacy.calls}`;
    parts.push({
      type: 'tool_call',
      id: legacy.lastId,
      name: stringOr(fn.name) ?? '',
      arguments: fn.arguments,
      argumentsPath: `${path}.function_call.arguments`,
      path: `${path}.function_call`,
    });
  }
  return withDropped({ role: 'assistant', content: parts, path }, notes);
}

function toolCall(call: unknown, path: string): ToolCallPart | Dropped {
  if (!isPlainObject(call)) throw new TranslationError(`${path}: must be an object`);
  if (call.type === 'custom') return { kind: 'dropped', path, what: 'custom tool calls' };
  const fn = call.function;
  if (!isPlainObject(fn) || typeof fn.name !== 'string') throw new TranslationError(`${path}.function.name: required`);
  if (typeof call.id !== 'string') throw new TranslationError(`${path}.id: required`);
  const part: ToolCallPart = {
    type: 'tool_call',
    id: call.id,
    name: fn.name,
    arguments: fn.arguments,
    argumentsPath: `${path}.function.arguments`,
    path,
  };
  // Google's convention for the signature Gemini gave the call (form/signatures.ts).
  const signature = completionsCallSignature(call);
  if (signature !== undefined) part.signature = signature;
  return part;
}

function toolResult(message: JsonObject, path: string): ToolResultPart {
  if (typeof message.tool_call_id !== 'string') throw new TranslationError(`${path}.tool_call_id: required`);
  const content = message.content;
  let parts: string | Part[] | undefined;
  if (typeof content === 'string') parts = content;
  else if (Array.isArray(content)) parts = content.map((part, j) => userPart(part, `${path}.content[${j}]`));
  else if (content !== undefined && content !== null) {
    throw new TranslationError(`${path}.content: must be a string or an array`);
  }
  return { type: 'tool_result', toolCallId: message.tool_call_id, content: parts, path };
}

function functionTool(fn: unknown, path: string, tool: JsonObject | undefined): FunctionTool {
  if (!isPlainObject(fn) || typeof fn.name !== 'string') throw new TranslationError(`${path}.name: required`);
  const out: FunctionTool = { type: 'function', name: fn.name, path };
  if (typeof fn.description === 'string') out.description = fn.description;
  if (isPlainObject(fn.parameters)) out.parameters = fn.parameters;
  if (typeof fn.strict === 'boolean') out.strict = fn.strict;
  // The function's own unknown fields, then the tool's (the function's win).
  const extra = extraFields(fn, ['name', 'description', 'parameters', 'strict']) ?? {};
  const toolExtra = tool === undefined ? undefined : extraFields(tool, ['type', 'function']);
  if (toolExtra !== undefined) for (const key in toolExtra) if (!(key in extra)) extra[key] = toolExtra[key];
  if (Object.keys(extra).length > 0) out.extra = extra;
  return out;
}

function readTools(body: JsonObject): Tool[] | undefined {
  const tools: Tool[] = [];
  if (Array.isArray(body.tools)) {
    body.tools.forEach((tool, i) => {
      const path = `tools[${i}]`;
      if (isPlainObject(tool) && tool.type === 'function')
        tools.push(functionTool(tool.function, `${path}.function`, tool));
      else if (isPlainObject(tool) && tool.type === 'custom')
        tools.push({ kind: 'dropped', path, what: 'custom tools' });
      // Other kinds are not Chat Completions tools (for example an Anthropic server tool): carried over.
      else tools.push({ type: 'raw', value: tool, path });
    });
  } else if (isSet(body.tools)) {
    throw new TranslationError('tools: must be an array');
  }
  if (Array.isArray(body.functions)) {
    body.functions.forEach((fn, i) => {
      tools.push(functionTool(fn, `functions[${i}]`, undefined));
    });
  }
  return tools.length > 0 ? tools : undefined;
}

function readToolChoice(body: JsonObject, dropped: Dropped[]): ToolChoice | undefined {
  const legacy = !isSet(body.tool_choice);
  const value = legacy ? body.function_call : body.tool_choice;
  const path = legacy ? 'function_call' : 'tool_choice';
  if (!isSet(value)) return undefined;
  if (value === 'auto' || value === 'none' || value === 'required') return { mode: value, path };
  if (isPlainObject(value)) {
    if (legacy && typeof value.name === 'string') return { mode: 'tool', name: value.name, path };
    if (value.type === 'function' && isPlainObject(value.function) && typeof value.function.name === 'string') {
      return { mode: 'tool', name: value.function.name, path };
    }
    if (value.type === 'allowed_tools') {
      const allowed = isPlainObject(value.allowed_tools) ? value.allowed_tools : {};
      const tools = Array.isArray(allowed.tools) ? allowed.tools : [];
      return { mode: allowed.mode === 'required' ? 'required' : 'auto', allowed: tools, path };
    }
    if (value.type === 'custom') {
      dropped.push({ kind: 'dropped', path, what: 'custom tools' });
      return undefined;
    }
  }
  throw new TranslationError(`${path}: not a valid tool choice`);
}

// ---------------------------------------------------------------------------------------------
// Writing: the form as a Chat Completions request body.

export function writeCompletionsRequest(request: ChatRequest): RequestTranslation {
  const warnings = new Warnings(CHAT_COMPLETIONS);
  const out: JsonObject = {};
  if (request.model !== undefined) out.model = request.model;
  const messages: JsonObject[] = [];
  for (const message of request.messages) writeMessage(message, messages, warnings);
  out.messages = messages;
  if (request.maxTokens !== undefined) out.max_completion_tokens = request.maxTokens;
  if (request.stopSequences !== undefined && request.stopSequences.length > 0) out.stop = request.stopSequences;
  if (request.temperature !== undefined) out.temperature = request.temperature;
  if (request.topP !== undefined) out.top_p = request.topP;
  if (request.frequencyPenalty !== undefined) out.frequency_penalty = request.frequencyPenalty.value;
  if (request.presencePenalty !== undefined) out.presence_penalty = request.presencePenalty.value;
  if (request.seed !== undefined) out.seed = request.seed.value;
  if (request.choices !== undefined) out.n = request.choices.value;
  if (request.stream !== undefined) out.stream = request.stream;
  // Usage arrives in the last chunk only when asked for; the client's format always reports usage.
  if (request.stream === true) out.stream_options = { include_usage: true };

  const tools = writeTools(request.tools, warnings);
  if (tools !== undefined) out.tools = tools;
  const choice = request.toolChoice;
  if (choice !== undefined) {
    out.tool_choice = writeToolChoice(choice);
    if (request.parallelToolCalls === false && tools !== undefined) out.parallel_tool_calls = false;
  }
  if (request.user !== undefined) out.user = request.user.value;
  const format = request.responseFormat;
  if (format?.type === 'json_schema') {
    out.response_format = {
      type: 'json_schema',
      json_schema: { name: format.name ?? 'response', schema: format.schema, strict: format.strict ?? true },
    };
  } else if (format?.type === 'json_object') {
    out.response_format = { type: 'json_object' };
  }
  const reasoning = request.reasoning;
  if (reasoning?.effort !== undefined) out.reasoning_effort = reasoning.effort.value;
  if (reasoning?.thinking !== undefined) warnings.dropped(reasoning.thinking.path);
  writeOpenAiServiceTier(request, out, warnings);
  if (request.topK !== undefined) warnings.dropped(request.topK.path);
  warnings.report(request.dropped);
  return warnings.result(withCarriedOver(out, request.extra, warnings));
}

function writeMessage(message: Message, out: JsonObject[], warnings: Warnings): void {
  warnings.report(message.dropped);
  switch (message.role) {
    case 'system':
    case 'developer': {
      const content = message.content;
      const written = typeof content === 'string' ? content : writeParts(content, warnings);
      out.push({ role: message.role, content: written });
      return;
    }
    case 'user':
      writeUserMessage(message.content, out, warnings);
      return;
    case 'assistant':
      out.push(writeAssistantMessage(message.content, warnings));
  }
}

function writeParts(parts: Part[], warnings: Warnings): unknown[] {
  const out: unknown[] = [];
  for (const part of parts) {
    const written = writePart(part, warnings);
    if (written !== undefined) out.push(written);
  }
  return out;
}

/**
 * A user turn: its tool results become `tool` messages (which must directly follow the
 * assistant's tool calls), then the rest of the turn is one user message.
 */
function writeUserMessage(content: string | Part[], out: JsonObject[], warnings: Warnings): void {
  if (typeof content === 'string') {
    out.push({ role: 'user', content });
    return;
  }
  const movedImages: unknown[] = [];
  const parts: unknown[] = [];
  for (const part of content) {
    if ('type' in part && part.type === 'tool_result') {
      out.push(toolMessage(part, warnings, movedImages));
      continue;
    }
    const written = writePart(part, warnings);
    if (written !== undefined) parts.push(written);
  }
  if (movedImages.length + parts.length > 0) out.push({ role: 'user', content: [...movedImages, ...parts] });
}

function withCacheBreakpoint(part: { cache?: unknown }, out: JsonObject): JsonObject {
  if (part.cache !== undefined) out.prompt_cache_breakpoint = { mode: 'explicit' };
  return out;
}

/** A content part as a Chat Completions content part; undefined when it has no equivalent (reported). */
function writePart(part: Part, warnings: Warnings): unknown {
  if ('kind' in part) {
    warnings.report([part]);
    return undefined;
  }
  switch (part.type) {
    case 'text':
      warnings.report(part.dropped);
      return withExtra(withCacheBreakpoint(part, { type: 'text', text: part.text }), part.extra);
    case 'image': {
      const url = imageUrl(part.source);
      if (url === undefined) {
        warnings.dropped(part.path, 'only base64 and url image sources have a Chat Completions equivalent');
        return undefined;
      }
      warnings.report(part.dropped);
      if (part.detail !== undefined) warnings.dropped(part.detail.path);
      return withExtra(withCacheBreakpoint(part, { type: 'image_url', image_url: { url } }), part.extra);
    }
    case 'document':
      return documentPartOut(part, warnings);
    case 'reasoning':
      // An assistant message's reasoning is written by writeAssistantMessage; elsewhere it has no place.
      warnings.droppedWithout(part.path, 'reasoning');
      return undefined;
    case 'tool_call':
      warnings.dropped(part.path, 'a tool call belongs in an assistant turn');
      return undefined;
    case 'tool_result':
      warnings.dropped(part.path, 'a tool result belongs in a user turn');
      return undefined;
    case 'raw':
      return part.value;
  }
}

function imageUrl(source: MediaSource): string | undefined {
  if (source.kind === 'base64') return base64DataUrl(source.mediaType, source.data);
  if (source.kind === 'url') return source.url;
  return undefined;
}

/** A base64 PDF becomes a file part, a plain-text document a text part; other sources are dropped. */
function documentPartOut(part: DocumentPart, warnings: Warnings): JsonObject | undefined {
  const source = part.source;
  let out: JsonObject | undefined;
  if (source.kind === 'base64' && source.mediaType === 'application/pdf') {
    const filename = part.name ?? 'document.pdf';
    out = { type: 'file', file: { filename, file_data: base64DataUrl('application/pdf', source.data) } };
  } else if (source.kind === 'text') {
    out = { type: 'text', text: source.text };
  }
  if (!out) {
    warnings.dropped(part.path, 'only base64 PDF and plain-text documents have a Chat Completions equivalent');
    return undefined;
  }
  warnings.report(part.dropped);
  return withExtra(withCacheBreakpoint(part, out), part.extra);
}

function isPlainTextPart(part: unknown): part is { type: 'text'; text: string } {
  return isPlainObject(part) && part.type === 'text' && Object.keys(part).length === 2;
}

function toolMessage(part: ToolResultPart, warnings: Warnings, movedImages: unknown[]): JsonObject {
  if (part.isError !== undefined) warnings.dropped(part.isError.path);
  if (part.cache !== undefined) warnings.dropped(part.cache.path);
  warnings.report(part.dropped);
  const content = part.content;
  let toolContent: unknown = '';
  if (typeof content === 'string') {
    toolContent = content;
  } else if (content !== undefined) {
    const texts: unknown[] = [];
    for (const item of content) {
      if ('type' in item && item.type === 'image') {
        const image = writePart(item, warnings);
        if (image !== undefined) {
          movedImages.push(image);
          warnings.changed(
            item.path,
            'tool messages carry only text: the image is sent in the user message after them',
          );
        }
        continue;
      }
      const written = writePart(item, warnings);
      if (written !== undefined) texts.push(written);
    }
    const only = texts[0];
    toolContent = texts.length === 1 && isPlainTextPart(only) ? only.text : texts;
  }
  return { role: 'tool', tool_call_id: part.toolCallId, content: toolContent };
}

function writeAssistantMessage(content: string | Part[], warnings: Warnings): JsonObject {
  if (typeof content === 'string') return { role: 'assistant', content };
  // The reasoning the turn was answered with, for a provider that wants it back (DeepSeek's
  // thinking mode); first, as its warnings come before those of the parts it preceded.
  const reasoning = messageReasoningFields(content, warnings);
  const texts: unknown[] = [];
  const calls: JsonObject[] = [];
  for (const part of content) {
    if ('type' in part && part.type === 'reasoning') continue;
    if ('type' in part && part.type === 'tool_call') {
      warnings.report(part.dropped);
      const fn = { name: part.name, arguments: argumentsJson(part.arguments) };
      const call: JsonObject = { id: part.id ?? `call_${calls.length}`, type: 'function', function: fn };
      // For Gemini's OpenAI-compatible API, which wants the signature back where it gave it.
      if (part.signature !== undefined) call.extra_content = completionsCallExtra(part.signature);
      calls.push(call);
      continue;
    }
    const written = writePart(part, warnings);
    if (written !== undefined) texts.push(written);
  }
  const out: JsonObject = { role: 'assistant' };
  const only = texts[0];
  if (texts.length === 1 && isPlainTextPart(only)) out.content = only.text;
  else if (texts.length > 0) out.content = texts;
  else out.content = calls.length > 0 ? null : '';
  if (calls.length > 0) out.tool_calls = calls;
  return Object.assign(out, reasoning);
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
      const fn: JsonObject = { name: tool.name };
      if (tool.description !== undefined) fn.description = tool.description;
      if (tool.parameters !== undefined) fn.parameters = tool.parameters;
      if (tool.strict !== undefined) fn.strict = tool.strict;
      out.push({ type: 'function', function: withExtra(fn, tool.extra) });
    }
  }
  return out.length > 0 ? out : undefined;
}

function writeToolChoice(choice: ToolChoice): unknown {
  if (choice.mode === 'tool') return { type: 'function', function: { name: choice.name } };
  if (choice.allowed !== undefined) {
    return { type: 'allowed_tools', allowed_tools: { mode: choice.mode, tools: choice.allowed } };
  }
  return choice.mode;
}
