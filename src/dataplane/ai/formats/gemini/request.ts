// Gemini generateContent requests (the Gemini API of the delta family; GenerateContentParameters
// of @google/genai) read into the chat form (a Gemini client of gw) and written from it (a Gemini
// provider). Every mapping is listed in docs/llm-formats.md.
//
// The model and streaming are not in a Gemini body: they are in the URL
// (models/{model}:generateContent, :streamGenerateContent?alt=sse). On the client side gw puts the
// path's model and stream into the body it reads as `model` and `stream` (path.ts); on the
// provider side the planner builds the URL.
import { newChatRequest } from '../form/request.ts';
import { signaturesOntoCalls, signaturesOntoReasoning } from '../form/signatures.ts';
import { argumentsObject } from '../form/tool-arguments.ts';
import type {
  ChatRequest,
  Dropped,
  FunctionTool,
  MediaSource,
  Message,
  Part,
  Reasoning,
  Tool,
  ToolCallPart,
  ToolChoice,
  ToolResultPart,
} from '../form/types.ts';
import { extraFields, isPlainObject, isSet, numberOr, stringOr, unknownFields } from '../json.ts';
import { type JsonObject, type RequestTranslation, TranslationError } from '../types.ts';
import { Warnings, withCarriedOver, withExtra } from '../warnings.ts';

const GEMINI_API = { full: 'the Gemini API', short: 'Gemini' };

// The form's effort names Gemini's thinkingLevel knows (ThinkingLevel of @google/genai).
const THINKING_LEVELS: Record<string, string> = {
  minimal: 'MINIMAL',
  low: 'LOW',
  medium: 'MEDIUM',
  high: 'HIGH',
};

type GeminiRole = 'user' | 'model';

interface Turn {
  role: GeminiRole;
  parts: JsonObject[];
}

export function writeGeminiRequest(request: ChatRequest): RequestTranslation {
  const warnings = new Warnings(GEMINI_API);
  const conversation = new Conversation(warnings);
  for (const message of request.messages) conversation.add(message);
  const out: JsonObject = { contents: conversation.contents() };
  const system = conversation.systemInstruction();
  if (system !== undefined) out.systemInstruction = system;

  const tools = writeTools(request.tools, warnings);
  if (tools !== undefined) out.tools = tools;
  if (request.toolChoice !== undefined) out.toolConfig = writeToolConfig(request.toolChoice, warnings);
  if (request.parallelToolCalls === false) {
    warnings.dropped('parallel_tool_calls', 'Gemini cannot be limited to one function call per turn');
  }

  const config: JsonObject = {};
  const maxTokens = numberOr(request.maxTokens);
  if (maxTokens !== undefined) config.maxOutputTokens = maxTokens;
  if (request.stopSequences !== undefined) config.stopSequences = request.stopSequences;
  if (request.temperature !== undefined) config.temperature = request.temperature;
  if (request.topP !== undefined) config.topP = request.topP;
  if (request.topK !== undefined) config.topK = request.topK.value;
  if (request.frequencyPenalty !== undefined) config.frequencyPenalty = request.frequencyPenalty.value;
  if (request.presencePenalty !== undefined) config.presencePenalty = request.presencePenalty.value;
  if (request.seed !== undefined) config.seed = request.seed.value;
  if (request.choices !== undefined) config.candidateCount = request.choices.value;
  const format = request.responseFormat;
  if (format?.type === 'json_schema') {
    config.responseMimeType = 'application/json';
    // responseJsonSchema takes JSON Schema as written; responseSchema is Gemini's own OpenAPI subset.
    config.responseJsonSchema = format.schema;
  } else if (format?.type === 'json_object') {
    config.responseMimeType = 'application/json';
  }
  const thinking = thinkingConfig(request, warnings);
  if (thinking !== undefined) config.thinkingConfig = thinking;
  if (Object.keys(config).length > 0) out.generationConfig = config;

  if (request.user !== undefined) warnings.dropped(request.user.path, 'the Gemini API has no end-user id');
  if (request.serviceTier !== undefined) warnings.dropped(request.serviceTier.path);
  warnings.report(request.dropped);
  return warnings.result(withCarriedOver(out, request.extra, warnings));
}

