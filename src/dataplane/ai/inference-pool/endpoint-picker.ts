// One conversation with an InferencePool's endpoint picker (EPP), as the Gateway API Inference
// Extension's Endpoint Picker Protocol defines it: an Envoy ext_proc Process stream in
// full-duplex mode, on the ext_proc client the extProc policy uses (policies/ext-proc). gw sends
// the request headers — with the pool's ready endpoints as the subset hint in metadata_context
// (`envoy.lb.subset_hint`) — then the whole body; the picker answers the headers (possibly only
// once it has the body) with the endpoints it picked in the `x-gateway-destination-endpoint`
// header mutation and/or the `envoy.lb` dynamic metadata, and may stream the body back changed
// or answer the client itself (immediate_response: 429, 503...). gw does not send the response
// to the picker (protocol_config says response_body_mode NONE); docs/decisions/0049-inference-pool.md.

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
  /** The endpoints in the picker's order (fallbacks last), its header changes, and a body it replaced. */
  | { kind: 'picked'; endpoints: string[]; mutations: HeaderMutation[]; body: Buffer | undefined }
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
    return await readAnswers(stream, hasBody, maxBodyBytes);
  } catch (error) {
    stream.cancel();
    throw error;
  } finally {
    stream.close();
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
  return { kind: 'picked', endpoints: pickedEndpoints(mutations, metadata), mutations, body: replaced };
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
