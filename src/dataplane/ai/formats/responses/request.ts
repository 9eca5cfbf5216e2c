// Responses API requests (OpenAI, ResponseCreateParams of openai's resources/responses) read into
// the chat form, for a provider that speaks Chat Completions or Messages. Every mapping is listed
// in docs/llm-formats.md; fields outside the Responses schema are carried over.
//
// The Responses API can keep a conversation at OpenAI (previous_response_id, conversation) and
// run a response in the background; a translated request has nowhere to keep either, so both are
// refused rather than ignored.

import { newChatRequest } from '../form/request.ts';
import { readEncryptedContent } from '../form/signatures.ts';
import type {
  ChatRequest,
  DocumentPart,
  Dropped,
  FunctionTool,
  ImagePart,
  Message,
  Part,
  ReasoningPart,
  Role,
  TextPart,
  Tool,
  ToolChoice,
  ToolResultPart,
} from '../form/types.ts';
import { extraFields, isPlainObject, isSet, numberOr, unknownFields } from '../json.ts';
import { mediaSourceOfUrl } from '../media.ts';
import { readOpenAiFormat, readOpenAiServiceTier, readOpenAiUser } from '../openai-fields.ts';
import { type JsonObject, TranslationError } from '../types.ts';
import { reasoningText } from './response-reader.ts';

// ResponseCreateParams fields that the form holds.
const MAPPED_FIELDS = [
  'model',
  'input',
  'instructions',
  'max_output_tokens',
  'temperature',
  'top_p',
  'stream',
  'tools',
  'tool_choice',
  'parallel_tool_calls',
  'text',
  'reasoning',
  'user',
  'safety_identifier',
  'service_tier',
];

// ResponseCreateParams fields only the Responses API has: the form notes them as dropped when set.
const OWN_FIELDS = [
  'include',
  'max_tool_calls',
  'metadata',
  'prompt',
  'prompt_cache_key',
  'prompt_cache_retention',
  'stream_options',
  'top_logprobs',
  'truncation',
];

// Fields that ask for state a translated request cannot have: refused.
const REFUSED_FIELDS: Record<string, string> = {
  previous_response_id: 'the provider keeps no Responses conversation state; send the whole conversation in input',
  conversation: 'the provider keeps no Responses conversation state; send the whole conversation in input',
  background: 'a translated response cannot run in the background',
};

const KNOWN_FIELDS: ReadonlySet<string> = new Set([
  ...MAPPED_FIELDS,
  ...OWN_FIELDS,
  ...Object.keys(REFUSED_FIELDS),
  'store',
]);

const ROLES: ReadonlySet<string> = new Set(['user', 'assistant', 'system', 'developer']);

/** A Responses API request body in the form. Throws TranslationError for one the API rejects or gw cannot serve. */
export function readResponsesRequest(body: JsonObject): ChatRequest {
  if (!isPlainObject(body)) throw new TranslationError('the request body must be a JSON object');
  for (const [field, why] of Object.entries(REFUSED_FIELDS)) {
    if (isSet(body[field])) throw new TranslationError(`${field}: not supported here: ${why}`);
  }
  const dropped: Dropped[] = [];
  const messages: Message[] = [];
  if (isSet(body.instructions)) {
    if (typeof body.instructions !== 'string') throw new TranslationError('instructions: must be a string');
    messages.push({ role: 'system', content: body.instructions, path: 'instructions' });
  }
  readInput(body.input, messages, dropped);
  const request = newChatRequest(messages);
  request.dropped = dropped;
  if (body.model !== undefined) request.model = body.model;
  const maxTokens = numberOr(body.max_output_tokens);
  if (maxTokens !== undefined) request.maxTokens = maxTokens;
  if (isSet(body.temperature)) request.temperature = body.temperature;
  if (isSet(body.top_p)) request.topP = body.top_p;
  if (typeof body.stream === 'boolean') request.stream = body.stream;
  const tools = readTools(body.tools);
  if (tools !== undefined) request.tools = tools;
  const choice = readToolChoice(body.tool_choice, dropped);
  if (choice !== undefined) request.toolChoice = choice;
  if (body.parallel_tool_calls === false) request.parallelToolCalls = false;
  readOpenAiUser(body, request);
  readText(body.text, request);
  if (isPlainObject(body.reasoning)) {
    if (isSet(body.reasoning.effort)) {
      request.reasoning = { effort: { value: body.reasoning.effort, path: 'reasoning.effort' } };
    }
    for (const key of Object.keys(body.reasoning)) {
      if (key !== 'effort' && isSet(body.reasoning[key])) dropped.push({ kind: 'dropped', path: `reasoning.${key}` });
    }
  }
  readOpenAiServiceTier(body, request);
  // The API stores responses by default; the translated response is not stored anywhere.
  if (body.store === true) dropped.push({ kind: 'dropped', path: 'store', why: 'the response is not stored' });
  for (const field of OWN_FIELDS) {
    // gw always gives a reasoning item the encrypted_content that carries its signature.
    if (field === 'include' && onlyEncryptedReasoning(body.include)) continue;
    if (isSet(body[field])) dropped.push({ kind: 'dropped', path: field });
  }
  request.extra = unknownFields(body, KNOWN_FIELDS);
  return request;
}

