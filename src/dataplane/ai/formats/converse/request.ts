// Bedrock Converse requests written from the chat form (a provider format: gw sends Converse, it
// never reads a client's Converse request). The model id goes in the URL path, not the body (the
// zeta provider's plan puts it there), and so does streaming (/converse or /converse-stream).
//
// Converse validates its body strictly, so nothing is carried over blindly: fields of the client's
// body outside its own format's schema are reported and left out. A form field Converse has no
// field for is sent in additionalModelRequestFields only where the models that take it agree on
// its name (top_k; Anthropic's thinking), and reported otherwise.
import { reportCallSignature } from '../form/signatures.ts';
import { argumentsObject } from '../form/tool-arguments.ts';
import type { ChatRequest, MediaSource, Message, Part, Tool, ToolChoice, ToolResultPart } from '../form/types.ts';
import { numberOr } from '../json.ts';
import type { JsonObject, RequestTranslation } from '../types.ts';
import { Warnings } from '../warnings.ts';

const CONVERSE_API = { full: 'the Bedrock Converse API', short: 'Converse' };

/** Converse's image formats by media type. */
const IMAGE_FORMATS: Record<string, string> = {
  'image/png': 'png',
  'image/jpeg': 'jpeg',
  'image/jpg': 'jpeg',
  'image/gif': 'gif',
  'image/webp': 'webp',
};

/** Converse's document formats by media type. */
const DOCUMENT_FORMATS: Record<string, string> = {
  'application/pdf': 'pdf',
  'text/csv': 'csv',
  'application/msword': 'doc',
  'application/vnd.openxmlformats-officedocument.wordprocessingml.document': 'docx',
  'application/vnd.ms-excel': 'xls',
  'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet': 'xlsx',
  'text/html': 'html',
  'text/plain': 'txt',
  'text/markdown': 'md',
};

const CACHE_POINT = { cachePoint: { type: 'default' } } as const;

/**
 * The extended-thinking budget an OpenAI reasoning effort becomes on Bedrock's Claude models
 * (agentgateway's table); `none` asks for no thinking.
 */
const EFFORT_BUDGETS: Readonly<Record<string, number>> = {
  minimal: 1024,
  low: 1024,
  medium: 2048,
  high: 4096,
  xhigh: 8192,
  max: 16384,
};

/** The smallest budget Claude's extended thinking takes. */
const MIN_THINKING_BUDGET = 1024;

/** A Bedrock model id, inference profile or ARN of one of Anthropic's Claude models. */
function isClaudeModel(model: string | undefined): boolean {
  return model !== undefined && /anthropic\.claude/i.test(model);
}

export interface ConverseWriteOptions {
  /** The model the path names (the override, else the client's): a Claude model thinks for a reasoning effort. */
  model?: string;
}

