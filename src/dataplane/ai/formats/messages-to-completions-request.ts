// A Messages request (Anthropic) as a Chat Completions request (OpenAI). Every mapping is listed in
// docs/llm-formats.md; fields outside the Messages schema are carried over unchanged.
import { isPlainObject, isSet, stringOr, unknownFields } from './json.ts';
import { base64DataUrl, urlForSource } from './media.ts';
import { type JsonObject, type RequestTranslation, TranslationError } from './types.ts';
import { Warnings, withCarriedOver } from './warnings.ts';

// MessageCreateParams fields (@anthropic-ai/sdk resources/messages) that gw maps. temperature and
// top_p are long-standing Messages parameters the current SDK types no longer list; gw still maps them.
const MAPPED_FIELDS = [
  'model',
  'messages',
  'system',
  'max_tokens',
  'stop_sequences',
  'stream',
  'temperature',
  'top_p',
  'tools',
  'tool_choice',
  'metadata',
  'output_config',
  'service_tier',
];

// MessageCreateParams fields with no Chat Completions equivalent: dropped, with a warning when set.
const NO_EQUIVALENT_FIELDS = [
  'top_k',
  'thinking',
  'cache_control',
  'container',
  'diagnostics',
  'inference_geo',
  'speed',
  'user_profile_id',
  'workspace_id',
];

const KNOWN_FIELDS: ReadonlySet<string> = new Set([...MAPPED_FIELDS, ...NO_EQUIVALENT_FIELDS]);

