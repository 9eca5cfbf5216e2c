// Translation between LLM API formats (OpenAI Chat Completions, Anthropic Messages) through one
// chat form: requests, responses, SSE streams, errors and usage, and telling a response's format
// from its shape (the Detect route type). Pure functions and stateful stream processors; no I/O.
// docs/llm-formats.md describes every mapping.

export { type RequestOptions, type ResponseOptions, translateRequest, translateResponse } from './adapters.ts';
export { detectedEventFormat, detectedResponseFormat } from './detect.ts';
export {
  type ErrorKind,
  errorBody,
  errorTypeForStatus,
  genericErrorMessage,
  googleRetryDelaySeconds,
  providerErrorMessage,
  streamErrorEvent,
  translateErrorBody,
} from './errors.ts';
export type {
  AnswerHeader,
  ExchangeTranslation,
  TranslatedAnswer,
} from './exchange-translation.ts';
export { type CountTokensApi, type EmbeddingsApi, translateCountTokens, translateEmbeddings } from './exchanges.ts';
export { DEFAULT_MAX_TOKENS } from './messages/request.ts';
export { isStreaming, requestModel, streamIncludesUsage, withStreamUsage } from './request-fields.ts';
export type { StreamProcessor } from './stream.ts';
export {
  createStreamObserver,
  type ObservedFormat,
  type ObservingProcessor,
  type StreamObserverOptions,
} from './stream-observer.ts';
export { createStreamTranslator, type StreamTranslatorOptions } from './stream-translator.ts';
export {
  type ApiFormat,
  type ChatFormat,
  type ClientChatFormat,
  type JsonObject,
  type ProviderChatFormat,
  type RequestTranslation,
  TranslationError,
  type TranslationWarning,
} from './types.ts';
export { type Usage, usageFromResponse } from './usage.ts';