/** The form's request as a Converse body (no modelId: it belongs in the path). */
export function writeConverseRequest(request: ChatRequest, options: ConverseWriteOptions = {}): RequestTranslation {
  const warnings = new Warnings(CONVERSE_API);
  const conversation = new Conversation(warnings);
  for (const message of request.messages) conversation.add(message);
  const out: JsonObject = {};
  const system = conversation.system();
  if (system.length > 0) out.system = system;
  out.messages = conversation.messages();

  const inference: JsonObject = {};
  const maxTokens = numberOr(request.maxTokens);
  if (maxTokens !== undefined) inference.maxTokens = maxTokens;
  if (request.temperature !== undefined) inference.temperature = request.temperature;
  if (request.topP !== undefined) inference.topP = request.topP;
  if (request.stopSequences !== undefined) inference.stopSequences = request.stopSequences;
  if (Object.keys(inference).length > 0) out.inferenceConfig = inference;

  const toolConfig = writeToolConfig(request, warnings);
  if (toolConfig !== undefined) out.toolConfig = toolConfig;

  const additional: JsonObject = {};
  if (request.topK !== undefined) additional.top_k = request.topK.value;
  const thinking = request.reasoning?.thinking;
  const effort = request.reasoning?.effort;
  if (thinking?.budgetTokens !== undefined) {
    additional.thinking = { type: 'enabled', budget_tokens: thinking.budgetTokens };
  } else if (thinking !== undefined) {
    warnings.dropped(thinking.path, 'extended thinking without a token budget');
  } else if (effort !== undefined && effort.value !== 'none') {
    // Claude thinks only at its own sampling: a temperature other than 1 or a top_k refuses it.
    const sampled = (request.temperature !== undefined && request.temperature !== 1) || request.topK !== undefined;
    const budget = !isClaudeModel(options.model)
      ? undefined
      : sampled
        ? "Claude's extended thinking does not take a temperature other than 1 or top_k"
        : effortBudget(effort.value, maxTokens);
    if (budget === undefined || typeof budget === 'string') {
      warnings.dropped(effort.path, budget);
    } else {
      additional.thinking = { type: 'enabled', budget_tokens: budget };
      warnings.changed(effort.path, `sent as Claude's extended thinking with a budget of ${budget} tokens`);
    }
  }
  if (Object.keys(additional).length > 0) out.additionalModelRequestFields = additional;

  const format = request.responseFormat;
  if (format?.type === 'json_schema') {
    const jsonSchema: JsonObject = { schema: JSON.stringify(format.schema) };
    if (format.name !== undefined) jsonSchema.name = format.name;
    out.outputConfig = { textFormat: { type: 'json_schema', structure: { jsonSchema } } };
  } else if (format !== undefined) {
    warnings.dropped(format.path, 'json_object mode has no Converse equivalent (json_schema has)');
  }
  for (const field of [request.frequencyPenalty, request.presencePenalty, request.seed, request.serviceTier]) {
    if (field !== undefined) warnings.dropped(field.path);
  }
  if (request.choices !== undefined) warnings.dropped(request.choices.path, 'the Converse API generates one choice');
  if (request.user !== undefined) warnings.droppedWithout(request.user.path, 'an end-user id');
  warnings.report(request.dropped);
  // Converse rejects fields it does not know: the client's unknown fields cannot be carried.
  for (const key in request.extra) warnings.dropped(key, 'not a field of the Bedrock Converse API');
  return warnings.result(out);
}

interface Turn {
  role: 'user' | 'assistant';
  content: JsonObject[];
}

/**
 * The conversation as Converse wants it: system and developer messages lifted into `system`,
 * turns of one role merged (Converse requires user and assistant turns to alternate).
 */
class Conversation {
  readonly #warnings: Warnings;
  readonly #system: JsonObject[] = [];
  readonly #turns: Turn[] = [];

  constructor(warnings: Warnings) {
    this.#warnings = warnings;
  }

  system(): JsonObject[] {
    return this.#system;
  }

  messages(): JsonObject[] {
    return this.#turns.map((turn) => ({ role: turn.role, content: turn.content }));
  }

  add(message: Message): void {
    this.#warnings.report(message.dropped);
    if (message.role === 'system' || message.role === 'developer') {
      if (this.#turns.length > 0) {
        this.#warnings.changed(
          message.path,
          'a system message after the conversation began is sent in the top-level system',
        );
      }
      this.#addSystem(message.content);
      return;
    }
    const role = message.role;
    const blocks =
      typeof message.content === 'string'
        ? message.content === ''
          ? []
          : [{ text: message.content }]
        : this.#blocks(message.content, role === 'assistant');
    if (blocks.length === 0) {
      this.#warnings.dropped(message.path, `an empty ${role} message`);
      return;
    }
    const last = this.#turns.at(-1);
    if (last?.role === role) last.content.push(...blocks);
    else this.#turns.push({ role, content: blocks });
  }

  #addSystem(content: string | Part[]): void {
    if (typeof content === 'string') {
      if (content !== '') this.#system.push({ text: content });
      return;
    }
    for (const part of content) {
      if ('type' in part && part.type === 'text') {
        this.#warnings.report(part.dropped);
        if (part.text !== '') this.#system.push({ text: part.text });
        if (part.cache !== undefined) this.#system.push(CACHE_POINT);
      } else if ('kind' in part) {
        this.#warnings.report([part]);
      } else {
        this.#warnings.dropped(part.path, 'only text has a place in the Converse system prompt');
      }
    }
  }

  /** Parts as content blocks; empty text is left out (Converse rejects it). */
  #blocks(parts: Part[], assistant: boolean): JsonObject[] {
    const blocks: JsonObject[] = [];
    for (const part of parts) {
      if ('type' in part && part.type === 'text' && part.text === '') continue;
      if (!assistant && 'type' in part && part.type === 'reasoning') {
        this.#warnings.dropped(part.path, 'reasoning in a user message');
        continue;
      }
      blocks.push(...writeBlock(part, this.#warnings));
    }
    return blocks;
  }
}