function thinkingConfig(request: ChatRequest, warnings: Warnings): JsonObject | undefined {
  const reasoning = request.reasoning;
  if (reasoning === undefined) return undefined;
  const config: JsonObject = {};
  if (reasoning.thinking !== undefined) {
    // The client asked to see reasoning: Gemini returns thought summaries only when asked.
    config.includeThoughts = true;
    if (reasoning.thinking.budgetTokens !== undefined) config.thinkingBudget = reasoning.thinking.budgetTokens;
  }
  const effort = reasoning.effort;
  if (effort !== undefined) {
    const level = typeof effort.value === 'string' ? THINKING_LEVELS[effort.value] : undefined;
    if (level !== undefined) config.thinkingLevel = level;
    else warnings.dropped(effort.path, `no Gemini thinkingLevel matches ${JSON.stringify(effort.value)}`);
  }
  return Object.keys(config).length > 0 ? config : undefined;
}

/**
 * The conversation as Gemini wants it: system and developer messages lifted into
 * systemInstruction, assistant turns as role model, tool results as functionResponse parts of a
 * user turn (named after the call they answer: Gemini matches them by name), and consecutive
 * turns of one role merged.
 */
class Conversation {
  readonly #warnings: Warnings;
  readonly #system: JsonObject[] = [];
  readonly #turns: Turn[] = [];
  // The name of each tool call seen so far, by id: a functionResponse needs the function's name.
  readonly #callNames = new Map<string, string>();

  constructor(warnings: Warnings) {
    this.#warnings = warnings;
  }

  systemInstruction(): JsonObject | undefined {
    return this.#system.length === 0 ? undefined : { parts: this.#system };
  }

  contents(): JsonObject[] {
    return this.#turns.map((turn) => ({ role: turn.role, parts: turn.parts }));
  }

