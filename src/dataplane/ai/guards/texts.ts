// The texts a prompt guard reads, per client format: every message's text (system, developer,
// user, assistant, tool results), tool-call arguments (a JSON string, or an object's string
// values), and on the response side the provider's answer as the client receives it. One walk
// per format serves both reading and masking: `visit` returns a text's replacement (or
// undefined to keep it), and the walk writes it in place; the caller walks a copy to mask.
// Fields that are not text (images, audio, files, numbers) are not read.
import { isPlainObject } from '../formats/json.ts';
import type { JsonObject } from '../formats/types.ts';
import type { ClientFormat } from '../providers/index.ts';
import type { GuardText } from './guard.ts';
import type { GuardSide } from './outcome.ts';

/**
 * Returns the replacement of a text, or undefined to leave it. `role` is the role of the message
 * the text belongs to, as the client format names it (`system`, `user`, `assistant`, `tool`;
 * Gemini's `model` is `assistant`); a tool's result is `tool` wherever a format nests it.
 */
export type TextVisitor = (text: string, role: string) => string | undefined;

export type { GuardSide };

/** Whether guards can read a body of this client format on this side (false: nothing to read there). */
export function guardsRead(format: ClientFormat, side: GuardSide): boolean {
  if (side === 'response') return CHAT_ANSWERS.has(format);
  return format !== 'models' && format !== 'realtime';
}

const CHAT_ANSWERS: ReadonlySet<ClientFormat> = new Set(['completions', 'messages', 'responses', 'gemini']);

/** Walks the texts of `body`, a `format` request or answer, and writes the visitor's replacements. */
export function visitTexts(body: JsonObject, format: ClientFormat, side: GuardSide, visit: TextVisitor): void {
  if (side === 'response') {
    visitAnswer(body, format, visit);
    return;
  }
  switch (format) {
    case 'completions':
      eachObject(body.messages, (message) => completionsMessage(message, visit, roleOf(message, 'user')));
      return;
    case 'messages':
    case 'count_tokens':
      field(body, 'system', visit, 'system', contentBlocks);
      eachObject(body.messages, (message) => field(message, 'content', visit, roleOf(message, 'user'), contentBlocks));
      return;
    case 'responses':
      field(body, 'instructions', visit, 'system');
      field(body, 'input', visit, 'user', (items) => eachObject(items, (item) => responsesItem(item, visit)));
      return;
    case 'gemini':
      geminiRequest(body, visit);
      return;
    case 'gemini_count_tokens':
      geminiRequest(body, visit);
      if (isPlainObject(body.generateContentRequest)) geminiRequest(body.generateContentRequest, visit);
      return;
    case 'embeddings':
      field(body, 'input', visit, 'user', (input) => strings(input, visit, 'user'));
      return;
    case 'rerank':
      field(body, 'query', visit, 'user');
      field(body, 'documents', visit, 'user', (documents) => {
        strings(documents, visit, 'user');
        eachObject(documents, (document) => field(document, 'text', visit, 'user'));
      });
      return;
    default:
      return;
  }
}

function visitAnswer(body: JsonObject, format: ClientFormat, visit: TextVisitor): void {
  switch (format) {
    case 'completions':
      eachObject(body.choices, (choice) => {
        if (isPlainObject(choice.message)) completionsMessage(choice.message, visit, 'assistant');
      });
      return;
    case 'messages':
      field(body, 'content', visit, 'assistant', contentBlocks);
      return;
    case 'responses':
      eachObject(body.output, (item) => responsesItem(item, visit));
      return;
    case 'gemini':
      eachObject(body.candidates, (candidate) => {
        if (isPlainObject(candidate.content)) geminiParts(candidate.content, visit, 'assistant');
      });
      return;
    default:
      return;
  }
}

/** A message's own role, or `fallback` when it names none. */
function roleOf(message: JsonObject, fallback: string): string {
  return typeof message.role === 'string' ? message.role : fallback;
}

/** A Chat Completions message: its content (a string or parts), refusal and tool calls' arguments. */
function completionsMessage(message: JsonObject, visit: TextVisitor, role: string): void {
  field(message, 'content', visit, role, (parts) => eachObject(parts, (part) => field(part, 'text', visit, role)));
  field(message, 'refusal', visit, role);
  eachObject(message.tool_calls, (call) => {
    if (isPlainObject(call.function)) field(call.function, 'arguments', visit, role);
  });
  if (isPlainObject(message.function_call)) field(message.function_call, 'arguments', visit, role);
}

