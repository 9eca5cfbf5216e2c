// One ExtProc entry compiled: the processor's client, the failure mode, the processing modes with
// the API's defaults applied, and the CEL of the metadata and attributes it sends.
import type { BodySendMode, ExtProc, ProcessingOptions } from '../../../api/types/inbound-auth.ts';
import { compileFields, type NamedExpressions } from '../cel-field.ts';
import { resolveEndpoint } from '../endpoint.ts';
import { grpcClient, serviceConstructor } from '../grpc/client.ts';
import { isProblem, type PolicyCompileContext, type PolicyProblem } from '../types.ts';
import { EXT_PROC_PROTO, EXT_PROC_SERVICE } from './messages.ts';
import type { ExternalProcessorClient } from './processor-stream.ts';

/** How long gw waits for each answer of the processor (Envoy's message_timeout; not configurable in the API). */
export const MESSAGE_TIMEOUT_MS = 10_000;

export interface ProcessingModes {
  requestHeaders: 'Send' | 'Skip';
  responseHeaders: 'Send' | 'Skip';
  requestBody: BodySendMode;
  responseBody: BodySendMode;
  requestTrailers: 'Send' | 'Skip';
  responseTrailers: 'Send' | 'Skip';
}

export interface ExtProcSettings {
  /** "Service ns/name:port" or the url's origin, for errors. */
  processor: string;
  client: ExternalProcessorClient;
  failOpen: boolean;
  modes: Readonly<ProcessingModes>;
  allowModeOverride: boolean;
  /** namespace → (key → CEL), sent as metadata_context.filter_metadata. */
  metadataContext: readonly (readonly [string, NamedExpressions])[];
  requestAttributes: NamedExpressions;
  responseAttributes: NamedExpressions;
  messageTimeoutMs: number;
}

export function compileSettings(
  value: ExtProc,
  context: PolicyCompileContext,
  field: string,
): ExtProcSettings | PolicyProblem {
  const endpoint = resolveEndpoint(value, context, field);
  if (isProblem(endpoint)) return endpoint;
  if (endpoint.basePath !== '')
    return {
      field: `${field}.url`,
      message: 'a gRPC processor is addressed by scheme, host and port only; remove the path',
    };
  const metadataContext: [string, NamedExpressions][] = [];
  for (const [namespace, entries] of Object.entries(value.metadataContext ?? {})) {
    const compiled = compileFields(entries, `${field}.metadataContext.${namespace}`);
    if (isProblem(compiled)) return compiled;
    metadataContext.push([namespace, compiled]);
  }
  const requestAttributes = compileFields(value.requestAttributes ?? {}, `${field}.requestAttributes`);
  if (isProblem(requestAttributes)) return requestAttributes;
  const responseAttributes = compileFields(value.responseAttributes ?? {}, `${field}.responseAttributes`);
  if (isProblem(responseAttributes)) return responseAttributes;
  const ctor = serviceConstructor(EXT_PROC_PROTO, EXT_PROC_SERVICE);
  return {
    processor: endpoint.name,
    client: grpcClient<ExternalProcessorClient>(context.runtime, ctor, endpoint),
    failOpen: value.failureMode === 'FailOpen',
    modes: modesOf(value.processingOptions),
    allowModeOverride: value.processingOptions?.allowModeOverride === true,
    metadataContext,
    requestAttributes,
    responseAttributes,
    messageTimeoutMs: MESSAGE_TIMEOUT_MS,
  };
}

const BODY_MODES: readonly BodySendMode[] = ['None', 'Buffered', 'BufferedPartial', 'FullDuplexStreamed'];

function modesOf(options: ProcessingOptions | undefined): ProcessingModes {
  return {
    requestHeaders: sendOrSkip(options?.requestHeaderMode),
    responseHeaders: sendOrSkip(options?.responseHeaderMode),
    requestBody: bodyMode(options?.requestBodyMode),
    responseBody: bodyMode(options?.responseBodyMode),
    requestTrailers: sendOrSkip(options?.requestTrailerMode),
    responseTrailers: sendOrSkip(options?.responseTrailerMode),
  };
}

/** The API's defaults: headers and trailers Send, bodies FullDuplexStreamed. */
function sendOrSkip(value: string | undefined): 'Send' | 'Skip' {
  return value === 'Skip' ? 'Skip' : 'Send';
}

function bodyMode(value: string | undefined): BodySendMode {
  return BODY_MODES.find((mode) => mode === value) ?? 'FullDuplexStreamed';
}