  add(message: Message): void {
    this.#warnings.report(message.dropped);
    if (message.role === 'system' || message.role === 'developer') {
      if (this.#turns.length > 0) {
        this.#warnings.changed(
          message.path,
          'a system message after the conversation began is sent in systemInstruction',
        );
      }
      this.#system.push(...this.#parts(message.content));
      return;
    }
    const parts = this.#parts(message.content);
    if (parts.length === 0) {
      this.#warnings.dropped(message.path, `an empty ${message.role} message`);
      return;
    }
    this.#push(message.role === 'assistant' ? 'model' : 'user', parts);
  }

  #parts(content: string | Part[]): JsonObject[] {
    if (typeof content === 'string') return content === '' ? [] : [{ text: content }];
    const parts: JsonObject[] = [];
    // A signature a client format carried as reasoning before a call goes back on the call.
    for (const part of signaturesOntoCalls(content)) {
      const written = this.#part(part);
      if (written !== undefined) parts.push(written);
    }
    return parts;
  }

  #part(part: Part): JsonObject | undefined {
    const warnings = this.#warnings;
    if ('kind' in part) {
      warnings.report([part]);
      return undefined;
    }
    if (part.type !== 'raw') {
      warnings.report(part.dropped);
      if ('cache' in part && part.cache !== undefined) {
        warnings.dropped(part.cache.path, 'Gemini caches prompts by itself (implicit caching)');
      }
    }
    switch (part.type) {
      case 'text':
        return withExtra({ text: part.text }, part.extra);
      case 'image':
      case 'document': {
        if (part.type === 'image' && part.detail !== undefined) warnings.dropped(part.detail.path);
        const media = mediaPart(part.source);
        if (typeof media === 'string') {
          warnings.dropped(part.path, media);
          return undefined;
        }
        return withExtra(media, part.extra);
      }
      case 'tool_call': {
        if (part.id !== undefined) this.#callNames.set(part.id, part.name);
        const call: JsonObject = {
          name: part.name,
          args: argumentsObject(part.arguments, part.argumentsPath, warnings),
        };
        if (part.id !== undefined) call.id = part.id;
        // Gemini 3 refuses a turn whose function calls lack the signature it gave them.
        const written: JsonObject =
          part.signature === undefined
            ? { functionCall: call }
            : { functionCall: call, thoughtSignature: part.signature };
        return withExtra(written, part.extra);
      }
      case 'tool_result':
        return this.#functionResponse(part);
      case 'reasoning':
        if (part.redacted !== undefined) {
          warnings.dropped(part.path, 'reasoning another provider encrypted cannot be sent to Gemini');
          return undefined;
        }
        // A thought goes back with its signature; Gemini checks it for thoughts of its own.
        return part.signature === undefined
          ? { text: part.text, thought: true }
          : { text: part.text, thought: true, thoughtSignature: part.signature };
      case 'raw':
        return isPlainObject(part.value) ? part.value : { text: JSON.stringify(part.value) };
    }
  }

  #functionResponse(part: ToolResultPart): JsonObject | undefined {
    const name = this.#callNames.get(part.toolCallId);
    if (name === undefined) {
      this.#warnings.dropped(part.path, 'a tool result for a call not in the conversation (Gemini needs its name)');
      return undefined;
    }
    // Gemini's response is an object: `output` for the result, `error` when the tool failed.
    const key = part.isError === undefined ? 'output' : 'error';
    let value: unknown;
    if (typeof part.content === 'string' || part.content === undefined) value = part.content ?? '';
    else {
      const texts: string[] = [];
      for (const item of part.content) {
        if ('type' in item && item.type === 'text') texts.push(item.text);
        else this.#warnings.dropped(item.path, 'only text tool results have a Gemini equivalent');
      }
      value = texts.join('');
    }
    return { functionResponse: { id: part.toolCallId, name, response: { [key]: value } } };
  }

  #push(role: GeminiRole, parts: JsonObject[]): void {
    const last = this.#turns.at(-1);
    if (last?.role === role) last.parts.push(...parts);
    else this.#turns.push({ role, parts });
  }
}

/** Inline bytes as inlineData, a URL or file id as fileData; a reason when there is no equivalent. */
function mediaPart(source: MediaSource): JsonObject | string {
  switch (source.kind) {
    case 'base64':
      return { inlineData: { mimeType: source.mediaType, data: source.data } };
    case 'url':
      // fileData needs a media type; Gemini infers it for its own file URIs and public URLs only when given.
      return { fileData: { fileUri: source.url } };
    case 'file':
      return { fileData: { fileUri: source.fileId } };
    case 'text':
      return { text: source.text };
    case 'other':
      return 'a media source of another provider has no Gemini equivalent';
  }
}

function writeTools(tools: Tool[] | undefined, warnings: Warnings): JsonObject[] | undefined {
  if (tools === undefined) return undefined;
  const declarations: JsonObject[] = [];
  const others: JsonObject[] = [];
  for (const tool of tools) {
    if ('kind' in tool) warnings.report([tool]);
    else if (tool.type === 'raw') {
      if (isPlainObject(tool.value)) others.push(tool.value);
      else warnings.dropped(tool.path, 'not a tool object');
    } else {
      warnings.report(tool.dropped);
      const declaration: JsonObject = { name: tool.name };
      if (tool.description !== undefined) declaration.description = tool.description;
      // parametersJsonSchema takes JSON Schema as written (parameters is Gemini's OpenAPI subset).
      if (tool.parameters !== undefined) declaration.parametersJsonSchema = tool.parameters;
      if (tool.strict !== undefined) warnings.dropped(`${tool.path}.strict`);
      declarations.push(withExtra(declaration, tool.extra));
    }
  }
  const out = declarations.length > 0 ? [{ functionDeclarations: declarations }, ...others] : others;
  return out.length > 0 ? out : undefined;
}