/** `include` asks only for reasoning.encrypted_content, which gw writes whenever there is a signature. */
function onlyEncryptedReasoning(include: unknown): boolean {
  return Array.isArray(include) && include.every((value) => value === 'reasoning.encrypted_content');
}

/**
 * The input items as messages in order. Function calls join the assistant message before them and
 * function call outputs the tool results before them, so that a turn's calls and results stay
 * together as the providers expect.
 */
function readInput(input: unknown, messages: Message[], dropped: Dropped[]): void {
  if (typeof input === 'string') {
    messages.push({ role: 'user', content: input, path: 'input' });
    return;
  }
  if (!Array.isArray(input)) throw new TranslationError('input: must be a string or an array');
  input.forEach((item, i) => {
    const path = `input[${i}]`;
    if (!isPlainObject(item)) throw new TranslationError(`${path}: must be an object`);
    const type = item.type ?? 'message';
    if (type === 'message') {
      messages.push(inputMessage(item, path));
    } else if (type === 'function_call') {
      if (typeof item.call_id !== 'string') throw new TranslationError(`${path}.call_id: required`);
      if (typeof item.name !== 'string') throw new TranslationError(`${path}.name: required`);
      const call: Part = {
        type: 'tool_call',
        id: item.call_id,
        name: item.name,
        arguments: item.arguments,
        argumentsPath: `${path}.arguments`,
        path,
      };
      appendTo(messages, 'assistant', call, path, () => true);
    } else if (type === 'function_call_output') {
      appendTo(messages, 'user', functionOutput(item, path), path, isToolResultsOnly);
    } else if (type === 'reasoning' && readEncryptedContent(item.encrypted_content) !== undefined) {
      appendTo(messages, 'assistant', reasoningInput(item, path), path, () => true);
    } else if (type === 'reasoning') {
      // Without gw's encrypted_content the reasoning has no signature, which the providers that
      // take reasoning back (Claude, Bedrock, Gemini) require; OpenAI's own means nothing to them.
      dropped.push({
        kind: 'dropped',
        path,
        why: 'a reasoning item without the encrypted_content gw gave it (ask for include: ["reasoning.encrypted_content"]) has no signature the provider accepts',
      });
    } else {
      // Built-in tool calls and item references mean something only at OpenAI.
      dropped.push({ kind: 'dropped', path, what: `a ${String(type)} item` });
    }
  });
}

/**
 * A reasoning item gw wrote, read back: its text (reasoning_text, else its summary) with the
 * signature or redacted reasoning its encrypted_content holds (form/signatures.ts).
 */
function reasoningInput(item: JsonObject, path: string): ReasoningPart {
  const sealed = readEncryptedContent(item.encrypted_content)!;
  const part: ReasoningPart = { type: 'reasoning', text: reasoningText(item), path };
  if ('redacted' in sealed) part.redacted = sealed.redacted;
  else part.signature = sealed.signature;
  return part;
}

function isToolResultsOnly(parts: Part[]): boolean {
  return parts.every((part) => 'type' in part && part.type === 'tool_result');
}

/** Adds the part to the last message when it has `role`, parts, and `joins` them; else to a new message. */
function appendTo(messages: Message[], role: Role, part: Part, path: string, joins: (parts: Part[]) => boolean): void {
  const last = messages.at(-1);
  if (last?.role === role && Array.isArray(last.content) && joins(last.content)) last.content.push(part);
  else messages.push({ role, content: [part], path });
}

function inputMessage(item: JsonObject, path: string): Message {
  const role = item.role;
  if (typeof role !== 'string' || !ROLES.has(role)) {
    throw new TranslationError(`${path}.role: unknown role ${JSON.stringify(role)}`);
  }
  const content = item.content;
  if (typeof content === 'string') return { role: role as Role, content, path };
  if (!Array.isArray(content)) throw new TranslationError(`${path}.content: must be a string or an array`);
  return { role: role as Role, content: content.map((part, j) => contentPart(part, `${path}.content[${j}]`)), path };
}

function textPart(part: JsonObject, text: string, path: string, refusal: boolean): TextPart {
  const out: TextPart = { type: 'text', text, path };
  if (refusal) out.refusal = true;
  const extra = extraFields(part, ['type', 'text', 'refusal', 'annotations', 'logprobs']);
  if (extra !== undefined) out.extra = extra;
  return out;
}