function imageBlock(source: MediaSource): JsonObject | string {
  if (source.kind === 'base64') {
    const format = IMAGE_FORMATS[source.mediaType];
    if (format === undefined) return `an image of type ${source.mediaType}, which Converse does not take`;
    return { image: { format, source: { bytes: source.data } } };
  }
  if (source.kind === 'url' && source.url.startsWith('s3://')) {
    const format = IMAGE_FORMATS[`image/${source.url.split('.').at(-1)?.toLowerCase()}`];
    if (format !== undefined) return { image: { format, source: { s3Location: { uri: source.url } } } };
  }
  return 'an image URL Bedrock cannot fetch (Converse takes inline bytes or an s3:// object)';
}

function documentBlock(source: MediaSource, name: string | undefined): JsonObject | string {
  // Converse requires a document name; it is shown to the model.
  const documentName = name ?? 'document';
  if (source.kind === 'base64') {
    const format = DOCUMENT_FORMATS[source.mediaType];
    if (format === undefined) return `a document of type ${source.mediaType}, which Converse does not take`;
    return { document: { format, name: documentName, source: { bytes: source.data } } };
  }
  if (source.kind === 'text') return { document: { format: 'txt', name: documentName, source: { text: source.text } } };
  if (source.kind === 'file') return 'a file id of another provider is not valid at Bedrock';
  return 'only inline documents and text have a Converse equivalent';
}

/** A content part as Converse content blocks (a cache breakpoint adds a cachePoint after it). */
function writeBlock(part: Part, warnings: Warnings): JsonObject[] {
  if ('kind' in part) {
    warnings.report([part]);
    return [];
  }
  let block: JsonObject | string;
  switch (part.type) {
    case 'text':
      block = { text: part.text };
      break;
    case 'image':
      block = imageBlock(part.source);
      if (part.detail !== undefined && typeof block !== 'string') warnings.dropped(part.detail.path);
      break;
    case 'document':
      block = documentBlock(part.source, part.name);
      break;
    case 'tool_call':
      reportCallSignature(part, warnings);
      block = {
        toolUse: {
          toolUseId: part.id ?? '',
          name: part.name,
          input: argumentsObject(part.arguments, part.argumentsPath, warnings),
        },
      };
      break;
    case 'tool_result':
      block = toolResultBlock(part, warnings);
      break;
    case 'reasoning':
      // Bedrock refuses reasoning it did not sign (another provider's, a compatible server's
      // reasoning_content): without it the turn is an ordinary one.
      block =
        part.redacted !== undefined
          ? { reasoningContent: { redactedContent: part.redacted } }
          : part.signature === undefined
            ? 'reasoning without a signature, which Bedrock refuses'
            : { reasoningContent: { reasoningText: { text: part.text, signature: part.signature } } };
      break;
    case 'raw':
      warnings.dropped(part.path, 'a content block of another format has no Converse equivalent');
      return [];
  }
  if (typeof block === 'string') {
    warnings.dropped(part.path, block);
    return [];
  }
  warnings.report(part.dropped);
  if ('extra' in part && part.extra !== undefined) {
    for (const key in part.extra) warnings.dropped(`${part.path}.${key}`, 'not a field of the Bedrock Converse API');
  }
  return 'cache' in part && part.cache !== undefined ? [block, CACHE_POINT] : [block];
}