function writeToolConfig(choice: ToolChoice, warnings: Warnings): JsonObject {
  const config: JsonObject = {};
  switch (choice.mode) {
    case 'auto':
      config.mode = 'AUTO';
      break;
    case 'none':
      config.mode = 'NONE';
      break;
    case 'required':
      config.mode = 'ANY';
      break;
    case 'tool':
      config.mode = 'ANY';
      config.allowedFunctionNames = [choice.name];
      break;
  }
  if (choice.allowed !== undefined && config.allowedFunctionNames === undefined) {
    // Gemini restricts the callable functions only when it must call one (mode ANY).
    const names = allowedNames(choice.allowed);
    if (choice.mode === 'required' && names.length > 0) config.allowedFunctionNames = names;
    else
      warnings.changed(
        choice.path,
        'the allowed tools list is sent to Gemini only with a required call; only its mode is sent',
      );
  }
  return { functionCallingConfig: config };
}

/** The function names of an allowed-tools list (OpenAI allowed_tools.tools entries, or names). */
function allowedNames(allowed: unknown): string[] {
  if (!Array.isArray(allowed)) return [];
  const names: string[] = [];
  for (const entry of allowed) {
    if (typeof entry === 'string') names.push(entry);
    else if (isPlainObject(entry)) {
      const fn = isPlainObject(entry.function) ? entry.function : entry;
      if (typeof fn.name === 'string') names.push(fn.name);
    }
  }
  return names;
}

// ---------------------------------------------------------------------------------------------
// Reading: a Gemini generateContent (or countTokens) request body into the form. Throws
// TranslationError for a body Gemini itself rejects. Fields are read in the camelCase the SDKs
// send (the REST API's JSON names).

// GenerateContentRequest fields the form holds (`model` and `stream` are gw's, from the path).
const MAPPED_FIELDS = ['model', 'stream', 'contents', 'systemInstruction', 'tools', 'toolConfig', 'generationConfig'];

// GenerateContentRequest fields only Gemini has: noted as dropped when set.
const OWN_FIELDS = ['safetySettings', 'cachedContent', 'labels', 'serviceTier', 'store'];

const KNOWN_FIELDS: ReadonlySet<string> = new Set([...MAPPED_FIELDS, ...OWN_FIELDS]);

// GenerationConfig fields the form holds; every other one is Gemini's own (noted as dropped).
const MAPPED_CONFIG = new Set([
  'maxOutputTokens',
  'stopSequences',
  'temperature',
  'topP',
  'topK',
  'frequencyPenalty',
  'presencePenalty',
  'seed',
  'candidateCount',
  'responseMimeType',
  'responseJsonSchema',
  'responseSchema',
  'thinkingConfig',
]);

// Part fields besides the data field (text, inlineData...) that the form holds.
const PART_DATA = ['text', 'thought', 'thoughtSignature', 'inlineData', 'fileData', 'functionCall', 'functionResponse'];

// Part kinds only Gemini has (code execution, video offsets...).
const OWN_PARTS = ['executableCode', 'codeExecutionResult', 'toolCall', 'toolResponse'];

/** A call id gw makes up for a functionCall without one: the other formats match results by id. */
function madeUpCallId(turn: number, part: number): string {
  return `call_gemini_${turn}_${part}`;
}

