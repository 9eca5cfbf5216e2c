// One conversation with an InferencePool's endpoint picker (EPP), as the Gateway API Inference
// Extension's Endpoint Picker Protocol (v1.0) defines it: an Envoy ext_proc Process stream in
// full-duplex mode, on the ext_proc client the extProc policy uses (policies/ext-proc). gw sends
// the request headers — with the pool's ready endpoints as the subset hint in metadata_context
// (`envoy.lb.subset_hint`) — then the whole body; the picker answers the headers (possibly only
// once it has the body) with the endpoints it picked in the `x-gateway-destination-endpoint`
// header mutation and/or the `envoy.lb` dynamic metadata, and may stream the body back changed
// or answer the client itself (immediate_response: 429, 503...). The stream stays open for the
// response: once the chosen endpoint's response head arrives gw sends it, with the endpoint that
// served it in metadata_context (`envoy.lb` `x-gateway-destination-endpoint-served`), and applies
// the picker's header changes to the client's response. The response body is not sent
// (protocol_config: response_body_mode NONE); docs/decisions/0049-inference-pool.md.

import { immediateAnswer } from '../../policies/ext-proc/answers.ts';
import { headerMap, headerValueOf } from '../../policies/ext-proc/headers.ts';
import type { HeaderMutation, ProcessingResponse } from '../../policies/ext-proc/messages.ts';
import { bodyOf, expectAnswer, replaces, streamedChunk } from '../../policies/ext-proc/processor-answers.ts';
import {
  connected,
  type ExternalProcessorClient,
  ProcessorError,
  ProcessorStream,
} from '../../policies/ext-proc/processor-stream.ts';
import { jsonToStruct, structToJson } from '../../policies/grpc/struct.ts';
import type { LocalResponse } from '../../policies/types.ts';
import type { HeaderBag } from '../../routing/filters.ts';

/** The header (and `envoy.lb` metadata key) naming the picked endpoints, "ip:port[,ip:port...]". */
export const DESTINATION_ENDPOINT = 'x-gateway-destination-endpoint';
/** More endpoints to try after those of DESTINATION_ENDPOINT (metadata only). */
const DESTINATION_FALLBACK = 'x-gateway-destination-endpoint-fallback';
/** The key of the candidate list in the subset hint. */
const ENDPOINT_SUBSET = 'x-gateway-destination-endpoint-subset';
/** The `envoy.lb` key naming the endpoint that served the response (response phase). */
const DESTINATION_SERVED = 'x-gateway-destination-endpoint-served';
/** The metadata namespaces: the picked endpoints (answer) and the candidates (request). */
const LB_NAMESPACE = 'envoy.lb';
const SUBSET_NAMESPACE = 'envoy.lb.subset_hint';

export interface PickerRequest {
  method: string;
  scheme: 'http' | 'https';
  authority: string;
  /** Path and query as sent upstream. */
  path: string;
  /** The request headers as they will go upstream (without gw's backend credentials). */
  headers: HeaderBag;
  body: Buffer | undefined;
  /** The pool's ready endpoints, "ip:port": the subset the picker must choose from. */
  candidates: readonly string[];
}

export type PickerAnswer =
  /**
   * The endpoints in the picker's order (fallbacks last), its header changes, a body it replaced,
   * and the stream's response phase (the caller closes it).
   */
  | {
      kind: 'picked';
      endpoints: string[];
      mutations: HeaderMutation[];
      body: Buffer | undefined;
      response: PickerResponsePhase;
    }
  /** The picker answers the client itself (no ready endpoint, the request shed...). */
  | { kind: 'immediate'; response: LocalResponse };

/**
 * Asks the picker for the request's endpoints. Rejects with a ProcessorError when the picker
 * cannot be reached, fails the stream, is too slow (each answer within `timeoutMs`) or breaks
 * the protocol; the caller applies the pool's failureMode. `maxBodyBytes` bounds a body it sends back.
 */
export async function askEndpointPicker(
  client: ExternalProcessorClient,
  timeoutMs: number,
  request: PickerRequest,
  maxBodyBytes: number,
): Promise<PickerAnswer> {
  await connected(client, timeoutMs);
  const stream = new ProcessorStream(client, timeoutMs);
  try {
    const hasBody = request.body !== undefined && request.body.length > 0;
    stream.send({
      request_headers: {
        headers: headerMap(
          [
            [':method', request.method],
            [':scheme', request.scheme],
            [':authority', request.authority],
            [':path', request.path],
          ],
          request.headers,
        ),
        end_of_stream: !hasBody,
      },
      metadata_context: {
        filter_metadata: { [SUBSET_NAMESPACE]: jsonToStruct({ [ENDPOINT_SUBSET]: [...request.candidates] }) },
      },
      protocol_config: {
        request_body_mode: 'FULL_DUPLEX_STREAMED',
        response_body_mode: 'NONE',
        send_body_without_waiting_for_header_response: false,
      },
    });
    if (hasBody) stream.send({ request_body: { body: request.body!, end_of_stream: true } });
    const answer = await readAnswers(stream, hasBody, maxBodyBytes);
    if (answer.kind === 'immediate') stream.close();
    return answer;
  } catch (error) {
    stream.cancel();
    throw error;
  }
}