function toolResultBlock(part: ToolResultPart, warnings: Warnings): JsonObject {
  const content: JsonObject[] = [];
  if (typeof part.content === 'string') {
    content.push({ text: part.content });
  } else if (part.content !== undefined) {
    for (const item of part.content) {
      if ('type' in item && (item.type === 'tool_result' || item.type === 'tool_call' || item.type === 'reasoning')) {
        warnings.dropped(item.path, 'only text, images and documents have a place in a Converse tool result');
        continue;
      }
      // A cache point has no place inside a tool result; one after the result is kept below.
      for (const block of writeBlock(item, warnings)) if (!('cachePoint' in block)) content.push(block);
    }
  }
  // Converse requires content in a tool result.
  if (content.length === 0) content.push({ text: '' });
  const result: JsonObject = { toolUseId: part.toolCallId, content };
  if (part.isError !== undefined) result.status = 'error';
  return { toolResult: result };
}

function writeToolConfig(request: ChatRequest, warnings: Warnings): JsonObject | undefined {
  const tools = writeTools(request.tools, warnings);
  const choice = request.toolChoice;
  if (request.parallelToolCalls === false) {
    warnings.droppedWithout('parallel_tool_calls', 'limiting a turn to one tool call');
  }
  if (tools === undefined) {
    if (choice !== undefined && choice.mode !== 'none') warnings.dropped(choice.path, 'a tool choice without tools');
    return undefined;
  }
  const config: JsonObject = { tools };
  if (choice !== undefined) {
    const written = writeToolChoice(choice, warnings);
    if (written !== undefined) config.toolChoice = written;
  }
  return config;
}

function writeTools(tools: Tool[] | undefined, warnings: Warnings): JsonObject[] | undefined {
  if (tools === undefined) return undefined;
  const out: JsonObject[] = [];
  for (const tool of tools) {
    if ('kind' in tool) {
      warnings.report([tool]);
    } else if (tool.type === 'raw') {
      warnings.dropped(tool.path, 'a tool of another format has no Converse equivalent');
    } else {
      warnings.report(tool.dropped);
      const spec: JsonObject = { name: tool.name };
      if (tool.description !== undefined) spec.description = tool.description;
      spec.inputSchema = { json: tool.parameters ?? { type: 'object', properties: {} } };
      if (tool.strict !== undefined) spec.strict = tool.strict;
      if (tool.extra !== undefined) {
        for (const key in tool.extra)
          warnings.dropped(`${tool.path}.${key}`, 'not a field of the Bedrock Converse API');
      }
      out.push({ toolSpec: spec });
    }
  }
  return out.length > 0 ? out : undefined;
}

function writeToolChoice(choice: ToolChoice, warnings: Warnings): JsonObject | undefined {
  if (choice.allowed !== undefined) {
    warnings.changed(choice.path, 'the allowed_tools list has no Converse equivalent; only its mode is sent');
  }
  switch (choice.mode) {
    case 'auto':
      return { auto: {} };
    case 'required':
      return { any: {} };
    case 'tool':
      return { tool: { name: choice.name } };
    case 'none':
      // Converse has no "none"; its tools stay declared, since earlier turns may use them.
      warnings.changed(choice.path, 'tool choice none has no Converse equivalent; the model may call a tool');
      return undefined;
  }
}

/**
 * The thinking budget of a reasoning effort, below the request's max_tokens (Claude takes a budget
 * of at least 1024 tokens and less than max_tokens), or why there is none.
 */
function effortBudget(effort: unknown, maxTokens: number | undefined): number | string {
  const budget = typeof effort === 'string' ? EFFORT_BUDGETS[effort] : undefined;
  if (budget === undefined) return `no thinking budget matches ${JSON.stringify(effort)}`;
  if (maxTokens === undefined || maxTokens > budget) return budget;
  if (maxTokens > MIN_THINKING_BUDGET) return maxTokens - 1;
  return `max_tokens ${maxTokens} leaves no room for extended thinking (Claude needs a budget of at least ${MIN_THINKING_BUDGET} tokens below it)`;
}