export function readGeminiRequest(body: JsonObject): ChatRequest {
  if (!isPlainObject(body)) throw new TranslationError('the request body must be a JSON object');
  const messages: Message[] = [];
  if (isSet(body.systemInstruction)) messages.push(readSystemInstruction(body.systemInstruction));
  if (!Array.isArray(body.contents)) throw new TranslationError('contents: must be an array');
  const calls = new CallIds();
  body.contents.forEach((content, i) => {
    messages.push(readContent(content, i, calls));
  });
  const request = newChatRequest(messages);
  const dropped: Dropped[] = [];
  request.dropped = dropped;
  if (body.model !== undefined) request.model = body.model;
  if (body.stream === true) request.stream = true;
  const tools = readTools(body.tools);
  if (tools !== undefined) request.tools = tools;
  if (isPlainObject(body.toolConfig)) {
    const choice = readToolConfig(body.toolConfig, dropped);
    if (choice !== undefined) request.toolChoice = choice;
  }
  if (isPlainObject(body.generationConfig)) readGenerationConfig(body.generationConfig, request);
  for (const field of OWN_FIELDS) if (isSet(body[field])) dropped.push({ kind: 'dropped', path: field });
  request.extra = unknownFields(body, KNOWN_FIELDS);
  return request;
}

function readSystemInstruction(value: unknown): Message {
  // The REST API also takes a bare string here (the SDKs turn one into a Content).
  if (typeof value === 'string') return { role: 'system', content: value, path: 'systemInstruction' };
  if (!isPlainObject(value) || !Array.isArray(value.parts)) {
    throw new TranslationError('systemInstruction: must be a Content with a parts array');
  }
  const parts = value.parts.map((part, j) => readPart(part, `systemInstruction.parts[${j}]`, undefined));
  return { role: 'system', content: plainText(parts) ?? parts, path: 'systemInstruction' };
}

/** The text of a content that is one plain text part: formats with a string form send it as one. */
function plainText(parts: Part[]): string | undefined {
  const only = parts.length === 1 ? parts[0] : undefined;
  return only !== undefined && 'type' in only && only.type === 'text' && only.extra === undefined
    ? only.text
    : undefined;
}

/**
 * The ids of the conversation's function calls, for the responses that answer them: Gemini
 * matches a functionResponse to its call by name (and by id when the call had one), the other
 * formats by id only. A response without an id answers the oldest unanswered call of its name.
 */
class CallIds {
  readonly #unanswered = new Map<string, string[]>();

  called(name: string, id: string): void {
    const ids = this.#unanswered.get(name);
    if (ids === undefined) this.#unanswered.set(name, [id]);
    else ids.push(id);
  }

  answered(name: string, id: string | undefined): string | undefined {
    const ids = this.#unanswered.get(name);
    if (id !== undefined) {
      const at = ids?.indexOf(id) ?? -1;
      if (at !== -1) ids!.splice(at, 1);
      return id;
    }
    return ids?.shift();
  }
}

function readContent(content: unknown, i: number, calls: CallIds): Message {
  const path = `contents[${i}]`;
  if (!isPlainObject(content)) throw new TranslationError(`${path}: must be an object`);
  if (!Array.isArray(content.parts)) throw new TranslationError(`${path}.parts: must be an array`);
  // A Content without a role is the user's (as Gemini reads a single-turn request).
  const role = content.role ?? 'user';
  if (role !== 'user' && role !== 'model' && role !== 'function') {
    throw new TranslationError(`${path}.role: must be "user" or "model", not ${JSON.stringify(role)}`);
  }
  const read = content.parts.map((part, j) => readPart(part, `${path}.parts[${j}]`, { calls, turn: i, index: j }));
  // A streamed thought's signature comes in a part of its own after it (Gemini's streams, and gw's).
  const parts = signaturesOntoReasoning(read);
  return { role: role === 'model' ? 'assistant' : 'user', content: plainText(parts) ?? parts, path };
}

interface CallContext {
  calls: CallIds;
  turn: number;
  index: number;
}