/**
 * The response side of a picker's stream: the response head of the endpoint that served the
 * request, told once, and the picker's changes to it. A picker that fails here, or is too slow,
 * does not fail a response that has been served: the response goes on unchanged and the caller
 * logs why.
 */
export class PickerResponsePhase {
  readonly #stream: ProcessorStream;
  #told = false;

  constructor(stream: ProcessorStream) {
    this.#stream = stream;
  }

  /**
   * Sends the response head (`status`, `headers`) of `endpoint` ("ip:port") and waits for the
   * picker's answer: its header changes, or the reason it gave none.
   */
  async served(
    endpoint: string,
    status: number,
    headers: Record<string, string | string[] | undefined>,
  ): Promise<{ mutation: HeaderMutation | undefined } | { failure: string }> {
    const stream = this.#stream;
    // A picker that ended its stream after picking takes no part in the response.
    if (this.#told || !stream.open) return { mutation: undefined };
    this.#told = true;
    try {
      stream.send({
        response_headers: {
          headers: headerMap([[':status', String(status)]], headers as HeaderBag),
          end_of_stream: false,
        },
        metadata_context: { filter_metadata: { [LB_NAMESPACE]: jsonToStruct({ [DESTINATION_SERVED]: endpoint }) } },
      });
      for (;;) {
        const message = await stream.next();
        if (!message) return { failure: 'the endpoint picker closed the stream before it answered the response' };
        // Late request-phase answers (a trailing body chunk) are over: only the response's counts.
        if (message.response === 'request_body' || message.response === 'request_trailers') continue;
        expectAnswer(message, 'response_headers');
        return { mutation: message.response_headers?.response?.header_mutation ?? undefined };
      }
    } catch (error) {
      stream.cancel();
      return { failure: (error as Error).message };
    } finally {
      stream.close();
    }
  }

  /** Ends the stream (no response to tell: the attempt failed, or the response has been told). */
  close(): void {
    this.#told = true;
    this.#stream.close();
  }
}

async function readAnswers(stream: ProcessorStream, hasBody: boolean, maxBodyBytes: number): Promise<PickerAnswer> {
  const mutations: HeaderMutation[] = [];
  const metadata: Record<string, unknown> = {};
  let headersAnswered = false;
  let bodyDone = !hasBody;
  let replaced: Buffer | undefined;
  const chunks: Buffer[] = [];
  let size = 0;
  while (!headersAnswered || !bodyDone) {
    const message = await stream.next();
    if (!message) throw new ProcessorError('protocol', 'the endpoint picker closed the stream before it answered');
    if (message.response === 'immediate_response')
      return { kind: 'immediate', response: immediateAnswer(message.immediate_response!) };
    takeLbMetadata(message, metadata);
    if (message.response === 'request_trailers') continue;
    if (message.response === 'request_headers' && !headersAnswered) {
      headersAnswered = true;
      const common = message.request_headers?.response;
      if (common?.header_mutation) mutations.push(common.header_mutation);
      if (replaces(common)) {
        replaced = bodyOf(common?.body_mutation) ?? replaced;
        bodyDone = true;
      }
      continue;
    }
    expectAnswer(message, 'request_body');
    const common = message.request_body?.response;
    if (common?.header_mutation) mutations.push(common.header_mutation);
    const part = streamedChunk(common);
    // An answer without a chunk before any came: the body goes on as gw sent it.
    if (!part) {
      if (chunks.length === 0) bodyDone = true;
      continue;
    }
    size += part.body.length;
    if (size > maxBodyBytes)
      throw new ProcessorError('protocol', `the endpoint picker sent back a body over ${maxBodyBytes} bytes`);
    chunks.push(part.body);
    if (part.end) {
      replaced = Buffer.concat(chunks, size);
      bodyDone = true;
    }
  }
  return {
    kind: 'picked',
    endpoints: pickedEndpoints(mutations, metadata),
    mutations,
    body: replaced,
    response: new PickerResponsePhase(stream),
  };
}

/** Merges an answer's `envoy.lb` dynamic metadata (the namespace the protocol puts the endpoints in). */
function takeLbMetadata(message: ProcessingResponse, into: Record<string, unknown>): void {
  const fields = message.dynamic_metadata?.fields;
  if (!fields || fields[LB_NAMESPACE] === undefined) return;
  const lb = structToJson(message.dynamic_metadata)[LB_NAMESPACE];
  if (lb !== null && typeof lb === 'object' && !Array.isArray(lb)) Object.assign(into, lb);
}

/** The endpoints the picker named: its header's (else its metadata's) list, then the fallbacks. */
function pickedEndpoints(mutations: readonly HeaderMutation[], metadata: Record<string, unknown>): string[] {
  let primary: string | undefined;
  for (const mutation of mutations)
    for (const option of mutation.set_headers ?? [])
      if (option.header?.key.toLowerCase() === DESTINATION_ENDPOINT) primary = headerValueOf(option.header);
  if (primary === undefined && typeof metadata[DESTINATION_ENDPOINT] === 'string')
    primary = metadata[DESTINATION_ENDPOINT] as string;
  const fallback = typeof metadata[DESTINATION_FALLBACK] === 'string' ? (metadata[DESTINATION_FALLBACK] as string) : '';
  return [primary ?? '', fallback]
    .flatMap((list) => list.split(','))
    .map((entry) => entry.trim())
    .filter((entry) => entry !== '');
}
