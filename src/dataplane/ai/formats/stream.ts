// The interface every stream translator and observer offers the proxy, and the wrapper that turns
// upstream bytes into client SSE text without ever throwing: anything wrong with the upstream
// stream ends it with an error event in the client's format.
import { statusForErrorType, streamErrorEvent } from './errors.ts';
import type { StreamWriter } from './form/types.ts';
import { isPlainObject, stringOr } from './json.ts';
import { MAX_SSE_BLOCK_LENGTH, type SseBlock } from './sse-reader.ts';
import type { ClientChatFormat, JsonObject } from './types.ts';
import type { Usage } from './usage.ts';

export interface StreamProcessor {
  /** Feeds upstream bytes as they arrive; returns the SSE text to send to the client now. */
  write(chunk: Uint8Array): string;
  /** The upstream stream ended; returns the last SSE text for the client. */
  end(): string;
  /** Token usage reported so far (complete once the stream is). */
  readonly usage: Usage | undefined;
  /** The model the provider reports. */
  readonly model: string | undefined;
  /** Whether generated content (a token) has arrived: the proxy stamps time-to-first-token when it turns true. */
  readonly firstTokenSeen: boolean;
  /**
   * Whether the client's stream is over before the upstream's: `complete` once the response is
   * whole, `failed` once an error event ended it. Either way later upstream bytes would be
   * ignored, so the proxy stops reading them. An observer stays `open`: it passes on whatever comes.
   */
  readonly state: StreamState;
  /** Why the stream failed, in gw's own words (for the log), once `state` is `failed`. */
  readonly failure: string | undefined;
}

export type StreamState = 'open' | 'complete' | 'failed';

/** A problem with the upstream stream, reported to the client as an error event. */
export class StreamFailure extends Error {
  override name = 'StreamFailure';
  readonly status: number;
  /** The message is the provider's own (an error event it sent), not gw's. */
  readonly fromProvider: boolean;

  constructor(status: number, message: string, fromProvider = false) {
    super(message);
    this.status = status;
    this.fromProvider = fromProvider;
  }
}

export const TRUNCATED_MESSAGE = 'The provider stream ended before the response was complete.';

/**
 * What a stream reader implements (ProviderStreamReader below): upstream SSE events
 * in, the SSE text its writer returns for the client out.
 */
export interface EventTranslator {
  /** Throws StreamFailure for an event it cannot translate. */
  event(name: string | undefined, data: string): string;
  /** The upstream ended; throws StreamFailure when the response was not complete. */
  end(): string;
  /** The response is complete: later events are ignored. */
  readonly done: boolean;
  readonly usage: Usage | undefined;
  /** The model the provider reports, once it has. */
  readonly model: string | undefined;
  readonly firstTokenSeen: boolean;
}

/**
 * The state every provider stream reader reports through EventTranslator: its writer, whether the
 * response is complete, the usage and model the provider reported, and whether a token came.
 * A reader whose format says these otherwise (Messages' cumulative usage, Converse's missing
 * model) overrides the getter.
 */
export abstract class ProviderStreamReader implements EventTranslator {
  protected readonly writer: StreamWriter;
  protected finished = false;
  protected reportedUsage: Usage | undefined;
  protected reportedModel: string | undefined;
  protected firstToken = false;

  constructor(writer: StreamWriter) {
    this.writer = writer;
  }

  abstract event(name: string | undefined, data: string): string;
  abstract end(): string;

  get done(): boolean {
    return this.finished;
  }

  get usage(): Usage | undefined {
    return this.reportedUsage;
  }

  get model(): string | undefined {
    return this.reportedModel;
  }

  get firstTokenSeen(): boolean {
    return this.firstToken;
  }
}

/**
 * How the upstream bytes are cut into events: SSE (SseReader), or another framing whose frames
 * come as SSE blocks (converse/event-stream.ts). push and finish may throw StreamFailure.
 */
export interface EventFraming {
  push(chunk: Uint8Array): SseBlock[];
  finish(): SseBlock[];
  readonly overflowed: boolean;
  /** A failure met after the blocks push returned: reported once they are translated. */
  readonly failure?: StreamFailure | undefined;
}