function readPart(part: unknown, path: string, context: CallContext | undefined): Part {
  if (!isPlainObject(part)) throw new TranslationError(`${path}: must be an object`);
  const extra = extraFields(part, [...PART_DATA, ...OWN_PARTS]);
  const withExtraOf = <T extends Part>(node: T): T => {
    if (extra !== undefined) (node as { extra?: JsonObject }).extra = extra;
    return node;
  };
  if (typeof part.text === 'string') {
    if (part.thought === true) {
      const reasoning: Part = { type: 'reasoning', text: part.text, path };
      if (typeof part.thoughtSignature === 'string') reasoning.signature = part.thoughtSignature;
      return reasoning;
    }
    return withExtraOf({ type: 'text', text: part.text, path });
  }
  if (isPlainObject(part.inlineData)) {
    const data = part.inlineData;
    if (typeof data.mimeType !== 'string' || typeof data.data !== 'string') {
      throw new TranslationError(`${path}.inlineData: needs mimeType and data`);
    }
    const source: MediaSource = { kind: 'base64', mediaType: data.mimeType, data: data.data };
    return withExtraOf(
      data.mimeType.startsWith('image/') ? { type: 'image', source, path } : { type: 'document', source, path },
    );
  }
  if (isPlainObject(part.fileData)) {
    const file = part.fileData;
    if (typeof file.fileUri !== 'string') throw new TranslationError(`${path}.fileData.fileUri: required`);
    const source: MediaSource = /^https?:\/\//.test(file.fileUri)
      ? { kind: 'url', url: file.fileUri }
      : { kind: 'file', fileId: file.fileUri };
    const image = typeof file.mimeType === 'string' && file.mimeType.startsWith('image/');
    return withExtraOf(image ? { type: 'image', source, path } : { type: 'document', source, path });
  }
  if (isPlainObject(part.functionCall))
    return withExtraOf(functionCall(part.functionCall, part.thoughtSignature, path, context));
  if (isPlainObject(part.functionResponse)) return functionResponse(part.functionResponse, path, context);
  for (const own of OWN_PARTS) if (isSet(part[own])) return { kind: 'dropped', path, what: `a Gemini ${own} part` };
  return { type: 'raw', value: part, path };
}

function functionCall(call: JsonObject, signature: unknown, path: string, context: CallContext | undefined): Part {
  if (typeof call.name !== 'string') throw new TranslationError(`${path}.functionCall.name: required`);
  if (context === undefined) return { kind: 'dropped', path, why: 'a function call in the system instruction' };
  const id = stringOr(call.id) ?? madeUpCallId(context.turn, context.index);
  context.calls.called(call.name, id);
  const part: ToolCallPart = {
    type: 'tool_call',
    id,
    name: call.name,
    arguments: call.args ?? {},
    argumentsPath: `${path}.functionCall.args`,
    path,
  };
  if (typeof signature === 'string' && signature !== '') part.signature = signature;
  return part;
}

function functionResponse(response: JsonObject, path: string, context: CallContext | undefined): Part {
  if (typeof response.name !== 'string') throw new TranslationError(`${path}.functionResponse.name: required`);
  const id = context?.calls.answered(response.name, stringOr(response.id));
  if (id === undefined) {
    return {
      kind: 'dropped',
      path,
      why: `a functionResponse for ${response.name}, which no functionCall before it made`,
    };
  }
  const result = isPlainObject(response.response) ? response.response : {};
  // Gemini's convention: `output` holds the result, `error` the failure; any other object is the result itself.
  const failed = result.error !== undefined && result.output === undefined;
  const value = failed ? result.error : result.output !== undefined ? result.output : result;
  const part: ToolResultPart = {
    type: 'tool_result',
    toolCallId: id,
    content: typeof value === 'string' ? value : JSON.stringify(value),
    path,
  };
  if (failed) part.isError = { path: `${path}.functionResponse.response.error` };
  if (isSet(response.parts)) part.dropped = [{ kind: 'dropped', path: `${path}.functionResponse.parts` }];
  return part;
}

