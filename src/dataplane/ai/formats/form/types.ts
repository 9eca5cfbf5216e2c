// The chat form: one shape for a chat request, a response and a stream, between every pair of
// chat formats. A format's adapters read its wire bodies into the form and write the form out as
// its wire bodies, so that N formats need 2N adapters rather than one translator per pair
// (docs/decisions/0018-llm-intermediate-form.md).
//
// The form holds what means the same in more than one format. What only one format knows is
// either carried (`extra`: fields outside the source format's schema, copied unchanged into the
// target body) or left as a `Dropped` note where it stood, so that the writer reports it in the
// order of the source body with the target's name in the message. Nodes keep the path they had
// in the source body (`messages[2].content[1]`) for the warnings the writer reports.
import type { JsonObject } from '../types.ts';
import type { Usage } from '../usage.ts';

/** A field or part of the source body that the form has no place for: the writer reports it. */
export interface Dropped {
  kind: 'dropped';
  /** Where in the source body. */
  path: string;
  /** Why, in full (the message is `${why}; dropped`); otherwise `what` or a generic reason. */
  why?: string;
  /** What was dropped (`audio input`): the message is `${what} has no <target> equivalent; dropped`. */
  what?: string;
}

/** Fields every node of the form may carry. */
interface Node {
  /** Where the node was in the source body. */
  path: string;
  /** Fields of the source node the form has no place for, reported when the node is written. */
  dropped?: Dropped[];
}

/** A flag of the source, with its path there (for a warning when the target cannot express it). */
export interface Flag {
  path: string;
}

/** Fields a content part may carry besides its meaning. */
interface PartNode extends Node {
  /** A prompt-cache breakpoint after this part (Anthropic cache_control, OpenAI prompt_cache_breakpoint, Bedrock cachePoint). */
  cache?: Flag;
  /** Fields of the source part outside its format's schema, carried onto the target part. */
  extra?: JsonObject;
}

/** Inline bytes (base64) with their media type, a URL, or a provider's own file id. */
export type MediaSource =
  | { kind: 'base64'; mediaType: string; data: string }
  | { kind: 'url'; url: string }
  | { kind: 'file'; fileId: string }
  /** Plain text standing in for a document's bytes (Anthropic's text document source). */
  | { kind: 'text'; text: string }
  /** A source the reader's format knows and the form does not (an Anthropic file source, a URL of another scheme). */
  | { kind: 'other'; value: unknown };

export interface TextPart extends PartNode {
  type: 'text';
  text: string;
  /** The model's refusal (OpenAI's `refusal`): text for formats without a refusal field. */
  refusal?: true;
}

export interface ImagePart extends PartNode {
  type: 'image';
  source: MediaSource;
  /** A resolution hint other than the default (OpenAI `detail`), with its path. */
  detail?: { value: unknown; path: string };
}

export interface DocumentPart extends PartNode {
  type: 'document';
  source: MediaSource;
  /** A file name or title, when the source format gives one. */
  name?: string;
}

/**
 * A tool call the model made. `arguments` is JSON text when it is a string (OpenAI's
 * `arguments`), else the decoded value (Anthropic's `input`, Gemini's `args`); undefined when
 * none were given. Writers convert with form/tool-arguments.ts.
 */
export interface ToolCallPart extends PartNode {
  type: 'tool_call';
  id: string | undefined;
  name: string;
  arguments: unknown;
  /** Where the arguments were in the source body, for a warning about them. */
  argumentsPath: string;
  /**
   * The provider's signature of the thinking behind this call (Gemini's thoughtSignature on a
   * functionCall part), which it requires back on the call in the next turn
   * (docs/decisions/0025-provider-signatures.md).
   */
  signature?: string;
}

/** The result of a tool call, sent back by the client. */
export interface ToolResultPart extends PartNode {
  type: 'tool_result';
  toolCallId: string;
  /** A string stays a string; parts are content parts (text, images, documents). Undefined: no content. */
  content: string | Part[] | undefined;
  /** The tool failed (Anthropic is_error, Bedrock status error). */
  isError?: Flag;
}

/** Reasoning the model showed (Anthropic thinking, Bedrock reasoningContent, Gemini thought parts). */
export interface ReasoningPart extends PartNode {
  type: 'reasoning';
  text: string;
  /** The signature that lets the provider verify the reasoning when it is sent back. */
  signature?: string;
  /** Reasoning the provider sent encrypted (Anthropic redacted_thinking, Bedrock redactedContent). */
  redacted?: string;
}

/** A part of a type the reader's format does not define: carried to the target unchanged. */
export interface RawPart extends Node {
  type: 'raw';
  value: unknown;
}

export type Part =
  | TextPart
  | ImagePart
  | DocumentPart
  | ToolCallPart
  | ToolResultPart
  | ReasoningPart
  | RawPart
  | Dropped;

export type Role = 'system' | 'developer' | 'user' | 'assistant';

/**
 * One message in order. System and developer prompts stay where the client put them; a target
 * with one top-level system prompt lifts them. Tool results are parts of a user message.
 * `content` is a string when the client sent plain text, which formats with a string form keep.
 */
export interface Message extends Node {
  role: Role;
  content: string | Part[];
}

