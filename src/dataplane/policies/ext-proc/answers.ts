// What the client is answered instead of the request's normal course: a processor's
// immediate_response, or gw's own answer when processing failed.
import { loadProto } from '../grpc/client.ts';
import type { LocalResponse } from '../types.ts';
import { immediateHeaders } from './headers.ts';
import { EXT_PROC_PROTO, type ImmediateResponse } from './messages.ts';
import { ProcessorError } from './processor-stream.ts';

let statusNumbers: Map<string, number> | undefined;

/** envoy.type.v3.StatusCode names → numbers, from the loaded proto (the loader gives names). */
function statusNumber(code: string | number | undefined): number | undefined {
  if (code === undefined) return undefined;
  if (typeof code === 'number') return code;
  if (!statusNumbers) {
    const definition = loadProto(EXT_PROC_PROTO) as unknown as {
      envoy: { type: { v3: { StatusCode: { type: { value: { name: string; number: number }[] } } } } };
    };
    statusNumbers = new Map(definition.envoy.type.v3.StatusCode.type.value.map((entry) => [entry.name, entry.number]));
  }
  return statusNumbers.get(code);
}

/**
 * A processor's immediate_response as gw answers it: its status (200 when it gives none, as
 * agentgateway does; 500 when it is not a final HTTP status), its headers, and its body as
 * text/plain unless it set a content-type; grpc_status becomes a grpc-status header.
 */
export function immediateAnswer(immediate: ImmediateResponse): LocalResponse {
  const code = immediate.status ? statusNumber(immediate.status.code) : 200;
  const status = code !== undefined && code >= 200 && code <= 599 ? code : 500;
  const headers = immediateHeaders(immediate.headers);
  const body = immediate.body ?? Buffer.alloc(0);
  if (body.length > 0 && headers['content-type'] === undefined) headers['content-type'] = 'text/plain';
  if (immediate.grpc_status) headers['grpc-status'] = String(immediate.grpc_status.status ?? 0);
  return { status, headers, body };
}

/** gw's answer when processing failed closed: 504 when the processor was too slow, else 500. */
export function failureAnswer(error: unknown): LocalResponse {
  if (error instanceof ProcessorError && error.failure === 'timeout')
    return { status: 504, body: 'external processing timed out', own: 'refusal' };
  return { status: 500, body: 'external processing failed', own: 'refusal' };
}

/** Why processing failed, for the access log (no processor response content). */
export function failureReason(error: unknown): string {
  return `extProc: ${(error as Error)?.message ?? String(error)}`;
}