function readTools(tools: unknown): Tool[] | undefined {
  if (tools === undefined || tools === null) return undefined;
  if (!Array.isArray(tools)) throw new TranslationError('tools: must be an array');
  const out: Tool[] = [];
  tools.forEach((tool, i) => {
    const path = `tools[${i}]`;
    if (!isPlainObject(tool)) throw new TranslationError(`${path}: must be an object`);
    for (const key in tool) {
      const value = tool[key];
      if (key !== 'functionDeclarations') {
        // Gemini's built-in tools (googleSearch, codeExecution, urlContext...) exist nowhere else.
        if (isSet(value)) out.push({ kind: 'dropped', path: `${path}.${key}`, what: `the Gemini ${key} tool` });
        continue;
      }
      if (!Array.isArray(value)) throw new TranslationError(`${path}.functionDeclarations: must be an array`);
      value.forEach((declaration, j) => {
        out.push(functionDeclaration(declaration, `${path}.functionDeclarations[${j}]`));
      });
    }
  });
  return out;
}

function functionDeclaration(declaration: unknown, path: string): Tool {
  if (!isPlainObject(declaration) || typeof declaration.name !== 'string') {
    throw new TranslationError(`${path}.name: required`);
  }
  const tool: FunctionTool = { type: 'function', name: declaration.name, path };
  if (typeof declaration.description === 'string') tool.description = declaration.description;
  // parametersJsonSchema is JSON Schema; parameters is Gemini's OpenAPI subset, which reads as
  // JSON Schema once its upper-case type names are lower-cased.
  if (isPlainObject(declaration.parametersJsonSchema)) tool.parameters = declaration.parametersJsonSchema;
  else if (isPlainObject(declaration.parameters)) tool.parameters = jsonSchemaOf(declaration.parameters);
  const dropped: Dropped[] = [];
  for (const field of ['behavior', 'response', 'responseJsonSchema']) {
    if (isSet(declaration[field])) dropped.push({ kind: 'dropped', path: `${path}.${field}` });
  }
  if (dropped.length > 0) tool.dropped = dropped;
  const extra = extraFields(declaration, [
    'name',
    'description',
    'parameters',
    'parametersJsonSchema',
    'behavior',
    'response',
    'responseJsonSchema',
  ]);
  if (extra !== undefined) tool.extra = extra;
  return tool;
}

/** Gemini's Schema (OpenAPI 3.0 subset, types in upper case: OBJECT, STRING) as JSON Schema. */
function jsonSchemaOf(schema: unknown): JsonObject {
  if (!isPlainObject(schema)) return {};
  const out: JsonObject = {};
  for (const key in schema) {
    const value = schema[key];
    if (key === 'type' && typeof value === 'string') out.type = value.toLowerCase();
    else if (key === 'properties' && isPlainObject(value)) {
      const properties: JsonObject = {};
      for (const name in value) properties[name] = jsonSchemaOf(value[name]);
      out.properties = properties;
    } else if (key === 'items') out.items = jsonSchemaOf(value);
    else if (key === 'anyOf' && Array.isArray(value)) out.anyOf = value.map(jsonSchemaOf);
    else if (key === 'nullable') {
      if (value === true) out.nullable = true;
    } else if (key !== 'propertyOrdering') out[key] = value;
  }
  return out;
}

// FunctionCallingConfig.mode of @google/genai, as the form's tool choice modes.
const TOOL_MODES: Record<string, ToolChoice['mode']> = {
  AUTO: 'auto',
  NONE: 'none',
  ANY: 'required',
  VALIDATED: 'auto',
};

