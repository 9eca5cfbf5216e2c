// Global rate limits (GlobalRateLimit): the counting is done by a service speaking Envoy's rate
// limit protocol (envoy.service.ratelimit.v3.RateLimitService/ShouldRateLimit), shared by every
// proxy. Before a request is forwarded gw sends one call with every descriptor whose CEL
// evaluates: Requests descriptors carry their cost as hits_addend, Tokens descriptors 0 (a check
// that the budget is not spent). Once the request is done a second call charges the Tokens
// descriptors the tokens it used. Semantics follow agentgateway (docs/policies/rate-limit.md).
import type * as grpc from '@grpc/grpc-js';
import type { GlobalRateLimit, RateLimitDescriptor } from '../../../api/types/traffic.ts';
import { TOKEN } from '../../../util/http-field-syntax.ts';
import { type Expression, fromCelValue } from '../../cel/expression.ts';
import { type CelVariables, celContext } from '../../telemetry/cel-context.ts';
import type { RequestRecord } from '../../telemetry/request-record.ts';
import { compileField } from '../cel-field.ts';
import { resolveEndpoint } from '../endpoint.ts';
import type { PolicyExchange } from '../exchange.ts';
import { grpcClient, serviceConstructor } from '../grpc/client.ts';
import { isProblem, type LocalResponse, type PolicyCompileContext, type PolicyProblem } from '../types.ts';
import { type LimitStatus, mostConstrained, tooManyRequests } from './headers.ts';

const PROTO_FILE = 'envoy/service/ratelimit/v3/rls.proto';
const SERVICE_NAME = 'envoy.service.ratelimit.v3.RateLimitService';

/** Deadline of each ShouldRateLimit call; past it the call has failed (failureMode decides). */
export const RATE_LIMIT_DEADLINE_MS = 1000;

// The messages as @grpc/proto-loader gives and takes them (field names as in the .proto).

interface DescriptorMessage {
  entries: { key: string; value: string }[];
  limit?: { requests_per_unit: number; unit: string };
  hits_addend: { value: number };
}

export interface RateLimitRequestMessage {
  domain: string;
  descriptors: DescriptorMessage[];
  hits_addend: number;
}

interface HeaderValueMessage {
  key: string;
  value: string;
  raw_value?: Uint8Array | null;
}

interface DescriptorStatusMessage {
  code: string;
  current_limit: { requests_per_unit: number; unit: string; name: string } | null;
  limit_remaining: number;
  duration_until_reset: { seconds: number; nanos: number } | null;
}

export interface RateLimitResponseMessage {
  overall_code: string;
  statuses: DescriptorStatusMessage[];
  response_headers_to_add: HeaderValueMessage[];
  request_headers_to_add: HeaderValueMessage[];
  raw_body: Uint8Array;
}

interface RateLimitServiceClient extends grpc.Client {
  ShouldRateLimit(
    request: RateLimitRequestMessage,
    options: grpc.CallOptions,
    callback: (error: grpc.ServiceError | null, response?: RateLimitResponseMessage) => void,
  ): grpc.ClientUnaryCall;
}

interface CompiledDescriptor {
  entries: readonly { key: string; expression: Expression }[];
  tokens: boolean;
  cost: Expression | undefined;
  limitOverride: Expression | undefined;
}

/** A descriptor as sent before forwarding, with what it was built from. */
interface SentDescriptor {
  from: CompiledDescriptor;
  message: DescriptorMessage;
}

/** What an allowed request takes to its response: the most constrained limit, headers to add. */
export interface GlobalAdmission {
  status: LimitStatus | undefined;
  responseHeaders: [string, string][] | undefined;
}

/** The RateLimitUnit (envoy.type.v3) of a limitOverride's unit, lower-case, singular or plural. */
const OVERRIDE_UNITS: Record<string, string> = {
  second: 'SECOND',
  minute: 'MINUTE',
  hour: 'HOUR',
  day: 'DAY',
  month: 'MONTH',
  year: 'YEAR',
};

