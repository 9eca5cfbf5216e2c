// The adapters of each chat format, and translation between two formats as reading into the chat
// form and writing out of it (docs/decisions/0018-llm-intermediate-form.md). A new format adds
// its adapters here; no pair of formats has code of its own.
import { readCompletionsRequest, writeCompletionsRequest } from './completions/request.ts';
import { readCompletionsResponse, writeCompletionsResponse } from './completions/response.ts';
import { CompletionsStreamReader, CompletionsStreamWriter } from './completions/stream.ts';
import type { ChatRequest, ChatResponse, StreamWriter } from './form/types.ts';
import { readMessagesRequest, writeMessagesRequest } from './messages/request.ts';
import { readMessagesResponse, writeMessagesResponse } from './messages/response.ts';
import { MessagesStreamReader, MessagesStreamWriter } from './messages/stream.ts';
import type { EventTranslator } from './stream.ts';
import type { ChatFormat, JsonObject, RequestTranslation } from './types.ts';

export interface RequestOptions {
  /** Messages only: the max_tokens to send when the client gave no limit (default 4096). */
  defaultMaxTokens?: number;
}

export interface ResponseOptions {
  /** The model name to show the client (the one it asked for); the provider's otherwise. */
  model?: string;
  /** Chat Completions only: the client asked for the usage chunk (stream_options.include_usage). */
  includeUsage?: boolean;
}

interface ChatFormatAdapters {
  /** Throws TranslationError for a body its own format rejects. */
  readRequest(body: JsonObject): ChatRequest;
  writeRequest(request: ChatRequest, options: RequestOptions): RequestTranslation;
  /** Throws TranslationError for a body that is not a response of its format. */
  readResponse(body: JsonObject): ChatResponse;
  writeResponse(response: ChatResponse, options: ResponseOptions): JsonObject;
  streamReader(writer: StreamWriter): EventTranslator;
  streamWriter(options: ResponseOptions): StreamWriter;
}

const ADAPTERS: Record<ChatFormat, ChatFormatAdapters> = {
  completions: {
    readRequest: readCompletionsRequest,
    writeRequest: writeCompletionsRequest,
    readResponse: readCompletionsResponse,
    writeResponse: writeCompletionsResponse,
    streamReader: (writer) => new CompletionsStreamReader(writer),
    streamWriter: (options) => new CompletionsStreamWriter(options),
  },
  messages: {
    readRequest: readMessagesRequest,
    writeRequest: writeMessagesRequest,
    readResponse: readMessagesResponse,
    writeResponse: writeMessagesResponse,
    streamReader: (writer) => new MessagesStreamReader(writer),
    streamWriter: (options) => new MessagesStreamWriter(options),
  },
};

/**
 * A client's request (format `from`) as a request to a provider of another format (`to`).
 * Throws TranslationError for a body its own format rejects (the proxy answers 400).
 */
export function translateRequest(
  from: ChatFormat,
  to: ChatFormat,
  body: JsonObject,
  options: RequestOptions = {},
): RequestTranslation {
  return ADAPTERS[to].writeRequest(ADAPTERS[from].readRequest(body), options);
}

/**
 * A provider's non-streaming response (format `from`) as a response in the client's format
 * (`to`). Throws TranslationError for a body that is not a response of its format (502).
 */
export function translateResponse(
  from: ChatFormat,
  to: ChatFormat,
  body: JsonObject,
  options: ResponseOptions = {},
): JsonObject {
  return ADAPTERS[to].writeResponse(ADAPTERS[from].readResponse(body), options);
}

/** The reader of the provider's stream (`from`), writing the client's (`to`). */
export function streamReader(from: ChatFormat, to: ChatFormat, options: ResponseOptions): EventTranslator {
  return ADAPTERS[from].streamReader(ADAPTERS[to].streamWriter(options));
}
