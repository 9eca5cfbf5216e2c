// The stream translator for a pair of chat formats: the provider format's stream reader feeding
// the client format's stream writer, through the chat form's stream calls.
import { clientStreamWriter, providerStreamReader, type ResponseOptions } from './adapters.ts';
import { EventStreamFrames } from './converse/event-stream.ts';
import { SseReader } from './sse-reader.ts';
import { type StreamProcessor, TranslatingStream } from './stream.ts';
import { createStreamObserver } from './stream-observer.ts';
import type { ClientChatFormat, ProviderChatFormat } from './types.ts';

export type StreamTranslatorOptions = ResponseOptions;

/**
 * Translates the provider's stream (`from`) into the client's format (`to`). The same format on
 * both sides gives the observer, which drops the usage-only chunk unless the client asked for it.
 */
export function createStreamTranslator(
  from: ProviderChatFormat,
  to: ClientChatFormat,
  options: StreamTranslatorOptions = {},
): StreamProcessor {
  if (from === to) {
    return createStreamObserver(from, { dropUsageOnlyChunk: from === 'completions' && options.includeUsage !== true });
  }
  const writer = clientStreamWriter(to, options);
  // ConverseStream is framed in AWS event-stream frames, every other provider format in SSE.
  const framing = from === 'converse' ? new EventStreamFrames() : new SseReader();
  return new TranslatingStream(providerStreamReader(from, writer), to, options.model, framing, writer);
}
