// The AWS event-stream framing of a ConverseStream answer, read incrementally. Each message is a
// binary frame (total length, headers length, prelude CRC, headers, payload, message CRC); chunks
// may split a frame anywhere. Whole frames are decoded by @smithy/eventstream-codec, which checks
// both CRCs. Bounded: a frame longer than MAX_FRAME_LENGTH ends the stream, as does a frame that
// is not one (garbage), and an exception frame is the provider's error (the caller reports it).
//
// Frames come back in the shape of SSE blocks (event name, data), so that the one stream wrapper
// (stream.ts TranslatingStream) runs Converse's reader like every other format's.
import { EventStreamCodec, type Message } from '@smithy/eventstream-codec';
import type { SseBlock } from '../sse-reader.ts';
import { StreamFailure, TRUNCATED_MESSAGE } from '../stream.ts';

/** The largest frame gw buffers while waiting for its end (bytes); Bedrock's events are far smaller. */
export const MAX_FRAME_LENGTH = 1024 * 1024;

/** The smallest frame: the 12-byte prelude and the 4-byte message CRC. */
const MIN_FRAME_LENGTH = 16;

const encoder = new TextEncoder();
const decoder = new TextDecoder('utf-8', { fatal: true });
const codec = new EventStreamCodec(
  (bytes: Uint8Array) => decoder.decode(bytes),
  (text: string) => encoder.encode(text),
);

/** The HTTP status an exception stands for (Bedrock's ConverseStream exception types). */
const EXCEPTION_STATUS: Record<string, number> = {
  validationException: 400,
  throttlingException: 429,
  serviceUnavailableException: 503,
  internalServerException: 500,
  modelStreamErrorException: 502,
};

export class EventStreamFrames {
  readonly #chunks: Uint8Array[] = [];
  #buffered = 0;

  /** Always false: an oversized frame throws instead (the interface TranslatingStream reads). */
  readonly overflowed = false;

  /**
   * A bad or exception frame, found after the frames `push` returned with it: those are the
   * provider's last events before it, and go to the client first (TranslatingStream throws this
   * once it has translated them).
   */
  #failure: StreamFailure | undefined;

  get failure(): StreamFailure | undefined {
    return this.#failure;
  }

  /** The event frames completed by this chunk; a bad or exception frame ends them (see failure). */
  push(chunk: Uint8Array): SseBlock[] {
    if (this.#failure !== undefined) return [];
    if (chunk.byteLength > 0) {
      this.#chunks.push(chunk);
      this.#buffered += chunk.byteLength;
    }
    const blocks: SseBlock[] = [];
    try {
      for (;;) {
        if (this.#buffered < 4) return blocks;
        const head = this.#take(4, false);
        const length = new DataView(head.buffer, head.byteOffset, 4).getUint32(0);
        if (length < MIN_FRAME_LENGTH)
          throw new StreamFailure(502, 'The provider sent a malformed event-stream frame.');
        if (length > MAX_FRAME_LENGTH) {
          throw new StreamFailure(502, `The provider sent an event longer than ${MAX_FRAME_LENGTH} bytes.`);
        }
        if (this.#buffered < length) return blocks;
        const block = frameBlock(this.#take(length, true));
        if (block !== undefined) blocks.push(block);
      }
    } catch (error) {
      if (!(error instanceof StreamFailure)) throw error;
      this.#failure = error;
      return blocks;
    }
  }

  /** The stream ended: a partial frame left over is a truncated stream. */
  finish(): SseBlock[] {
    if (this.#failure !== undefined) return [];
    if (this.#buffered > 0) throw new StreamFailure(502, TRUNCATED_MESSAGE);
    return [];
  }

  /** The first `length` buffered bytes, as one array; `consume` removes them from the buffer. */
  #take(length: number, consume: boolean): Uint8Array {
    let first = this.#chunks[0]!;
    if (first.byteLength < length) {
      const joined = new Uint8Array(this.#buffered);
      let offset = 0;
      for (const chunk of this.#chunks) {
        joined.set(chunk, offset);
        offset += chunk.byteLength;
      }
      this.#chunks.length = 0;
      this.#chunks.push(joined);
      first = joined;
    }
    const bytes = first.subarray(0, length);
    if (consume) {
      this.#buffered -= length;
      if (first.byteLength === length) this.#chunks.shift();
      else this.#chunks[0] = first.subarray(length);
    }
    return bytes;
  }
}

function header(message: Message, name: string): string | undefined {
  const value = message.headers[name];
  return value?.type === 'string' ? value.value : undefined;
}

/** An event frame as a block (its event type and JSON payload); throws for an exception or error frame. */
function frameBlock(bytes: Uint8Array): SseBlock | undefined {
  let message: Message;
  let data: string;
  try {
    message = codec.decode(bytes);
    data = decoder.decode(message.body);
  } catch {
    throw new StreamFailure(502, 'The provider sent a malformed event-stream frame.');
  }
  const type = header(message, ':message-type');
  if (type === 'exception') {
    const exception = header(message, ':exception-type') ?? '';
    throw new StreamFailure(EXCEPTION_STATUS[exception] ?? 502, providerMessage(data), true);
  }
  if (type === 'error') {
    throw new StreamFailure(
      502,
      header(message, ':error-message') ?? 'The provider reported an error in the stream.',
      true,
    );
  }
  if (type !== 'event') return undefined;
  return { raw: '', event: header(message, ':event-type'), data };
}

/** The message of an exception's JSON payload ({"message": ...}). */
function providerMessage(data: string): string {
  try {
    const parsed: unknown = JSON.parse(data);
    if (
      typeof parsed === 'object' &&
      parsed !== null &&
      typeof (parsed as { message?: unknown }).message === 'string'
    ) {
      return (parsed as { message: string }).message;
    }
  } catch {
    // the generic message below
  }
  return 'The provider reported an error in the stream.';
}
