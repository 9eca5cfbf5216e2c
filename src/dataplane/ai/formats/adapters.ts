// The adapters of each chat format, and translation between two formats as reading into the chat
// form and writing out of it (docs/decisions/0018-llm-intermediate-form.md). A new format adds
// its adapters here; no pair of formats has code of its own.
//
// A client's side of a format reads requests and writes responses and streams; a provider's side
// writes requests and reads responses and streams. Bedrock Converse is a provider format only;
// Chat Completions, Messages, Gemini generateContent and the Responses API are both (the
// Responses API's provider side — request-writer.ts, response-reader.ts, stream-reader.ts —
// serves a server that speaks only the Responses API).
import { readCompletionsRequest, writeCompletionsRequest } from './completions/request.ts';
import { readCompletionsResponse, writeCompletionsResponse } from './completions/response.ts';
import { CompletionsStreamReader, CompletionsStreamWriter } from './completions/stream.ts';
import { writeConverseRequest } from './converse/request.ts';
import { readConverseResponse } from './converse/response.ts';
import { ConverseStreamReader } from './converse/stream.ts';
import type { ChatRequest, ChatResponse, StreamWriter } from './form/types.ts';
import { readGeminiRequest, writeGeminiRequest } from './gemini/request.ts';
import { readGeminiResponse, writeGeminiResponse } from './gemini/response.ts';
import { GeminiStreamReader, GeminiStreamWriter } from './gemini/stream.ts';
import { readMessagesRequest, writeMessagesRequest } from './messages/request.ts';
import { readMessagesResponse, writeMessagesResponse } from './messages/response.ts';
import { MessagesStreamReader, MessagesStreamWriter } from './messages/stream.ts';
import { readResponsesRequest } from './responses/request.ts';
import { writeResponsesRequest } from './responses/request-writer.ts';
import { writeResponsesResponse } from './responses/response.ts';
import { readResponsesResponse } from './responses/response-reader.ts';
import { ResponsesStreamWriter } from './responses/stream.ts';
import { ResponsesStreamReader } from './responses/stream-reader.ts';
import type { EventTranslator } from './stream.ts';
import type { ClientChatFormat, JsonObject, ProviderChatFormat, RequestTranslation } from './types.ts';

export interface RequestOptions {
  /** Messages only: the max_tokens to send when the client gave no limit (default 4096). */
  defaultMaxTokens?: number;
  /**
   * Converse only: the model the request goes to (the override, else the client's), which the
   * path names: whether it is a Claude model decides what a reasoning effort becomes.
   */
  model?: string;
}

export interface ResponseOptions {
  /** The model name to show the client (the one it asked for); the provider's otherwise. */
  model?: string;
  /** Chat Completions only: the client asked for the usage chunk (stream_options.include_usage). */
  includeUsage?: boolean;
}

interface ClientAdapters {
  /** Throws TranslationError for a body its own format rejects. */
  readRequest(body: JsonObject): ChatRequest;
  writeResponse(response: ChatResponse, options: ResponseOptions): JsonObject;
  streamWriter(options: ResponseOptions): StreamWriter;
}

interface ProviderAdapters {
  writeRequest(request: ChatRequest, options: RequestOptions): RequestTranslation;
  /** Throws TranslationError for a body that is not a response of its format. */
  readResponse(body: JsonObject): ChatResponse;
  streamReader(writer: StreamWriter): EventTranslator;
}

const CLIENT_ADAPTERS: Record<ClientChatFormat, ClientAdapters> = {
  completions: {
    readRequest: readCompletionsRequest,
    writeResponse: writeCompletionsResponse,
    streamWriter: (options) => new CompletionsStreamWriter(options),
  },
  messages: {
    readRequest: readMessagesRequest,
    writeResponse: writeMessagesResponse,
    streamWriter: (options) => new MessagesStreamWriter(options),
  },
  responses: {
    readRequest: readResponsesRequest,
    writeResponse: writeResponsesResponse,
    streamWriter: (options) => new ResponsesStreamWriter(options),
  },
  gemini: {
    readRequest: readGeminiRequest,
    writeResponse: writeGeminiResponse,
    streamWriter: (options) => new GeminiStreamWriter(options),
  },
};

const PROVIDER_ADAPTERS: Record<ProviderChatFormat, ProviderAdapters> = {
  completions: {
    writeRequest: writeCompletionsRequest,
    readResponse: readCompletionsResponse,
    streamReader: (writer) => new CompletionsStreamReader(writer),
  },
  messages: {
    writeRequest: writeMessagesRequest,
    readResponse: readMessagesResponse,
    streamReader: (writer) => new MessagesStreamReader(writer),
  },
  responses: {
    writeRequest: writeResponsesRequest,
    readResponse: readResponsesResponse,
    streamReader: (writer) => new ResponsesStreamReader(writer),
  },
  converse: {
    writeRequest: writeConverseRequest,
    readResponse: readConverseResponse,
    streamReader: (writer) => new ConverseStreamReader(writer),
  },
  gemini: {
    writeRequest: writeGeminiRequest,
    readResponse: readGeminiResponse,
    streamReader: (writer) => new GeminiStreamReader(writer),
  },
};

/**
 * A client's request (format `from`) as a request to a provider of another format (`to`).
 * Throws TranslationError for a body its own format rejects (the proxy answers 400).
 */
export function translateRequest(
  from: ClientChatFormat,
  to: ProviderChatFormat,
  body: JsonObject,
  options: RequestOptions = {},
): RequestTranslation {
  return PROVIDER_ADAPTERS[to].writeRequest(CLIENT_ADAPTERS[from].readRequest(body), options);
}

/**
 * A provider's non-streaming response (format `from`) as a response in the client's format
 * (`to`). Throws TranslationError for a body that is not a response of its format (502).
 */
export function translateResponse(
  from: ProviderChatFormat,
  to: ClientChatFormat,
  body: JsonObject,
  options: ResponseOptions = {},
): JsonObject {
  return CLIENT_ADAPTERS[to].writeResponse(PROVIDER_ADAPTERS[from].readResponse(body), options);
}

/** The writer of the client's stream (`to`). */
export function clientStreamWriter(to: ClientChatFormat, options: ResponseOptions): StreamWriter {
  return CLIENT_ADAPTERS[to].streamWriter(options);
}

/** The reader of the provider's stream (`from`), writing to `writer`. */
export function providerStreamReader(from: ProviderChatFormat, writer: StreamWriter): EventTranslator {
  return PROVIDER_ADAPTERS[from].streamReader(writer);
}