function contentPart(part: unknown, path: string): Part {
  if (!isPlainObject(part)) return { type: 'raw', value: part, path };
  switch (part.type) {
    case 'input_text':
    case 'output_text':
      if (typeof part.text !== 'string') throw new TranslationError(`${path}.text: must be a string`);
      return textPart(part, part.text, path, false);
    case 'refusal':
      if (typeof part.refusal !== 'string') throw new TranslationError(`${path}.refusal: must be a string`);
      return textPart(part, part.refusal, path, true);
    case 'input_image':
      return imagePart(part, path);
    case 'input_file':
      return filePart(part, path);
    case 'input_audio':
      return { kind: 'dropped', path, what: 'audio input' };
    default:
      return { type: 'raw', value: part, path };
  }
}

function imagePart(part: JsonObject, path: string): ImagePart | Dropped {
  let image: ImagePart;
  if (typeof part.image_url === 'string') image = { type: 'image', source: mediaSourceOfUrl(part.image_url), path };
  else if (typeof part.file_id === 'string')
    image = { type: 'image', source: { kind: 'file', fileId: part.file_id }, path };
  else throw new TranslationError(`${path}: an input_image needs an image_url or a file_id`);
  if (isSet(part.detail) && part.detail !== 'auto') image.detail = { value: part.detail, path: `${path}.detail` };
  const extra = extraFields(part, ['type', 'image_url', 'file_id', 'detail']);
  if (extra !== undefined) image.extra = extra;
  return image;
}

function filePart(part: JsonObject, path: string): DocumentPart {
  let document: DocumentPart;
  if (typeof part.file_data === 'string')
    document = { type: 'document', source: mediaSourceOfUrl(part.file_data), path };
  else if (typeof part.file_url === 'string')
    document = { type: 'document', source: { kind: 'url', url: part.file_url }, path };
  else if (typeof part.file_id === 'string')
    document = { type: 'document', source: { kind: 'file', fileId: part.file_id }, path };
  else throw new TranslationError(`${path}: an input_file needs file_data, a file_url or a file_id`);
  if (typeof part.filename === 'string') document.name = part.filename;
  const extra = extraFields(part, ['type', 'file_data', 'file_url', 'file_id', 'filename']);
  if (extra !== undefined) document.extra = extra;
  return document;
}

function functionOutput(item: JsonObject, path: string): ToolResultPart {
  if (typeof item.call_id !== 'string') throw new TranslationError(`${path}.call_id: required`);
  const output = item.output;
  let content: string | Part[];
  if (typeof output === 'string') content = output;
  else if (Array.isArray(output)) content = output.map((part, j) => contentPart(part, `${path}.output[${j}]`));
  else throw new TranslationError(`${path}.output: must be a string or an array`);
  return { type: 'tool_result', toolCallId: item.call_id, content, path };
}

function readTools(tools: unknown): Tool[] | undefined {
  if (!isSet(tools)) return undefined;
  if (!Array.isArray(tools)) throw new TranslationError('tools: must be an array');
  return tools.map((tool, i): Tool => {
    const path = `tools[${i}]`;
    if (!isPlainObject(tool) || tool.type !== 'function') {
      // Built-in tools (web search, file search, code interpreter, MCP...) run at OpenAI.
      const type = isPlainObject(tool) ? String(tool.type) : typeof tool;
      return { kind: 'dropped', path, what: `the ${type} tool` };
    }
    if (typeof tool.name !== 'string') throw new TranslationError(`${path}.name: required`);
    const out: FunctionTool = { type: 'function', name: tool.name, path };
    if (typeof tool.description === 'string') out.description = tool.description;
    if (isPlainObject(tool.parameters)) out.parameters = tool.parameters;
    if (typeof tool.strict === 'boolean') out.strict = tool.strict;
    const extra = extraFields(tool, ['type', 'name', 'description', 'parameters', 'strict']);
    if (extra !== undefined) out.extra = extra;
    return out;
  });
}

function readToolChoice(choice: unknown, dropped: Dropped[]): ToolChoice | undefined {
  const path = 'tool_choice';
  if (!isSet(choice)) return undefined;
  if (choice === 'auto' || choice === 'none' || choice === 'required') return { mode: choice, path };
  if (isPlainObject(choice)) {
    if (choice.type === 'function' && typeof choice.name === 'string') return { mode: 'tool', name: choice.name, path };
    if (choice.type === 'allowed_tools') {
      const tools = Array.isArray(choice.tools) ? choice.tools : [];
      return { mode: choice.mode === 'required' ? 'required' : 'auto', allowed: tools, path };
    }
    if (typeof choice.type === 'string') {
      dropped.push({ kind: 'dropped', path, what: `a ${choice.type} tool choice` });
      return undefined;
    }
  }
  throw new TranslationError(`${path}: not a valid tool choice`);
}

function readText(text: unknown, request: ChatRequest): void {
  if (!isPlainObject(text)) return;
  readOpenAiFormat(text.format, 'text.format', request, false);
  for (const key of Object.keys(text)) {
    if (key !== 'format' && isSet(text[key])) request.dropped.push({ kind: 'dropped', path: `text.${key}` });
  }
}
