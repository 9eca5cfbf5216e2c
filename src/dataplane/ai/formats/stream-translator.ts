// The stream translator for a pair of chat formats.
import { CompletionsToMessagesEvents } from './completions-to-messages-stream.ts';
import { MessagesToCompletionsEvents } from './messages-to-completions-stream.ts';
import { type StreamProcessor, TranslatingStream } from './stream.ts';
import { createStreamObserver } from './stream-observer.ts';
import type { ChatFormat } from './types.ts';

export interface StreamTranslatorOptions {
  /** The model name to show the client (the one it asked for); the provider's otherwise. */
  model?: string;
  /** The Chat Completions client asked for usage (stream_options.include_usage). */
  includeUsage?: boolean;
}

/**
 * Translates the provider's stream (`from`) into the client's format (`to`). The same format on
 * both sides gives the observer, which drops the usage-only chunk unless the client asked for it.
 */
export function createStreamTranslator(
  from: ChatFormat,
  to: ChatFormat,
  options: StreamTranslatorOptions = {},
): StreamProcessor {
  if (from === to) {
    return createStreamObserver(from, { dropUsageOnlyChunk: from === 'completions' && options.includeUsage !== true });
  }
  if (from === 'messages') return new TranslatingStream(new MessagesToCompletionsEvents(options), 'completions');
  return new TranslatingStream(new CompletionsToMessagesEvents(options), 'messages');
}