// Anthropic content blocks that Chat Completions cannot carry (server tools, reasoning, search results).
const BLOCKS_WITHOUT_EQUIVALENT = new Set([
  'thinking',
  'redacted_thinking',
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

// Fields of an Anthropic custom tool that a Chat Completions function cannot carry.
const TOOL_FIELDS_WITHOUT_EQUIVALENT = [
  'cache_control',
  'defer_loading',
  'eager_input_streaming',
  'input_examples',
  'allowed_callers',
];

/** Translates a Messages request body to a Chat Completions request body. */
export function messagesToCompletionsRequest(body: JsonObject): RequestTranslation {
  if (!isPlainObject(body)) throw new TranslationError('the request body must be a JSON object');
  const warnings = new Warnings('Chat Completions');
  const out: JsonObject = {};
  if (body.model !== undefined) out.model = body.model;
  const messages: JsonObject[] = [];
  if (isSet(body.system)) messages.push(systemMessage(body.system, 'system', warnings));
  if (!Array.isArray(body.messages)) throw new TranslationError('messages: must be an array');
  body.messages.forEach((message, i) => {
    messages.push(...convertMessage(message, `messages[${i}]`, warnings));
  });
  out.messages = messages;
  if (isSet(body.max_tokens)) out.max_completion_tokens = body.max_tokens;
  if (Array.isArray(body.stop_sequences) && body.stop_sequences.length > 0) out.stop = body.stop_sequences;
  if (isSet(body.temperature)) out.temperature = body.temperature;
  if (isSet(body.top_p)) out.top_p = body.top_p;
  if (typeof body.stream === 'boolean') out.stream = body.stream;
  // Usage arrives in the last chunk only when asked for; a Messages client always gets usage.
  if (body.stream === true) out.stream_options = { include_usage: true };

  const tools = convertTools(body.tools, warnings);
  if (tools !== undefined) out.tools = tools;
  const choice = body.tool_choice;
  if (isSet(choice)) {
    out.tool_choice = toolChoice(choice);
    if (isPlainObject(choice) && choice.disable_parallel_tool_use === true && tools !== undefined) {
      out.parallel_tool_calls = false;
    }
  }

  if (isPlainObject(body.metadata)) {
    for (const [key, value] of Object.entries(body.metadata)) {
      if (key === 'user_id' && typeof value === 'string') out.user = value;
      else if (isSet(value)) warnings.dropped(`metadata.${key}`);
    }
  }
  if (isPlainObject(body.output_config)) outputConfig(body.output_config, out, warnings);
  if (body.service_tier === 'auto') out.service_tier = 'auto';
  else if (body.service_tier === 'standard_only') out.service_tier = 'default';
  else if (isSet(body.service_tier)) warnings.dropped('service_tier');

  for (const field of NO_EQUIVALENT_FIELDS) {
    if (!isSet(body[field])) continue;
    if (field === 'thinking' && isPlainObject(body.thinking) && body.thinking.type === 'disabled') continue;
    warnings.dropped(field);
  }
  return warnings.result(withCarriedOver(out, unknownFields(body, KNOWN_FIELDS), warnings));
}

function systemMessage(system: unknown, path: string, warnings: Warnings): JsonObject {
  if (typeof system === 'string') return { role: 'system', content: system };
  if (!Array.isArray(system)) throw new TranslationError(`${path}: must be a string or an array of text blocks`);
  return { role: 'system', content: system.map((block, j) => textLike(block, `${path}[${j}]`, warnings)) };
}

function textLike(block: unknown, path: string, warnings: Warnings): unknown {
  return isPlainObject(block) && block.type === 'text' ? textPart(block, path, warnings) : block;
}

/** One Anthropic message as one or more Chat Completions messages. */
function convertMessage(message: unknown, path: string, warnings: Warnings): JsonObject[] {
  if (!isPlainObject(message)) throw new TranslationError(`${path}: must be an object`);
  switch (message.role) {
    case 'user':
      return userMessages(message.content, path, warnings);
    case 'assistant':
      return [assistantMessage(message.content, path, warnings)];
    case 'system':
      return [systemMessage(message.content, `${path}.content`, warnings)];
    default:
      throw new TranslationError(`${path}.role: unknown role ${JSON.stringify(message.role)}`);
  }
}

/**
 * A user turn: its tool_result blocks become `tool` messages (which must directly follow the
 * assistant's tool calls), then the rest of the turn is one user message.
 */
function userMessages(content: unknown, path: string, warnings: Warnings): JsonObject[] {
  if (typeof content === 'string') return [{ role: 'user', content }];
  if (!Array.isArray(content)) throw new TranslationError(`${path}.content: must be a string or an array`);
  const toolMessages: JsonObject[] = [];
  const movedImages: unknown[] = [];
  const parts: unknown[] = [];
  content.forEach((block, j) => {
    const blockPath = `${path}.content[${j}]`;
    if (isPlainObject(block) && block.type === 'tool_result') {
      toolMessages.push(toolMessage(block, blockPath, warnings, movedImages));
      return;
    }
    const part = userPart(block, blockPath, warnings);
    if (part !== undefined) parts.push(part);
  });
  const rest = [...movedImages, ...parts];
  return rest.length > 0 ? [...toolMessages, { role: 'user', content: rest }] : toolMessages;
}

function userPart(block: unknown, path: string, warnings: Warnings): unknown {
  if (!isPlainObject(block)) return block;
  switch (block.type) {
    case 'text':
      return textPart(block, path, warnings);
    case 'image':
      return imagePart(block, path, warnings);
    case 'document':
      return documentPart(block, path, warnings);
    case 'tool_use':
      warnings.dropped(path, 'a tool_use block belongs in an assistant turn');
      return undefined;
    default:
      if (typeof block.type === 'string' && BLOCKS_WITHOUT_EQUIVALENT.has(block.type)) {
        warnings.dropped(path, `a ${block.type} block has no Chat Completions equivalent`);
        return undefined;
      }
      return block;
  }
}

/** Copies a block's fields gw does not know onto its part. */
function carryBlockFields(block: JsonObject, part: JsonObject, known: readonly string[]): JsonObject {
  for (const [key, value] of Object.entries(block)) if (!known.includes(key) && !(key in part)) part[key] = value;
  return part;
}

function withCacheBreakpoint(block: JsonObject, part: JsonObject): JsonObject {
  if (isSet(block.cache_control)) part.prompt_cache_breakpoint = { mode: 'explicit' };
  return part;
}

function textPart(block: JsonObject, path: string, warnings: Warnings): JsonObject {
  if (typeof block.text !== 'string') throw new TranslationError(`${path}.text: must be a string`);
  if (isSet(block.citations)) warnings.dropped(`${path}.citations`);
  const part = withCacheBreakpoint(block, { type: 'text', text: block.text });
  return carryBlockFields(block, part, ['type', 'text', 'cache_control', 'citations']);
}

function imagePart(block: JsonObject, path: string, warnings: Warnings): JsonObject | undefined {
  const url = urlForSource(block.source);
  if (url === undefined) {
    warnings.dropped(path, 'only base64 and url image sources have a Chat Completions equivalent');
    return undefined;
  }
  if (isSet(block.transformations)) warnings.dropped(`${path}.transformations`);
  const part = withCacheBreakpoint(block, { type: 'image_url', image_url: { url } });
  return carryBlockFields(block, part, ['type', 'source', 'cache_control', 'transformations']);
}

/** A base64 PDF becomes a file part, a plain-text document a text part; other sources are dropped. */
function documentPart(block: JsonObject, path: string, warnings: Warnings): JsonObject | undefined {
  const source = isPlainObject(block.source) ? block.source : {};
  let part: JsonObject | undefined;
  if (source.type === 'base64' && source.media_type === 'application/pdf' && typeof source.data === 'string') {
    const filename = stringOr(block.title) ?? 'document.pdf';
    part = { type: 'file', file: { filename, file_data: base64DataUrl('application/pdf', source.data) } };
  } else if (source.type === 'text' && typeof source.data === 'string') {
    part = { type: 'text', text: source.data };
  }
  if (!part) {
    warnings.dropped(path, 'only base64 PDF and plain-text documents have a Chat Completions equivalent');
    return undefined;
  }
  for (const field of ['citations', 'context']) if (isSet(block[field])) warnings.dropped(`${path}.${field}`);
  withCacheBreakpoint(block, part);
  return carryBlockFields(block, part, ['type', 'source', 'cache_control', 'citations', 'context', 'title']);
}

function toolMessage(block: JsonObject, path: string, warnings: Warnings, movedImages: unknown[]): JsonObject {
  if (typeof block.tool_use_id !== 'string') throw new TranslationError(`${path}.tool_use_id: required`);
  if (block.is_error === true) warnings.dropped(`${path}.is_error`);
  if (isSet(block.cache_control)) warnings.dropped(`${path}.cache_control`);
  const content = block.content;
  let toolContent: unknown = '';
  if (typeof content === 'string') {
    toolContent = content;
  } else if (Array.isArray(content)) {
    const texts: unknown[] = [];
    content.forEach((item, k) => {
      const itemPath = `${path}.content[${k}]`;
      if (isPlainObject(item) && item.type === 'image') {
        const image = imagePart(item, itemPath, warnings);
        if (image) {
          movedImages.push(image);
          warnings.changed(itemPath, 'tool messages carry only text: the image is sent in the user message after them');
        }
      } else if (isPlainObject(item) && item.type === 'text') {
        texts.push(textPart(item, itemPath, warnings));
      } else {
        const part = userPart(item, itemPath, warnings);
        if (part !== undefined) texts.push(part);
      }
    });
    const only = texts[0];
    const single = texts.length === 1 && isPlainObject(only) && only.type === 'text' && Object.keys(only).length === 2;
    toolContent = single ? only.text : texts;
  } else if (content !== undefined && content !== null) {
    throw new TranslationError(`${path}.content: must be a string or an array`);
  }
  return { role: 'tool', tool_call_id: block.tool_use_id, content: toolContent };
}

function assistantMessage(content: unknown, path: string, warnings: Warnings): JsonObject {
  if (typeof content === 'string') return { role: 'assistant', content };
  if (!Array.isArray(content)) throw new TranslationError(`${path}.content: must be a string or an array`);
  const texts: unknown[] = [];
  const calls: JsonObject[] = [];
  content.forEach((block, j) => {
    const blockPath = `${path}.content[${j}]`;
    if (!isPlainObject(block)) {
      texts.push(block);
    } else if (block.type === 'text') {
      texts.push(textPart(block, blockPath, warnings));
    } else if (block.type === 'tool_use') {
      if (typeof block.id !== 'string' || typeof block.name !== 'string') {
        throw new TranslationError(`${blockPath}: a tool_use block needs an id and a name`);
      }
      const args = JSON.stringify(block.input ?? {});
      calls.push({ id: block.id, type: 'function', function: { name: block.name, arguments: args } });
    } else if (typeof block.type === 'string' && BLOCKS_WITHOUT_EQUIVALENT.has(block.type)) {
      warnings.dropped(blockPath, `a ${block.type} block has no Chat Completions equivalent`);
    } else {
      texts.push(block);
    }
  });
  const out: JsonObject = { role: 'assistant' };
  const only = texts[0];
  if (texts.length === 1 && isPlainObject(only) && only.type === 'text' && Object.keys(only).length === 2) {
    out.content = only.text;
  } else if (texts.length > 0) {
    out.content = texts;
  } else {
    out.content = calls.length > 0 ? null : '';
  }
  if (calls.length > 0) out.tool_calls = calls;
  return out;
}

function convertTools(tools: unknown, warnings: Warnings): unknown[] | undefined {
  if (!isSet(tools)) return undefined;
  if (!Array.isArray(tools)) throw new TranslationError('tools: must be an array');
  const out: unknown[] = [];
  tools.forEach((tool, i) => {
    const path = `tools[${i}]`;
    if (!isPlainObject(tool)) {
      out.push(tool);
      return;
    }
    const custom = tool.type === undefined || tool.type === null || tool.type === 'custom';
    if (!custom) {
      warnings.dropped(path, `the ${String(tool.type)} tool has no Chat Completions equivalent`);
      return;
    }
    if (typeof tool.name !== 'string') throw new TranslationError(`${path}.name: required`);
    const fn: JsonObject = { name: tool.name };
    if (typeof tool.description === 'string') fn.description = tool.description;
    if (isPlainObject(tool.input_schema)) fn.parameters = tool.input_schema;
    if (typeof tool.strict === 'boolean') fn.strict = tool.strict;
    for (const field of TOOL_FIELDS_WITHOUT_EQUIVALENT) if (isSet(tool[field])) warnings.dropped(`${path}.${field}`);
    carryBlockFields(tool, fn, [
      'type',
      'name',
      'description',
      'input_schema',
      'strict',
      ...TOOL_FIELDS_WITHOUT_EQUIVALENT,
    ]);
    out.push({ type: 'function', function: fn });
  });
  return out.length > 0 ? out : undefined;
}

function toolChoice(choice: unknown): unknown {
  if (isPlainObject(choice)) {
    switch (choice.type) {
      case 'auto':
        return 'auto';
      case 'any':
        return 'required';
      case 'none':
        return 'none';
      case 'tool':
        if (typeof choice.name === 'string') return { type: 'function', function: { name: choice.name } };
    }
  }
  throw new TranslationError('tool_choice: not a valid tool choice');
}

function outputConfig(config: JsonObject, out: JsonObject, warnings: Warnings): void {
  for (const [key, value] of Object.entries(config)) {
    if (key === 'format' && isPlainObject(value) && value.type === 'json_schema' && isPlainObject(value.schema)) {
      out.response_format = {
        type: 'json_schema',
        json_schema: { name: 'response', schema: value.schema, strict: true },
      };
    } else if (key === 'effort' && typeof value === 'string') {
      out.reasoning_effort = value;
    } else if (isSet(value)) {
      warnings.dropped(`output_config.${key}`);
    }
  }
}
