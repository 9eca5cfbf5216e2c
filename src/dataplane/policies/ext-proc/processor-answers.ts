// Reading a processor's answers, the same for the request and the response side: that an answer
// is the one gw waits for, whether it replaces the rest of the processing (CONTINUE_AND_REPLACE),
// the body a mutation sets, and the body chunks of full-duplex streaming.
import type { BodyMutation, CommonResponse, ProcessingResponse } from './messages.ts';
import { ProcessorError } from './processor-stream.ts';
import type { ExtProcSession } from './session.ts';

export const EMPTY_BODY = Buffer.alloc(0);

/** Fails the exchange (a protocol error) unless `message` answers `kind`. */
export function expectAnswer(message: ProcessingResponse, kind: ProcessingResponse['response']): void {
  if (message.response !== kind)
    throw new ProcessorError('protocol', `expected a ${kind} answer, got ${message.response ?? 'an empty message'}`);
}

/** Whether the processor answered CONTINUE_AND_REPLACE: its mutations stand for the rest of the phase. */
export function replaces(common: CommonResponse | null | undefined): boolean {
  return common?.status === 'CONTINUE_AND_REPLACE' || common?.status === 1;
}

/** The body a mutation sets (empty for clear_body), or undefined when it sets none. */
export function bodyOf(mutation: BodyMutation | null | undefined): Buffer | undefined {
  if (mutation?.mutation === 'body') return mutation.body ?? EMPTY_BODY;
  if (mutation?.mutation === 'clear_body' && mutation.clear_body) return EMPTY_BODY;
  return undefined;
}

/**
 * The CommonResponse of an answer to a body sent whole (Buffered, BufferedPartial), its dynamic
 * metadata taken; a streamed_response there is a protocol error.
 */
export function bufferedBodyResponse(
  session: ExtProcSession,
  message: ProcessingResponse,
  kind: 'request_body' | 'response_body',
): CommonResponse | null | undefined {
  expectAnswer(message, kind);
  session.takeDynamicMetadata(message.dynamic_metadata);
  const common = message[kind]?.response;
  if (common?.body_mutation?.mutation === 'streamed_response')
    throw new ProcessorError('protocol', 'streamed_response is for FullDuplexStreamed mode; send body or clear_body');
  return common;
}

/**
 * The body chunk of an answer in FullDuplexStreamed mode, or undefined when it carries none; a
 * whole body (body, clear_body) there is a protocol error.
 */
export function streamedChunk(common: CommonResponse | null | undefined): { body: Buffer; end: boolean } | undefined {
  const mutation = common?.body_mutation;
  if (mutation?.mutation === 'body' || mutation?.mutation === 'clear_body')
    throw new ProcessorError('protocol', 'in FullDuplexStreamed mode the body comes back as streamed_response chunks');
  if (mutation?.mutation !== 'streamed_response') return undefined;
  const part = mutation.streamed_response;
  return { body: part?.body ?? EMPTY_BODY, end: Boolean(part?.end_of_stream) };
}
