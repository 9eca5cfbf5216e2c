// BackendAI.promptCaching: prompt-cache breakpoints added to the provider's request body, after
// planning, for the two wire formats that take explicit markers:
//   - Anthropic Messages (gamma, Claude on Vertex (epsilon), Claude on Foundry (beta), a custom
//     Messages server): `cache_control: {type: ephemeral}` on the last cacheable block of the
//     system prompt, of the message at the offset, and on the last tool;
//   - Bedrock Converse (zeta), for the models that cache (Claude, Nova): a `cachePoint` block after
//     the system prompt, after the message's content, after the tools.
// Other formats (Chat Completions, Responses, Gemini) get nothing: those providers cache prompts
// automatically and define no marker gw could add. docs/ai-policies.md#prompt-caching,
// docs/decisions/0026-prompt-caching.md.
//
// A request whose estimated prompt (characters / 4) is below minTokens gets no marker. The
// markers never exceed the providers' limit of 4 per request, counting the client's own first, and
// a client's marker is never moved, replaced or duplicated. The input body is not modified.
import type { PromptCachingConfig } from '../../../api/types/ai.ts';
import type { JsonObject } from '../formats/types.ts';

/** Anthropic and Bedrock refuse a request with more than four cache breakpoints. */
export const MAX_CACHE_BREAKPOINTS = 4;

/** The characters one token stands for in gw's estimate (a common rule of thumb for English text and JSON). */
export const CHARACTERS_PER_TOKEN = 4;

/** Adds the configured markers to a provider body; returns the body unchanged when none apply. */
export type PromptCacher = (providerBody: JsonObject, providerFormat: string, model: string | undefined) => JsonObject;

interface CachingOptions {
  system: boolean;
  messages: boolean;
  tools: boolean;
  minTokens: number;
  messageOffset: number;
}

/** The configuration with the spec's defaults filled in; undefined when promptCaching is unset. */
export function compilePromptCaching(config: PromptCachingConfig | undefined): PromptCacher | undefined {
  if (config === undefined) return undefined;
  const options: CachingOptions = {
    system: config.cacheSystem ?? true,
    messages: config.cacheMessages ?? true,
    tools: config.cacheTools ?? false,
    minTokens: config.minTokens ?? 1024,
    messageOffset: config.cacheMessageOffset ?? 0,
  };
  if (!options.system && !options.messages && !options.tools) return undefined;
  return (body, format, model) => {
    if (format === 'messages') return placeMarkers(body, options, MESSAGES);
    if (format === 'converse' && converseModelCaches(model)) return placeMarkers(body, options, CONVERSE);
    return body;
  };
}

/**
 * Whether a Bedrock model takes cachePoint blocks: Anthropic's Claude (but the retired Instant,
 * v1 and v2) and Amazon's Nova, named by a model id or an inference profile (id or ARN). Bedrock
 * refuses cache points for other models, so they get none.
 */
export function converseModelCaches(model: string | undefined): boolean {
  if (model === undefined) return false;
  const id = model.toLowerCase();
  if (id.includes('anthropic.claude')) return !/claude-(instant|v1|v2)/.test(id);
  return id.includes('amazon.nova');
}

/** gw's estimate of a prompt's tokens: the characters of its strings / 4 (base64 media left out). */
export function estimatePromptTokens(...parts: unknown[]): number {
  let characters = 0;
  const walk = (value: unknown, key: string | undefined): void => {
    if (typeof value === 'string') {
      // Inline media (Messages source.data, Converse source.bytes) is not counted as text tokens.
      if (key !== 'data' && key !== 'bytes') characters += value.length;
    } else if (Array.isArray(value)) {
      for (const item of value) walk(item, undefined);
    } else if (value !== null && typeof value === 'object') {
      for (const [name, item] of Object.entries(value)) walk(item, name);
    }
  };
  for (const part of parts) walk(part, undefined);
  return Math.ceil(characters / CHARACTERS_PER_TOKEN);
}

/** The index of the message the message marker goes on: the second-to-last, `offset` further back, at least the first. */
function targetMessage(count: number, offset: number): number | undefined {
  if (count < 2) return undefined;
  return Math.max(0, count - 2 - offset);
}