function readToolConfig(config: JsonObject, dropped: Dropped[]): ToolChoice | undefined {
  if (isSet(config.retrievalConfig)) dropped.push({ kind: 'dropped', path: 'toolConfig.retrievalConfig' });
  const calling = config.functionCallingConfig;
  if (!isPlainObject(calling)) return undefined;
  const path = 'toolConfig.functionCallingConfig';
  const mode = typeof calling.mode === 'string' ? TOOL_MODES[calling.mode] : undefined;
  if (calling.mode !== undefined && mode === undefined && calling.mode !== 'MODE_UNSPECIFIED') {
    throw new TranslationError(`${path}.mode: unknown mode ${JSON.stringify(calling.mode)}`);
  }
  const names = Array.isArray(calling.allowedFunctionNames) ? calling.allowedFunctionNames : undefined;
  if (mode === 'required' && names?.length === 1 && typeof names[0] === 'string') {
    return { mode: 'tool', name: names[0], path };
  }
  const choice: ToolChoice = { mode: mode ?? 'auto', path };
  if (names !== undefined && names.length > 0) choice.allowed = names;
  if (mode === undefined && choice.allowed === undefined) return undefined;
  return choice;
}

function readGenerationConfig(config: JsonObject, request: ChatRequest): void {
  const at = (field: string) => `generationConfig.${field}`;
  if (isSet(config.maxOutputTokens)) request.maxTokens = config.maxOutputTokens;
  if (Array.isArray(config.stopSequences)) request.stopSequences = config.stopSequences;
  if (isSet(config.temperature)) request.temperature = config.temperature;
  if (isSet(config.topP)) request.topP = config.topP;
  if (isSet(config.topK)) request.topK = { value: config.topK, path: at('topK') };
  if (isSet(config.frequencyPenalty)) {
    request.frequencyPenalty = { value: config.frequencyPenalty, path: at('frequencyPenalty') };
  }
  if (isSet(config.presencePenalty)) {
    request.presencePenalty = { value: config.presencePenalty, path: at('presencePenalty') };
  }
  if (isSet(config.seed)) request.seed = { value: config.seed, path: at('seed') };
  const candidates = numberOr(config.candidateCount);
  if (candidates !== undefined && candidates !== 1) {
    request.choices = { value: candidates, path: at('candidateCount') };
  }
  if (config.responseMimeType === 'application/json') {
    const schema = isPlainObject(config.responseJsonSchema)
      ? config.responseJsonSchema
      : isPlainObject(config.responseSchema)
        ? jsonSchemaOf(config.responseSchema)
        : undefined;
    request.responseFormat =
      schema === undefined
        ? { type: 'json_object', path: at('responseMimeType') }
        : { type: 'json_schema', schema, path: at('responseMimeType') };
  } else if (isSet(config.responseMimeType) && config.responseMimeType !== 'text/plain') {
    request.dropped.push({ kind: 'dropped', path: at('responseMimeType') });
  }
  if (isPlainObject(config.thinkingConfig)) {
    const reasoning = readThinkingConfig(config.thinkingConfig, request.dropped);
    if (reasoning !== undefined) request.reasoning = reasoning;
  }
  for (const key in config) {
    if (!MAPPED_CONFIG.has(key) && isSet(config[key])) request.dropped.push({ kind: 'dropped', path: at(key) });
  }
}

function readThinkingConfig(config: JsonObject, dropped: Dropped[]): Reasoning | undefined {
  const path = 'generationConfig.thinkingConfig';
  const reasoning: Reasoning = {};
  const budget = numberOr(config.thinkingBudget);
  // Budget 0 switches thinking off, which is every other format's default.
  if (config.includeThoughts === true || (budget !== undefined && budget !== 0)) {
    reasoning.thinking = { path };
    // -1 is Gemini's "dynamic": the model chooses, as when no budget is given.
    if (budget !== undefined && budget > 0) reasoning.thinking.budgetTokens = budget;
  }
  if (typeof config.thinkingLevel === 'string') {
    reasoning.effort = { value: config.thinkingLevel.toLowerCase(), path: `${path}.thinkingLevel` };
  }
  for (const key in config) {
    if (!['includeThoughts', 'thinkingBudget', 'thinkingLevel'].includes(key)) {
      dropped.push({ kind: 'dropped', path: `${path}.${key}` });
    }
  }
  return reasoning.thinking === undefined && reasoning.effort === undefined ? undefined : reasoning;
}
