// Responses API requests (OpenAI, ResponseCreateParams of openai's resources/responses) written
// from the chat form: the provider side, for a server that speaks only the Responses API (a custom
// provider listing only Responses) serving Chat Completions and Messages clients. Every mapping is
// listed in docs/llm-formats.md; fields outside the source format's schema are carried over.
//
// The request asks for nothing a translated exchange could not use: `store: false` (gw keeps no
// Responses conversation, and a Chat Completions or Messages client never asked for one), and
// function tools say `strict` (the Responses API makes them strict unless told otherwise, where
// Chat Completions and Messages do not).

import { readResponsesItemSignature, reportCallSignature } from '../form/signatures.ts';
import { argumentsJson } from '../form/tool-arguments.ts';
import type {
  ChatRequest,
  DocumentPart,
  ImagePart,
  MediaSource,
  Message,
  Part,
  ReasoningPart,
  Tool,
  ToolChoice,
  ToolResultPart,
} from '../form/types.ts';
import { base64DataUrl } from '../media.ts';
import { writeOpenAiServiceTier } from '../openai-fields.ts';
import type { JsonObject, RequestTranslation } from '../types.ts';
import { Warnings, withCarriedOver, withExtra } from '../warnings.ts';

const RESPONSES_API = { full: 'the Responses API', short: 'Responses' };

/** The form's request as a Responses API request. */
export function writeResponsesRequest(request: ChatRequest): RequestTranslation {
  const warnings = new Warnings(RESPONSES_API);
  const out: JsonObject = {};
  if (request.model !== undefined) out.model = request.model;
  const input: JsonObject[] = [];
  for (const message of request.messages) writeMessage(message, input, warnings);
  out.input = input;
  if (request.maxTokens !== undefined) out.max_output_tokens = request.maxTokens;
  if (request.stopSequences !== undefined && request.stopSequences.length > 0) {
    warnings.dropped(request.stopSequencesPath ?? 'stop');
  }
  if (request.temperature !== undefined) out.temperature = request.temperature;
  if (request.topP !== undefined) out.top_p = request.topP;
  for (const field of [request.topK, request.frequencyPenalty, request.presencePenalty, request.seed]) {
    if (field !== undefined) warnings.dropped(field.path);
  }
  if (request.choices !== undefined) warnings.dropped(request.choices.path, 'the Responses API gives one answer');
  if (request.stream !== undefined) out.stream = request.stream;
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
    const written: JsonObject = { type: 'json_schema', name: format.name ?? 'response', schema: format.schema };
    written.strict = format.strict ?? true;
    out.text = { format: written };
  } else if (format?.type === 'json_object') {
    out.text = { format: { type: 'json_object' } };
  }
  const reasoning = request.reasoning;
  if (reasoning?.effort !== undefined) out.reasoning = { effort: reasoning.effort.value };
  if (reasoning?.thinking !== undefined) warnings.dropped(reasoning.thinking.path);
  writeOpenAiServiceTier(request, out, warnings);
  out.store = false;
  // Unstored, reasoning continues in the next turn only from the items' encrypted_content.
  if (wantsReasoningItems(request)) out.include = ['reasoning.encrypted_content'];
  warnings.report(request.dropped);
  return warnings.result(withCarriedOver(out, request.extra, warnings));
}

/**
 * One message as input items. System and developer prompts stay messages of their role where
 * they were; a user turn's tool results become function_call_output items (before the rest of
 * the turn); an assistant turn's tool calls become function_call items after its text.
 */
function writeMessage(message: Message, input: JsonObject[], warnings: Warnings): void {
  warnings.report(message.dropped);
  const content = message.content;
  if (typeof content === 'string') {
    input.push({ role: message.role, content });
    return;
  }
  if (message.role === 'assistant') {
    writeAssistant(content, input, warnings);
    return;
  }
  const parts: JsonObject[] = [];
  for (const part of content) {
    if ('type' in part && part.type === 'tool_result') {
      input.push(functionCallOutput(part, warnings));
      continue;
    }
    const written = inputPart(part, warnings);
    if (written !== undefined) parts.push(written);
  }
  if (parts.length > 0) input.push({ type: 'message', role: message.role, content: parts });
}

function writeAssistant(content: Part[], input: JsonObject[], warnings: Warnings): void {
  const reasoning: JsonObject[] = [];
  const texts: JsonObject[] = [];
  const calls: JsonObject[] = [];
  for (const part of content) {
    if ('kind' in part) {
      warnings.report([part]);
    } else if (part.type === 'text') {
      warnings.report(part.dropped);
      if (part.cache !== undefined) warnings.dropped(part.cache.path);
      const written = part.refusal
        ? { type: 'refusal', refusal: part.text }
        : { type: 'output_text', text: part.text, annotations: [] };
      texts.push(withExtra(written, part.extra));
    } else if (part.type === 'tool_call') {
      warnings.report(part.dropped);
      reportCallSignature(part, warnings);
      const callId = part.id ?? `call_${calls.length}`;
      calls.push({ type: 'function_call', call_id: callId, name: part.name, arguments: argumentsJson(part.arguments) });
    } else if (part.type === 'reasoning') {
      const item = reasoningItem(part);
      // Reasoning goes back to OpenAI only as its own encrypted items, which other providers' is not.
      if (item === undefined) warnings.droppedWithout(part.path, 'reasoning');
      else reasoning.push(item);
    } else if (part.type === 'raw') {
      texts.push(part.value as JsonObject);
    } else {
      warnings.dropped(part.path, `an assistant turn carries no ${part.type.replace('_', ' ')} in the Responses API`);
    }
  }
  input.push(...reasoning);
  if (texts.length > 0) input.push({ type: 'message', role: 'assistant', content: texts });
  input.push(...calls);
}