const MAX_UINT32 = 4_294_967_295;

/** Headers a rate limit service may not set: gw owns the message framing. */
const FRAMING_HEADERS = new Set(['content-length', 'transfer-encoding', 'connection', 'keep-alive', 'upgrade']);
const UNSAFE_VALUE = /[\r\n\0]/;

export class GlobalLimit {
  private readonly client: RateLimitServiceClient;
  private readonly domain: string;
  private readonly failOpen: boolean;
  private readonly descriptors: readonly CompiledDescriptor[];

  constructor(
    client: RateLimitServiceClient,
    domain: string,
    failOpen: boolean,
    descriptors: readonly CompiledDescriptor[],
  ) {
    this.client = client;
    this.domain = domain;
    this.failOpen = failOpen;
    this.descriptors = descriptors;
  }

  /** Asks the service before forwarding: undefined to go on, or the 429 (or 500) answer. */
  async admit(exchange: PolicyExchange, admission: GlobalAdmission): Promise<LocalResponse | undefined> {
    const variables = exchange.cel();
    const sent: SentDescriptor[] = [];
    for (const descriptor of this.descriptors) {
      // Tokens are charged after completion; before it a Tokens descriptor is only checked.
      const hits = descriptor.tokens ? 0 : descriptor.cost ? costOf(descriptor.cost, variables) : 1;
      if (hits === undefined) continue;
      const message = descriptorMessage(descriptor, variables, hits);
      if (message) sent.push({ from: descriptor, message });
    }
    // Nothing evaluated: there is nothing to count this request against.
    if (sent.length === 0) return undefined;
    let response: RateLimitResponseMessage;
    try {
      response = await this.call(sent.map((descriptor) => descriptor.message));
    } catch (error) {
      if (!this.failOpen) {
        // The access log says why; the client only that the service could not be used.
        exchange.record.error = `rate limit service failed: ${(error as Error).message}`;
        return { status: 500, body: 'rate limit service unavailable', own: 'refusal' };
      }
      this.chargeTokensWhenDone(exchange, sent);
      return undefined;
    }
    // Anything but OK (UNKNOWN included) is refused, as agentgateway does.
    if (response.overall_code !== 'OK') return overLimitAnswer(response);
    for (const [name, value] of validHeaders(response.request_headers_to_add)) exchange.forward.headers[name] = value;
    const responseHeaders = validHeaders(response.response_headers_to_add);
    if (responseHeaders.length > 0) admission.responseHeaders = responseHeaders;
    admission.status = mostConstrained(admission.status, reportedStatus(response.statuses));
    this.chargeTokensWhenDone(exchange, sent);
    return undefined;
  }

  /** Sends the Tokens descriptors' cost once the request is done (not awaited; errors dropped). */
  private chargeTokensWhenDone(exchange: PolicyExchange, sent: readonly SentDescriptor[]): void {
    const tokens = sent.filter((descriptor) => descriptor.from.tokens);
    if (tokens.length === 0) return;
    exchange.onDone((record) => {
      const descriptors = tokenCharges(tokens, record);
      if (descriptors.length > 0) this.call(descriptors).catch(() => undefined);
    });
  }

  private call(descriptors: DescriptorMessage[]): Promise<RateLimitResponseMessage> {
    const request: RateLimitRequestMessage = {
      domain: this.domain,
      descriptors,
      hits_addend: requestHits(descriptors),
    };
    return new Promise((resolve, reject) => {
      this.client.ShouldRateLimit(request, { deadline: Date.now() + RATE_LIMIT_DEADLINE_MS }, (error, response) => {
        if (error || !response) reject(error ?? new Error('empty rate limit response'));
        else resolve(response);
      });
    });
  }
}

/**
 * The request-level hits_addend, for services that read only it: the descriptors' common hits
 * when they all have the same (non-zero) count, else 0 (each descriptor carries its own).
 */