export class TranslatingStream implements StreamProcessor {
  readonly #reader: EventFraming;
  readonly #translator: EventTranslator;
  readonly #clientFormat: ClientChatFormat;
  readonly #clientModel: string | undefined;
  readonly #writer: Pick<StreamWriter, 'failed'>;
  #stopped = false;
  #failure: string | undefined;

  /**
   * `clientModel` is the model the client asked for: the model until the provider names its own;
   * `writer` the client's stream writer the translator writes to (its error event ends a failure).
   */
  constructor(
    translator: EventTranslator,
    clientFormat: ClientChatFormat,
    clientModel: string | undefined,
    framing: EventFraming,
    writer: Pick<StreamWriter, 'failed'>,
  ) {
    this.#writer = writer;
    this.#reader = framing;
    this.#translator = translator;
    this.#clientFormat = clientFormat;
    this.#clientModel = clientModel;
  }

  get usage(): Usage | undefined {
    return this.#translator.usage;
  }

  get model(): string | undefined {
    return this.#translator.model ?? this.#clientModel;
  }

  get firstTokenSeen(): boolean {
    return this.#translator.firstTokenSeen;
  }

  get state(): StreamState {
    if (this.#failure !== undefined) return 'failed';
    return this.#stopped ? 'complete' : 'open';
  }

  get failure(): string | undefined {
    return this.#failure;
  }

  write(chunk: Uint8Array): string {
    return this.#stopped ? '' : this.#run(() => this.#reader.push(chunk), false);
  }

  end(): string {
    return this.#stopped ? '' : this.#run(() => this.#reader.finish(), true);
  }

  #run(read: () => SseBlock[], ending: boolean): string {
    let out = '';
    try {
      for (const block of read()) {
        if (block.data === undefined) continue;
        // The last event of a stream that stopped mid-line is cut short, not malformed.
        if (block.unterminated && !isWholeEvent(block.data)) throw new StreamFailure(502, TRUNCATED_MESSAGE);
        out += this.#translator.event(block.event, block.data);
        if (this.#translator.done) {
          this.#stopped = true;
          return out;
        }
      }
      if (this.#reader.failure !== undefined) throw this.#reader.failure;
      if (this.#reader.overflowed) {
        throw new StreamFailure(502, `The provider sent an event longer than ${MAX_SSE_BLOCK_LENGTH} characters.`);
      }
      if (ending) {
        this.#stopped = true;
        out += this.#translator.end();
      }
    } catch (error) {
      this.#stopped = true;
      const failure =
        error instanceof StreamFailure ? error : new StreamFailure(502, 'gw could not translate the provider stream.');
      // The provider's own text goes to the client, not to gw's log.
      this.#failure = failure.fromProvider ? 'The provider reported an error in the stream.' : failure.message;
      out +=
        this.#writer.failed?.(failure.status, failure.message) ??
        streamErrorEvent(this.#clientFormat, failure.status, failure.message);
    }
    return out;
  }
}

function isWholeEvent(data: string): boolean {
  if (data.trim() === '[DONE]') return true;
  try {
    JSON.parse(data);
    return true;
  } catch {
    return false;
  }
}

/** The JSON object an event carries; anything else is a malformed stream. */
export function parseEventObject(data: string): JsonObject {
  let value: unknown;
  try {
    value = JSON.parse(data);
  } catch {
    throw new StreamFailure(502, 'The provider sent an event that is not valid JSON.');
  }
  if (!isPlainObject(value)) throw new StreamFailure(502, 'The provider sent an event that is not a JSON object.');
  return value;
}

/** An error the provider reported inside its stream: its message, and the status its type stands for. */
export function upstreamFailure(error: unknown): StreamFailure {
  const object = isPlainObject(error) ? error : {};
  const message = stringOr(object.message) ?? 'The provider reported an error in the stream.';
  return new StreamFailure(statusForErrorType(object.type), message, true);
}