/** Messages content blocks: text, tool_use input, tool_result content (a string or blocks). */
function contentBlocks(blocks: unknown, visit: TextVisitor, role: string): void {
  eachObject(blocks, (block) => {
    field(block, 'text', visit, role);
    if (block.type === 'tool_use' || block.type === 'server_tool_use') objectStrings(block.input, visit, role);
    if (block.type === 'tool_result') field(block, 'content', visit, 'tool', contentBlocks);
  });
}

/** A Responses input or output item: a message's content, a function call's arguments, a tool's output. */
function responsesItem(item: JsonObject, visit: TextVisitor): void {
  const role = roleOf(
    item,
    item.type === 'function_call_output' ? 'tool' : item.type === 'function_call' ? 'assistant' : 'user',
  );
  field(item, 'content', visit, role, (parts) => eachObject(parts, (part) => field(part, 'text', visit, role)));
  field(item, 'arguments', visit, role);
  field(item, 'output', visit, 'tool', (parts) => eachObject(parts, (part) => field(part, 'text', visit, 'tool')));
}

function geminiRequest(body: JsonObject, visit: TextVisitor): void {
  if (isPlainObject(body.systemInstruction)) geminiParts(body.systemInstruction, visit, 'system');
  eachObject(body.contents, (content) => geminiParts(content, visit, content.role === 'model' ? 'assistant' : 'user'));
}

/** A Gemini content's parts: text, a function call's args, a function response. */
function geminiParts(content: JsonObject, visit: TextVisitor, role: string): void {
  eachObject(content.parts, (part) => {
    field(part, 'text', visit, role);
    if (isPlainObject(part.functionCall)) objectStrings(part.functionCall.args, visit, role);
    if (isPlainObject(part.functionResponse)) objectStrings(part.functionResponse.response, visit, 'tool');
  });
}

/**
 * A field of `owner`: a string is visited (and replaced), anything else goes to `other` (parts,
 * blocks, items) when given.
 */
function field(
  owner: JsonObject,
  name: string,
  visit: TextVisitor,
  role: string,
  other?: (value: unknown, visit: TextVisitor, role: string) => void,
): void {
  const value = owner[name];
  if (typeof value === 'string') {
    const replaced = visit(value, role);
    if (replaced !== undefined) owner[name] = replaced;
  } else if (value !== undefined && value !== null && other) other(value, visit, role);
}

function eachObject(list: unknown, each: (item: JsonObject) => void): void {
  if (!Array.isArray(list)) return;
  for (const item of list) if (isPlainObject(item)) each(item);
}

/** The strings of an array (an embeddings input, rerank documents). */
function strings(list: unknown, visit: TextVisitor, role: string): void {
  if (!Array.isArray(list)) return;
  for (let i = 0; i < list.length; i++) {
    if (typeof list[i] !== 'string') continue;
    const replaced = visit(list[i], role);
    if (replaced !== undefined) list[i] = replaced;
  }
}

/** Every string value inside a JSON value (tool arguments given as an object), depth first. */
function objectStrings(value: unknown, visit: TextVisitor, role: string): void {
  if (Array.isArray(value)) {
    strings(value, visit, role);
    for (const item of value) if (item !== null && typeof item === 'object') objectStrings(item, visit, role);
    return;
  }
  if (!isPlainObject(value)) return;
  for (const key of Object.keys(value)) {
    const item = value[key];
    if (typeof item === 'string') {
      const replaced = visit(item, role);
      if (replaced !== undefined) value[key] = replaced;
    } else if (item !== null && typeof item === 'object') objectStrings(item, visit, role);
  }
}

/** The texts of `body` in the order `visitTexts` visits them, with their roles. */
export function collectTexts(body: JsonObject, format: ClientFormat, side: GuardSide): GuardText[] {
  const texts: GuardText[] = [];
  visitTexts(body, format, side, (text, role) => {
    texts.push({ role, text });
    return undefined;
  });
  return texts;
}