function requestHits(descriptors: readonly DescriptorMessage[]): number {
  const first = descriptors[0]!.hits_addend.value;
  if (first <= 0 || first > MAX_UINT32) return 0;
  return descriptors.every((descriptor) => descriptor.hits_addend.value === first) ? first : 0;
}

/** The Tokens descriptors again, each charged its cost (its CEL, or the total tokens used). */
function tokenCharges(sent: readonly SentDescriptor[], record: RequestRecord): DescriptorMessage[] {
  let variables: CelVariables | undefined;
  const charges: DescriptorMessage[] = [];
  for (const { from, message } of sent) {
    let hits: number | undefined;
    if (from.cost) {
      // A fresh context: the response and the usage are known now.
      variables ??= celContext(record);
      hits = costOf(from.cost, variables);
    } else {
      hits = record.llm?.usage?.totalTokens;
    }
    if (hits === undefined || !(hits > 0)) continue;
    charges.push({ ...message, hits_addend: { value: hits } });
  }
  return charges;
}

/** The descriptor's entries and limit override, or undefined when one of them fails (skipped). */
function descriptorMessage(
  descriptor: CompiledDescriptor,
  variables: CelVariables,
  hits: number,
): DescriptorMessage | undefined {
  const entries: DescriptorMessage['entries'] = [];
  for (const entry of descriptor.entries) {
    let value: string | undefined;
    try {
      value = entryValue(entry.expression.evaluate(variables));
    } catch {
      return undefined;
    }
    if (value === undefined) return undefined;
    entries.push({ key: entry.key, value });
  }
  const message: DescriptorMessage = { entries, hits_addend: { value: hits } };
  if (descriptor.limitOverride) {
    const limit = limitOverrideOf(descriptor.limitOverride, variables);
    if (!limit) return undefined;
    message.limit = limit;
  }
  return message;
}

/** A descriptor value: a string, or a number or bool as its text; anything else fails. */
function entryValue(value: unknown): string | undefined {
  if (typeof value === 'string') return value;
  if (typeof value === 'bigint' || typeof value === 'boolean') return String(value);
  if (typeof value === 'number' && Number.isFinite(value)) return String(value);
  return undefined;
}

/** A cost: a whole number of at least 0, or undefined when the CEL fails or gives anything else. */
function costOf(expression: Expression, variables: CelVariables): number | undefined {
  let value: unknown;
  try {
    value = expression.evaluate(variables);
  } catch {
    return undefined;
  }
  if (typeof value === 'bigint') {
    if (value < 0n) return undefined;
    return value > BigInt(Number.MAX_SAFE_INTEGER) ? Number.MAX_SAFE_INTEGER : Number(value);
  }
  if (typeof value === 'number' && Number.isInteger(value) && value >= 0)
    return Math.min(value, Number.MAX_SAFE_INTEGER);
  return undefined;
}