function isObject(value: unknown): value is JsonObject {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

/** How one wire format holds its prompt and takes markers. Each mark* returns new values, or undefined when it adds none. */
interface MarkerDialect {
  /** The parts of the body the prompt estimate reads. */
  promptParts(body: JsonObject): unknown[];
  /** The markers the body already has (the client's). */
  countMarkers(body: JsonObject): number;
  markSystem(system: unknown): unknown[] | undefined;
  markContent(content: unknown): unknown[] | undefined;
  /** The top-level fields that replace the body's, with a marker after the tools. */
  markTools(body: JsonObject): JsonObject | undefined;
}

/** The markers `options` asks for, in order system, message, tools, while the limit leaves room. */
function placeMarkers(body: JsonObject, options: CachingOptions, dialect: MarkerDialect): JsonObject {
  if (estimatePromptTokens(...dialect.promptParts(body)) < options.minTokens) return body;
  let used = dialect.countMarkers(body);
  const changes: JsonObject = {};
  if (options.system && used < MAX_CACHE_BREAKPOINTS) {
    const system = dialect.markSystem(body.system);
    if (system !== undefined) {
      changes.system = system;
      used++;
    }
  }
  if (options.messages && used < MAX_CACHE_BREAKPOINTS && Array.isArray(body.messages)) {
    const index = targetMessage(body.messages.length, options.messageOffset);
    const message = index === undefined ? undefined : body.messages[index];
    const content = isObject(message) ? dialect.markContent(message.content) : undefined;
    if (index !== undefined && content !== undefined) {
      const messages = [...body.messages];
      messages[index] = { ...(message as JsonObject), content };
      changes.messages = messages;
      used++;
    }
  }
  if (options.tools && used < MAX_CACHE_BREAKPOINTS) {
    const fields = dialect.markTools(body);
    if (fields !== undefined) Object.assign(changes, fields);
  }
  return Object.keys(changes).length === 0 ? body : { ...body, ...changes };
}

// ---- Anthropic Messages ----

/** Block types that accept cache_control (a marker on a thinking block is refused). */
const CACHEABLE_BLOCKS: ReadonlySet<string> = new Set([
  'text',
  'image',
  'document',
  'search_result',
  'tool_use',
  'tool_result',
  'server_tool_use',
  'web_search_tool_result',
]);

function hasCacheControl(block: unknown): boolean {
  return isObject(block) && block.cache_control !== undefined && block.cache_control !== null;
}

/** The client's cache_control markers: on system, message and tool-result blocks, and on tools. */
function countMessagesMarkers(body: JsonObject): number {
  let count = 0;
  const countBlocks = (blocks: unknown): void => {
    if (!Array.isArray(blocks)) return;
    for (const block of blocks) {
      if (hasCacheControl(block)) count++;
      if (isObject(block) && block.type === 'tool_result') countBlocks(block.content);
    }
  };
  countBlocks(body.system);
  if (Array.isArray(body.messages))
    for (const message of body.messages) if (isObject(message)) countBlocks(message.content);
  countBlocks(body.tools);
  return count;
}

/**
 * Content (a string or blocks) with its last cacheable block marked, as a new array; undefined
 * when it has none or the block already carries the client's marker (kept as it is).
 */
function markLastBlock(content: unknown): unknown[] | undefined {
  const blocks = typeof content === 'string' ? [{ type: 'text', text: content }] : content;
  if (!Array.isArray(blocks)) return undefined;
  for (let index = blocks.length - 1; index >= 0; index--) {
    const block = blocks[index];
    if (!isObject(block) || typeof block.type !== 'string' || !CACHEABLE_BLOCKS.has(block.type)) continue;
    if (hasCacheControl(block)) return undefined;
    const marked = [...blocks];
    marked[index] = { ...block, cache_control: { type: 'ephemeral' } };
    return marked;
  }
  return undefined;
}

const MESSAGES: MarkerDialect = {
  promptParts: (body) => [body.system, body.messages, body.tools],
  countMarkers: countMessagesMarkers,
  markSystem: (system) => (system === '' ? undefined : markLastBlock(system)),
  markContent: markLastBlock,
  markTools(body) {
    const last = Array.isArray(body.tools) ? body.tools.at(-1) : undefined;
    if (!Array.isArray(body.tools) || !isObject(last) || hasCacheControl(last)) return undefined;
    return { tools: [...body.tools.slice(0, -1), { ...last, cache_control: { type: 'ephemeral' } }] };
  },
};

// ---- Bedrock Converse ----

const CACHE_POINT = { cachePoint: { type: 'default' } };

function isCachePoint(block: unknown): boolean {
  return isObject(block) && block.cachePoint !== undefined;
}

function countCachePoints(blocks: unknown): number {
  return Array.isArray(blocks) ? blocks.filter(isCachePoint).length : 0;
}

/** The client's cache points (from its own markers, translated): in system, messages and tools. */
function countConverseMarkers(body: JsonObject): number {
  let count = countCachePoints(body.system);
  if (Array.isArray(body.messages)) {
    for (const message of body.messages) if (isObject(message)) count += countCachePoints(message.content);
  }
  if (isObject(body.toolConfig)) count += countCachePoints(body.toolConfig.tools);
  return count;
}

/** Blocks with a cache point after them; undefined when empty or already ending in one. */
function withCachePoint(blocks: unknown): unknown[] | undefined {
  if (!Array.isArray(blocks) || blocks.length === 0 || isCachePoint(blocks.at(-1))) return undefined;
  return [...blocks, { cachePoint: { ...CACHE_POINT.cachePoint } }];
}

const CONVERSE: MarkerDialect = {
  promptParts: (body) => [body.system, body.messages, isObject(body.toolConfig) ? body.toolConfig.tools : undefined],
  countMarkers: countConverseMarkers,
  markSystem: withCachePoint,
  markContent: withCachePoint,
  markTools(body) {
    const toolConfig = body.toolConfig;
    const tools = isObject(toolConfig) ? withCachePoint(toolConfig.tools) : undefined;
    return tools === undefined ? undefined : { toolConfig: { ...(toolConfig as JsonObject), tools } };
  },
};
