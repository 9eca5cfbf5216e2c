// The two ways a provider says no: its configuration cannot be served (found once, when the
// configuration is compiled), or one request cannot be (answered to the client in its own format).
import { type ApiFormat, errorBody } from '../formats/index.ts';

/** The API a client speaks: an LLM format, or the model listing. */
export type ClientFormat = ApiFormat | 'models';

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
    return { status: this.status, ...errorBody(errorFormat(this.clientFormat), this.status, this.message) };
  }
}

/** The format of the errors a client gets: the model listing is an OpenAI endpoint, so OpenAI's shape. */
export function errorFormat(format: ClientFormat): ApiFormat {
  return format === 'models' ? 'completions' : format;
}
