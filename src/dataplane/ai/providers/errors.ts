// The two ways a provider says no: its configuration cannot be served (found once, when the
// configuration is compiled), or one request cannot be (answered to the client in its own format).
import { type ApiFormat, type ErrorKind, errorBody } from '../formats/index.ts';
import { rerankErrorBody } from '../formats/rerank.ts';

/**
 * The API a client speaks: an LLM format, the model listing, reranking (Cohere's API, forwarded
 * as it is) or a Realtime session (OpenAI's, over WebSocket).
 */
export type ClientFormat = ApiFormat | 'models' | 'rerank' | 'realtime';

/**
 * A provider configuration this data plane cannot serve. `field` is the path inside the
 * LLMProvider (`betaalpha`, `custom.backendRef.kind`, `path`); the caller puts the resource and
 * the provider's own place (`spec.ai.groups[0].providers[1]`) in front.
 */
export class ProviderConfigError extends Error {
  override name = 'ProviderConfigError';
  readonly field: string;
  /** What is wrong, without the provider and the field. */
  readonly reason: string;
  readonly provider: string | undefined;
  constructor(field: string, reason: string, provider?: string) {
    super(`${provider === undefined ? '' : `provider ${provider}: `}${field === '' ? '' : `${field}: `}${reason}`);
    this.field = field;
    this.reason = reason;
    this.provider = provider;
  }
}

/**
 * A request the provider cannot serve (a format it does not speak, a body that cannot be
 * translated). `response()` is the answer in the client's own error format.
 */
export class PlanError extends Error {
  override name = 'PlanError';
  readonly status: number;
  readonly clientFormat: ClientFormat;
  constructor(status: number, clientFormat: ClientFormat, message: string) {
    super(message);
    this.status = status;
    this.clientFormat = clientFormat;
  }

  response(): { status: number; contentType: string; body: string } {
    return { status: this.status, ...clientErrorBody(this.clientFormat, this.status, this.message) };
  }
}

/**
 * The format of the errors a client gets: the model listing and Realtime are OpenAI endpoints, so
 * OpenAI's shape; a rerank client's is Cohere's (`clientErrorBody`), OpenAI's in an SSE stream
 * (reranking does not stream).
 */
export function errorFormat(format: ClientFormat): ApiFormat {
  return format === 'models' || format === 'realtime' || format === 'rerank' ? 'completions' : format;
}

/** An error body of gw's own in the client's format (`kind`: what the status alone does not say). */
export function clientErrorBody(
  format: ClientFormat,
  status: number,
  message: string,
  kind?: ErrorKind,
): { contentType: string; body: string } {
  return format === 'rerank' ? rerankErrorBody(message) : errorBody(errorFormat(format), status, message, kind);
}
