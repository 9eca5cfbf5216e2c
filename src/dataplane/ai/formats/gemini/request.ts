// Gemini generateContent requests (the Gemini API of the delta family; GenerateContentParameters
// of @google/genai) written from the chat form. The provider side only: gw does not accept Gemini
// requests from clients yet. Every mapping is listed in docs/llm-formats.md.
//
// The model and streaming are not in a Gemini body: they are in the URL
// (models/{model}:generateContent, :streamGenerateContent?alt=sse), which the planner builds.
import { argumentsObject } from '../form/tool-arguments.ts';
import type { ChatRequest, MediaSource, Message, Part, Tool, ToolChoice, ToolResultPart } from '../form/types.ts';
import { isPlainObject, numberOr } from '../json.ts';
import type { JsonObject, RequestTranslation } from '../types.ts';
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
    for (const part of content) {
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
        return withExtra({ functionCall: call }, part.extra);
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
