// The CEL variables of one request (docs/cel.md), built from its RequestRecord only when an
// expression asks for them. Most requests evaluate no expression at all, so nothing here runs
// for them; when one does, each top-level variable (`request`, `response`, `llm`...) is built on
// first use by a getter and kept for the other expressions evaluated against the same context.
//
// A context is a view at one moment: the proxy makes one for its request-phase policies and the
// telemetry makes a fresh one when the request is complete, so the response and usage are seen.
//
// Names follow agentgateway's CEL reference; CEL ints are BigInt, durations the engine's
// Duration, timestamps Dates; header maps are keyed by lower-case name, repeated headers joined
// with ", ".
import { Duration } from '@marcbachmann/cel-js/evaluator';
import { inlineModerationVariable } from '../ai/inline-moderation-record.ts';
import { toCelValue } from '../cel/expression.ts';
import type { HeaderMap, RequestRecord } from './request-record.ts';

export type CelVariables = Record<string, unknown>;

const EMPTY: Readonly<Record<string, unknown>> = Object.freeze({});

/**
 * Variables for `record` as it is now; pass the result to Expression.evaluate. The variables
 * are getters of a class (cheap to create, built on use), so the result must not be spread or
 * copied with Object.assign — that loses them; give further variables (e.g. `llmRequest`) as
 * `extra`, which also replaces a built-in variable of the same name.
 */
export function celContext(record: RequestRecord, extra?: Record<string, unknown>): CelVariables {
  const context = new RequestCelContext(record);
  if (extra) {
    for (const name of Object.keys(extra)) {
      Object.defineProperty(context, name, { value: extra[name], enumerable: true });
    }
  }
  return context as unknown as CelVariables;
}

class RequestCelContext {
  readonly #record: RequestRecord;
  #request: Record<string, unknown> | undefined;
  #response: Record<string, unknown> | undefined;
  #source: Record<string, unknown> | undefined;
  #backend: Record<string, unknown> | undefined;
  #llm: Record<string, unknown> | undefined;
  #a2a: Record<string, unknown> | undefined;
  #proxy: Record<string, unknown> | undefined;
  #jwt: unknown;
  #apiKey: unknown;

  constructor(record: RequestRecord) {
    this.#record = record;
  }

  get request(): Record<string, unknown> {
    this.#request ??= requestVariable(this.#record);
    return this.#request;
  }

  /** Absent (an unknown variable) until the response status is known. */
  get response(): Record<string, unknown> | undefined {
    if (this.#record.status === 0) return undefined;
    this.#response ??= {
      code: BigInt(this.#record.status),
      headers: celHeaders(this.#record.responseHeaders),
    };
    return this.#response;
  }

  get source(): Record<string, unknown> {
    this.#source ??= { address: this.#record.clientAddress, port: BigInt(this.#record.clientPort) };
    return this.#source;
  }

  /** Empty until routing chose a backend, so `has(backend.name)` tells. */
  get backend(): Record<string, unknown> {
    const record = this.#record;
    if (record.backend === '') return EMPTY;
    this.#backend ??= {
      name: record.backend,
      type: record.backendType,
      protocol: record.llm ? 'llm' : record.a2a ? 'a2a' : 'http',
    };
    return this.#backend;
  }

  /** Empty for requests that are not LLM requests, so `has(llm.requestModel)` tells. */
  get llm(): Record<string, unknown> {
    this.#llm ??= llmVariable(this.#record);
    return this.#llm;
  }

  /** The A2A call (`method`, `taskId`); empty for other requests and the agent card, so `has(a2a.method)` tells. */
  get a2a(): Record<string, unknown> {
    const a2a = this.#record.a2a;
    if (!a2a) return EMPTY;
    this.#a2a ??= {
      ...(a2a.method !== undefined ? { method: a2a.method } : {}),
      ...(a2a.taskId !== undefined ? { taskId: a2a.taskId } : {}),
    };
    return this.#a2a;
  }

  get proxy(): Record<string, unknown> {
    this.#proxy ??= proxyVariable(this.#record);
    return this.#proxy;
  }

  /** Claims of the verified JWT; empty when there is none, so `has(jwt.sub)` is false. */
  get jwt(): unknown {
    this.#jwt ??= this.#record.jwtClaims ? toCelValue(this.#record.jwtClaims) : EMPTY;
    return this.#jwt;
  }