/** A function the model may call. */
export interface FunctionTool extends Node {
  type: 'function';
  name: string;
  description?: string;
  /** The JSON Schema of its arguments, when given. */
  parameters?: JsonObject;
  strict?: boolean;
  extra?: JsonObject;
}

/** A tool of a kind the reader's format does not define: carried to the target unchanged. */
export interface RawTool extends Node {
  type: 'raw';
  value: unknown;
}

export type Tool = FunctionTool | RawTool | Dropped;

export interface ToolChoice extends Node {
  mode: 'auto' | 'none' | 'required' | 'tool';
  /** The tool to call, for mode `tool`. */
  name?: string;
  /** A list of allowed tools (OpenAI allowed_tools, Gemini allowedFunctionNames), as given. */
  allowed?: unknown;
}

export type ResponseFormat =
  | (Node & { type: 'json_schema'; schema: JsonObject; name?: string; strict?: boolean })
  | (Node & { type: 'json_object' });

export interface Reasoning {
  /** An effort level as the source format names it (low, medium, high...). */
  effort?: { value: unknown; path: string };
  /** Extended thinking switched on (Anthropic `thinking`, Gemini thinkingConfig), with its budget. */
  thinking?: { budgetTokens?: number; path: string };
}

/** A chat request in the form. Fields are absent when the client did not set them. */
export interface ChatRequest {
  model?: unknown;
  messages: Message[];
  /** The output token limit, as given. */
  maxTokens?: unknown;
  stopSequences?: unknown[];
  /** Where the stop sequences were in the source body (`stop`, `stop_sequences`), for a target without them. */
  stopSequencesPath?: string;
  temperature?: unknown;
  topP?: unknown;
  topK?: { value: unknown; path: string };
  frequencyPenalty?: { value: unknown; path: string };
  presencePenalty?: { value: unknown; path: string };
  seed?: { value: unknown; path: string };
  /** Choices to generate, when more than one. */
  choices?: { value: number; path: string };
  stream?: boolean;
  tools?: Tool[];
  toolChoice?: ToolChoice;
  /** false: at most one tool call per turn. */
  parallelToolCalls?: false;
  /** The end user's id (OpenAI safety_identifier/user, Anthropic metadata.user_id) and where it was. */
  user?: { value: string; path: string };
  responseFormat?: ResponseFormat;
  reasoning?: Reasoning;
  /** The service tier: `auto`, `standard`, or another tier (`value` as the source format names it). */
  serviceTier?: { tier: 'auto' | 'standard' | 'other'; value: unknown; path: string };
  /** Top-level fields of the source the form has no place for, reported by the writer. */
  dropped: Dropped[];
  /** Top-level fields outside the source format's schema, carried over unchanged. */
  extra: JsonObject;
}

/**
 * Why generation stopped. `end`: the model finished its turn; `stop_sequence`, `max_tokens`,
 * `context_window` (the model's context is full), `tool_calls`, `content_filter` (refused or
 * filtered), `pause` (a long server-tool turn paused); `other`: a reason the form does not know.
 */
export type StopReason =
  | 'end'
  | 'stop_sequence'
  | 'max_tokens'
  | 'context_window'
  | 'tool_calls'
  | 'content_filter'
  | 'pause'
  | 'other';

/** A non-streaming chat response in the form. */
export interface ChatResponse {
  id: string | undefined;
  model: string | undefined;
  /** Text, tool calls and reasoning, in order. */
  content: Part[];
  /** Undefined when the provider gave none. */
  stopReason: StopReason | undefined;
  usage: Usage | undefined;
}

/**
 * A stream in the form, as calls on its writer: a stream reader parses the provider's events and
 * calls these methods in order; each returns the SSE text for the client. Tool calls are
 * numbered from 0 in order of appearance (`index`); their argument fragments are JSON text.
 */
export interface StreamWriter {
  /** The response began (always the first call). */
  start(id: string, model: string | undefined): string;
  text(text: string): string;
  reasoning(text: string): string;
  /**
   * The signature of the reasoning just streamed (the provider's proof of its thinking, which it
   * checks when the thinking is sent back). Only a format that can carry it implements this.
   */
  reasoningSignature?(signature: string): string;
  /** Reasoning the provider sent encrypted (ReasoningPart.redacted). Only a format that can carry it implements this. */
  redactedReasoning?(data: string): string;
  /** A tool call starts; `signature` is the provider's signature of the call (ToolCallPart.signature). */
  toolStart(index: number, id: string | undefined, name: string, initialArguments: string, signature?: string): string;
  toolArguments(index: number, fragment: string): string;
  /** The provider said a tool call's block is complete. */
  toolEnd(index: number): string;
  /** Why generation stopped (a reader may repeat it; the client is told once). */
  stop(reason: StopReason | undefined): string;
  /** The response is complete: the last call, with the usage counted. */
  done(usage: Usage | undefined): string;
  /**
   * The stream failed (instead of done): the client's error event. Only for a format whose error
   * event depends on the stream so far (the Responses API numbers it); otherwise the format's
   * error event (errors.ts streamErrorEvent) is sent.
   */
  failed?(status: number, message: string): string;
}