/** {unit, requestsPerUnit} from the CEL, or undefined when it fails or is not such an object. */
function limitOverrideOf(expression: Expression, variables: CelVariables): DescriptorMessage['limit'] | undefined {
  let value: unknown;
  try {
    value = fromCelValue(expression.evaluate(variables));
  } catch {
    return undefined;
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return undefined;
  const fields = value as Record<string, unknown>;
  const unitName = typeof fields.unit === 'string' ? fields.unit.toLowerCase().replace(/s$/, '') : '';
  const unit = OVERRIDE_UNITS[unitName];
  const requests = fields.requestsPerUnit ?? fields.requests_per_unit;
  if (!unit || typeof requests !== 'number' || !Number.isInteger(requests) || requests < 0 || requests > MAX_UINT32)
    return undefined;
  return { requests_per_unit: requests, unit };
}

/** Header name/value pairs of the service (lower-case names), without unusable ones. */
function validHeaders(headers: readonly HeaderValueMessage[] | undefined): [string, string][] {
  const valid: [string, string][] = [];
  for (const header of headers ?? []) {
    const name = header.key.toLowerCase();
    const value =
      header.raw_value && header.raw_value.length > 0 ? Buffer.from(header.raw_value).toString('latin1') : header.value;
    if (!TOKEN.test(name) || FRAMING_HEADERS.has(name) || UNSAFE_VALUE.test(value)) continue;
    valid.push([name, value]);
  }
  return valid;
}

function durationSeconds(duration: DescriptorStatusMessage['duration_until_reset']): number | undefined {
  if (!duration) return undefined;
  const ms = Number(duration.seconds) * 1000 + Number(duration.nanos) / 1e6;
  return ms > 0 ? Math.ceil(ms / 1000) : 0;
}

/** The status with the least remaining among those that name their limit. */
function reportedStatus(statuses: readonly DescriptorStatusMessage[] | undefined): LimitStatus | undefined {
  let reported: LimitStatus | undefined;
  for (const status of statuses ?? []) {
    if (!status.current_limit) continue;
    reported = mostConstrained(reported, {
      limit: status.current_limit.requests_per_unit,
      remaining: status.limit_remaining,
      resetSeconds: durationSeconds(status.duration_until_reset) ?? 0,
    });
  }
  return reported;
}

/** The 429: the service's headers and body, x-ratelimit-* and retry-after from its statuses. */
function overLimitAnswer(response: RateLimitResponseMessage): LocalResponse {
  const headers: Record<string, string> = {};
  for (const [name, value] of validHeaders(response.response_headers_to_add)) headers[name] = value;
  // Wait for the over-limit descriptor that resets last.
  let retryAfter: number | undefined;
  for (const status of response.statuses ?? []) {
    if (status.code !== 'OVER_LIMIT') continue;
    const seconds = durationSeconds(status.duration_until_reset);
    if (seconds !== undefined && (retryAfter === undefined || seconds > retryAfter)) retryAfter = seconds;
  }
  const body = response.raw_body && response.raw_body.length > 0 ? Buffer.from(response.raw_body) : undefined;
  return tooManyRequests(reportedStatus(response.statuses), retryAfter, headers, body);
}

function compileDescriptor(descriptor: RateLimitDescriptor, field: string): CompiledDescriptor | PolicyProblem {
  const entries: { key: string; expression: Expression }[] = [];
  for (const [index, entry] of descriptor.entries.entries()) {
    const expression = compileField(entry.expression, `${field}.entries[${index}].expression`);
    if (isProblem(expression)) return expression;
    entries.push({ key: entry.name, expression });
  }
  const cost = descriptor.cost === undefined ? undefined : compileField(descriptor.cost, `${field}.cost`);
  if (isProblem(cost)) return cost;
  const limitOverride =
    descriptor.limitOverride === undefined
      ? undefined
      : compileField(descriptor.limitOverride, `${field}.limitOverride`);
  if (isProblem(limitOverride)) return limitOverride;
  return { entries, tokens: descriptor.unit === 'Tokens', cost, limitOverride };
}

/** The global limit of `value` (field: its path, for problems), or why it cannot be used. */
export function compileGlobalLimit(
  value: GlobalRateLimit,
  context: PolicyCompileContext,
  field: string,
): GlobalLimit | PolicyProblem {
  const descriptors: CompiledDescriptor[] = [];
  for (const [index, descriptor] of value.descriptors.entries()) {
    const compiledDescriptor = compileDescriptor(descriptor, `${field}.descriptors[${index}]`);
    if (isProblem(compiledDescriptor)) return compiledDescriptor;
    descriptors.push(compiledDescriptor);
  }
  const endpoint = resolveEndpoint(value, context, field);
  if (isProblem(endpoint)) return endpoint;
  const client = grpcClient<RateLimitServiceClient>(
    context.runtime,
    serviceConstructor(PROTO_FILE, SERVICE_NAME),
    endpoint,
  );
  return new GlobalLimit(client, value.domain, value.failureMode === 'FailOpen', descriptors);
}