  /** Metadata of the verified API key; empty when there is none. */
  get apiKey(): unknown {
    this.#apiKey ??= this.#record.apiKey ? toCelValue(this.#record.apiKey) : EMPTY;
    return this.#apiKey;
  }
}

function requestVariable(record: RequestRecord): Record<string, unknown> {
  const pathAndQuery = record.query === '' ? record.path : `${record.path}?${record.query}`;
  const variable: Record<string, unknown> = {
    method: record.method,
    scheme: record.scheme,
    host: record.host,
    path: record.path,
    pathAndQuery,
    uri: `${record.scheme}://${record.host}${pathAndQuery}`,
    version: `HTTP/${record.httpVersion === '2.0' ? '2' : record.httpVersion}`,
    headers: celHeaders(record.requestHeaders),
    startTime: new Date(record.startedAt),
  };
  if (record.endTime !== 0n)
    variable.endTime = new Date(record.startedAt + millisBetween(record.startTime, record.endTime));
  return variable;
}

function llmVariable(record: RequestRecord): Record<string, unknown> {
  const llm = record.llm;
  if (!llm) return EMPTY;
  const variable: Record<string, unknown> = {
    provider: llm.providerFamily,
    providerName: llm.providerName,
    requestModel: llm.requestModel,
    operation: llm.operation,
    streaming: llm.streaming,
  };
  if (llm.responseModel !== '') variable.responseModel = llm.responseModel;
  const usage = llm.usage;
  if (usage) {
    variable.inputTokens = BigInt(usage.inputTokens);
    variable.outputTokens = BigInt(usage.outputTokens);
    variable.totalTokens = BigInt(usage.totalTokens);
    if (usage.cachedInputTokens !== undefined) variable.cachedInputTokens = BigInt(usage.cachedInputTokens);
    if (usage.cacheCreationInputTokens !== undefined) {
      variable.cacheCreationInputTokens = BigInt(usage.cacheCreationInputTokens);
    }
    if (usage.reasoningTokens !== undefined) variable.reasoningTokens = BigInt(usage.reasoningTokens);
  }
  const cost = llm.cost;
  if (cost) {
    // USD as doubles, agentgateway's names; absent when the catalog does not price the model.
    variable.cost = {
      total: cost.total,
      input: cost.input,
      output: cost.output,
      cacheRead: cost.cacheRead,
      cacheWrite: cost.cacheWrite,
      reasoning: cost.reasoning,
    };
  }
  if (llm.firstTokenTime !== 0n) variable.timeToFirstToken = celDuration(record.startTime, llm.firstTokenTime);
  if (llm.moderation !== undefined) variable.moderation = inlineModerationVariable(llm.moderation);
  return variable;
}

function proxyVariable(record: RequestRecord): Record<string, unknown> {
  const variable: Record<string, unknown> = {
    gateway: namespacedName(record.gateway),
    listener: { name: record.listener },
    route: { ...namespacedName(record.route), rule: record.rule },
  };
  if (record.upstreamStartTime !== 0n) {
    variable.requestProcessingDuration = celDuration(record.startTime, record.upstreamStartTime);
    if (record.upstreamEndTime !== 0n) {
      variable.upstreamDuration = celDuration(record.upstreamStartTime, record.upstreamEndTime);
    }
  }
  return variable;
}

/** `namespace/name` as {namespace, name}; a name without a namespace as {name}. */
function namespacedName(key: string): Record<string, unknown> {
  const slash = key.indexOf('/');
  return slash < 0 ? { name: key } : { namespace: key.slice(0, slash), name: key.slice(slash + 1) };
}

/** A header map for CEL: lower-case names, string values, repeated headers joined. */
export function celHeaders(headers: HeaderMap): Record<string, string> {
  const out: Record<string, string> = {};
  for (const name of Object.keys(headers)) {
    const value = headers[name];
    if (value === undefined) continue;
    const key = name.toLowerCase();
    const text = Array.isArray(value) ? value.join(', ') : String(value);
    out[key] = Object.hasOwn(out, key) ? `${out[key]}, ${text}` : text;
  }
  return out;
}

function millisBetween(from: bigint, to: bigint): number {
  return Number(to - from) / 1e6;
}

function celDuration(from: bigint, to: bigint): Duration {
  const nanos = to - from;
  return new Duration(nanos / 1_000_000_000n, Number(nanos % 1_000_000_000n));
}