/**
 * A reasoning part read from this provider's own reasoning item (its signature holds the item's
 * id and encrypted_content, form/signatures.ts) as that item; undefined for any other reasoning.
 */
function reasoningItem(part: ReasoningPart): JsonObject | undefined {
  const item = part.signature === undefined ? undefined : readResponsesItemSignature(part.signature);
  if (item === undefined || part.redacted !== undefined) return undefined;
  const summary = part.text === '' ? [] : [{ type: 'summary_text', text: part.text }];
  return { type: 'reasoning', id: item.id, summary, encrypted_content: item.encrypted };
}

/**
 * Reasoning was asked for (an effort) or is sent back: its items must come encrypted. Not
 * otherwise: OpenAI refuses include reasoning.encrypted_content for a model that does not reason.
 */
function wantsReasoningItems(request: ChatRequest): boolean {
  if (request.reasoning?.effort !== undefined) return true;
  return request.messages.some(
    (message) =>
      Array.isArray(message.content) &&
      message.content.some(
        (part) =>
          'type' in part &&
          part.type === 'reasoning' &&
          part.signature !== undefined &&
          readResponsesItemSignature(part.signature) !== undefined,
      ),
  );
}

/** A user, system or developer content part as an input content part; undefined when it has no equivalent (reported). */
function inputPart(part: Part, warnings: Warnings): JsonObject | undefined {
  if ('kind' in part) {
    warnings.report([part]);
    return undefined;
  }
  if ('cache' in part && part.cache !== undefined) warnings.dropped(part.cache.path);
  switch (part.type) {
    case 'text':
      warnings.report(part.dropped);
      // A refusal in a user turn is text the user quotes.
      return withExtra({ type: 'input_text', text: part.text }, part.extra);
    case 'image':
      return imagePart(part, warnings);
    case 'document':
      return documentPart(part, warnings);
    case 'raw':
      return part.value as JsonObject;
    case 'reasoning':
      warnings.droppedWithout(part.path, 'reasoning');
      return undefined;
    case 'tool_call':
      warnings.dropped(part.path, 'a tool call belongs in an assistant turn');
      return undefined;
    case 'tool_result':
      warnings.dropped(part.path, 'a tool result belongs in a user turn');
      return undefined;
  }
}

function imageUrl(source: MediaSource): JsonObject | undefined {
  if (source.kind === 'base64') return { image_url: base64DataUrl(source.mediaType, source.data) };
  if (source.kind === 'url') return { image_url: source.url };
  if (source.kind === 'file') return { file_id: source.fileId };
  return undefined;
}

function imagePart(part: ImagePart, warnings: Warnings): JsonObject | undefined {
  const source = imageUrl(part.source);
  if (source === undefined) {
    warnings.dropped(part.path, 'only base64, url and file id image sources have a Responses equivalent');
    return undefined;
  }
  warnings.report(part.dropped);
  // `detail` is required by the API; the form keeps only a non-default one.
  const detail = part.detail?.value ?? 'auto';
  return withExtra({ type: 'input_image', ...source, detail }, part.extra);
}

function documentPart(part: DocumentPart, warnings: Warnings): JsonObject | undefined {
  const source = part.source;
  let out: JsonObject | undefined;
  if (source.kind === 'base64') {
    out = { type: 'input_file', file_data: base64DataUrl(source.mediaType, source.data) };
    out.filename = part.name ?? 'document';
  } else if (source.kind === 'url') out = { type: 'input_file', file_url: source.url };
  else if (source.kind === 'file') out = { type: 'input_file', file_id: source.fileId };
  else if (source.kind === 'text') out = { type: 'input_text', text: source.text };
  if (out === undefined) {
    warnings.dropped(part.path, 'this document source has no Responses equivalent');
    return undefined;
  }
  if (out.type === 'input_file' && part.name !== undefined) out.filename = part.name;
  warnings.report(part.dropped);
  return withExtra(out, part.extra);
}

function functionCallOutput(part: ToolResultPart, warnings: Warnings): JsonObject {
  if (part.isError !== undefined) warnings.dropped(part.isError.path);
  if (part.cache !== undefined) warnings.dropped(part.cache.path);
  warnings.report(part.dropped);
  const content = part.content;
  let output: string | JsonObject[] = '';
  if (typeof content === 'string') output = content;
  else if (content !== undefined) {
    const parts: JsonObject[] = [];
    for (const item of content) {
      const written = inputPart(item, warnings);
      if (written !== undefined) parts.push(written);
    }
    const only = parts[0];
    output =
      parts.length === 1 && only?.type === 'input_text' && Object.keys(only).length === 2 ? String(only.text) : parts;
  }
  return { type: 'function_call_output', call_id: part.toolCallId, output };
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
      const fn: JsonObject = { type: 'function', name: tool.name };
      if (tool.description !== undefined) fn.description = tool.description;
      fn.parameters = tool.parameters ?? { type: 'object', properties: {} };
      // Strict only when the client asked: the Responses API's default is strict.
      fn.strict = tool.strict ?? false;
      out.push(withExtra(fn, tool.extra));
    }
  }
  return out.length > 0 ? out : undefined;
}

function writeToolChoice(choice: ToolChoice): unknown {
  if (choice.mode === 'tool') return { type: 'function', name: choice.name };
  if (choice.allowed !== undefined) return { type: 'allowed_tools', mode: choice.mode, tools: choice.allowed };
  return choice.mode;
}
