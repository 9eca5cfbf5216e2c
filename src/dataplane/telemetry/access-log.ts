// The access log: one line per request (docs/telemetry.md), in gw's log format (util/log-line.ts:
// a JSON object by default, `text` for a terminal), shaped by Frontend.accessLog. The
// configuration is compiled once: `filter` (a line only when it evaluates to true),
// `attributes.remove` (default fields left out) and `attributes.add` (name to CEL; a failing
// expression leaves its pair out; a name equal to a default field replaces it).
//
// Field names are OpenTelemetry's semantic conventions where they have one (HTTP: `http.request.method`,
// `url.path`, `http.response.status_code`, `client.address`...; GenAI: `gen_ai.*`), agentgateway's
// request log's otherwise (`route_rule`, `endpoint`, `mcp.*`, `a2a.method`...). A field with no
// value for a request (no response yet, not an LLM request) is left out rather than written as
// null. The line is built as text, not as an object passed to JSON.stringify, and the CEL
// variables are only built when the configuration has an expression.

import { Duration } from '@marcbachmann/cel-js/evaluator';
import type { AccessLog } from '../../api/types/observability.ts';
import {
  encodeValue,
  fieldKey,
  type LogFormat,
  lineEnd,
  lineStart,
  logTimestamp,
  textString,
} from '../../util/log-line.ts';
import { cutText } from '../../util/values.ts';
import { guardOutcomesText } from '../ai/guards/outcome.ts';
import { inlineModerationText } from '../ai/inline-moderation-record.ts';
import { compileExpression, type Expression, ExpressionError, fromCelValue } from '../cel/expression.ts';
import { type CelVariables, celContext } from './cel-context.ts';
import type { LogSink } from './log-sink.ts';
import type { RequestRecord } from './request-record.ts';

type FieldValue = string | number | boolean | undefined;

interface DefaultField {
  readonly name: string;
  readonly value: (record: RequestRecord) => FieldValue;
  /** Part of the line's message (`METHOD path status`), so the text format does not repeat it. */
  readonly inMessage?: boolean;
}

/**
 * Most characters of one default field: a path, a model name, a tool name or an error a client
 * chose cannot make a line longer than the fields together allow (docs/security.md).
 */
export const MAX_FIELD_CHARS = 1024;
/** Most characters of the JSON of one added attribute (a CEL value can carry a whole request body). */
export const MAX_ATTRIBUTE_CHARS = 16 * 1024;

const text = (value: string): string | undefined => (value === '' ? undefined : cutText(value, MAX_FIELD_CHARS));

/** The default fields, in the order they are written. Every one can be removed. */
const DEFAULT_FIELDS: readonly DefaultField[] = [
  { name: 'gateway', value: (r) => text(r.gateway) },
  { name: 'listener', value: (r) => text(r.listener) },
  { name: 'route_rule', value: (r) => text(r.rule) },
  { name: 'route', value: (r) => text(r.route) },
  { name: 'backend', value: (r) => text(r.backend) },
  { name: 'endpoint', value: (r) => text(r.upstreamHost) },
  { name: 'client.address', value: (r) => text(r.clientAddress) },
  { name: 'client.port', value: (r) => (r.clientAddress === '' ? undefined : r.clientPort) },
  { name: 'http.request.method', value: (r) => text(r.method), inMessage: true },
  { name: 'url.scheme', value: (r) => (r.method === '' ? undefined : r.scheme) },
  { name: 'server.address', value: (r) => text(hostAndPort(r.host).address) },
  { name: 'server.port', value: (r) => hostAndPort(r.host).port },
  { name: 'url.path', value: (r) => text(r.path), inMessage: true },
  { name: 'network.protocol.version', value: (r) => protocolVersion(r.httpVersion) },
  { name: 'user_agent.original', value: userAgent },
  { name: 'http.response.status_code', value: (r) => (r.status === 0 ? undefined : r.status), inMessage: true },
  { name: 'http.request.body.size', value: (r) => (r.bytesIn === 0 ? undefined : r.bytesIn) },
  { name: 'http.response.body.size', value: (r) => (r.bytesOut === 0 ? undefined : r.bytesOut) },
  { name: 'jwt.sub', value: (r) => (typeof r.jwtClaims?.sub === 'string' ? text(r.jwtClaims.sub) : undefined) },
  { name: 'protocol', value: protocol },
  { name: 'mcp.method.name', value: (r) => optionalText(r.mcp?.method) },
  { name: 'mcp.session.id', value: (r) => optionalText(r.mcp?.sessionId) },
  { name: 'mcp.target', value: (r) => optionalText(mcpItem(r)?.target) },
  { name: 'mcp.resource.type', value: mcpResourceType },
  { name: 'mcp.resource.uri', value: (r) => optionalText(r.mcp?.resource?.uri) },
  { name: 'gen_ai.tool.name', value: (r) => optionalText(r.mcp?.tool?.name) },
  { name: 'gen_ai.prompt.name', value: (r) => optionalText(r.mcp?.prompt?.name) },
  { name: 'mcp.error.code', value: (r) => r.mcp?.error?.code },
  { name: 'mcp.error.message', value: (r) => optionalText(r.mcp?.error?.message) },
  { name: 'a2a.method', value: (r) => optionalText(r.a2a?.method) },
  { name: 'a2a.task.id', value: (r) => optionalText(r.a2a?.taskId) },
  { name: 'gen_ai.operation.name', value: (r) => r.llm?.operation },
  { name: 'gen_ai.provider.name', value: (r) => (r.llm ? text(r.llm.genAiProvider) : undefined) },
  { name: 'gw.ai.provider', value: (r) => (r.llm ? text(r.llm.providerName) : undefined) },
  { name: 'gen_ai.request.model', value: (r) => (r.llm ? text(r.llm.requestModel) : undefined) },
  { name: 'gen_ai.response.model', value: (r) => (r.llm ? text(r.llm.responseModel) : undefined) },
  { name: 'gw.ai.streaming', value: (r) => r.llm?.streaming },
  { name: 'gen_ai.usage.input_tokens', value: (r) => r.llm?.usage?.inputTokens },
  { name: 'gen_ai.usage.cache_read.input_tokens', value: (r) => r.llm?.usage?.cachedInputTokens },
  { name: 'gen_ai.usage.cache_creation.input_tokens', value: (r) => r.llm?.usage?.cacheCreationInputTokens },
  { name: 'gen_ai.usage.output_tokens', value: (r) => r.llm?.usage?.outputTokens },
  { name: 'gen_ai.usage.reasoning_tokens', value: (r) => r.llm?.usage?.reasoningTokens },
  // USD by the Gateway's model catalog (agentgateway: agw.ai.usage.cost.total); absent when unpriced.
  { name: 'gw.ai.usage.cost.total', value: (r) => r.llm?.cost?.total },
  { name: 'gw.ai.time_to_first_token', value: timeToFirstToken },
  { name: 'gw.ai.guards', value: (r) => (r.llm?.guards ? text(guardOutcomesText(r.llm.guards)) : undefined) },
  {
    name: 'gw.ai.moderation',
    value: (r) => (r.llm?.moderation ? text(inlineModerationText(r.llm.moderation)) : undefined),
  },
  { name: 'error', value: (r) => text(r.error) },
  { name: 'request.id', value: (r) => text(r.requestId) },
  // Milliseconds with microseconds as the fraction: a number a query can compare and sum.
  { name: 'duration_ms', value: (r) => Math.round(r.durationSeconds() * 1e6) / 1e3 },
];

/** Names of the default fields (for attributes.remove), in the order they are written. */
export const DEFAULT_ACCESS_LOG_FIELDS: readonly string[] = DEFAULT_FIELDS.map((field) => field.name);

const optionalText = (value: string | undefined): string | undefined => (value === undefined ? undefined : text(value));

/** The Host header's host and port (`[::1]:8080` → `::1`, 8080); no port when it names none. */
function hostAndPort(host: string): { address: string; port: number | undefined } {
  if (host === lastHost) return lastHostParts;
  let address = host;
  let port: number | undefined;
  const colon = host.lastIndexOf(':');
  if (colon > 0 && colon > host.lastIndexOf(']')) {
    const digits = host.slice(colon + 1);
    if (/^\d{1,5}$/.test(digits)) {
      port = Number(digits);
      address = host.slice(0, colon);
    }
  }
  if (address.startsWith('[') && address.endsWith(']')) address = address.slice(1, -1);
  lastHost = host;
  lastHostParts = { address, port };
  return lastHostParts;
}
// server.address and server.port of one line parse the same Host header: the second reuses the first.
let lastHost = '';
let lastHostParts: { address: string; port: number | undefined } = { address: '', port: undefined };

/** OpenTelemetry's network.protocol.version: `1.1`, `1.0`, `2` (Node says `2.0`). */
function protocolVersion(version: string): string | undefined {
  if (version === '') return undefined;
  return version === '2.0' ? '2' : version;
}

function userAgent(record: RequestRecord): string | undefined {
  const value = record.requestHeaders['user-agent'];
  return typeof value === 'string' ? text(value) : undefined;
}

/** The line's message: `METHOD path status` (the status left out while there is none). */
export function accessLogMessage(record: RequestRecord): string {
  if (record.method === '') return 'request';
  const start = `${cutText(record.method, MAX_FIELD_CHARS)} ${cutText(record.path, MAX_FIELD_CHARS)}`;
  return record.status === 0 ? start : `${start} ${record.status}`;
}

function protocol(record: RequestRecord): string | undefined {
  if (record.backend === '') return undefined;
  if (record.llm) return 'llm';
  if (record.a2a) return 'a2a';
  return record.backendType === 'mcp' ? 'mcp' : 'http';
}

/** The tool, prompt or resource an MCP request named (with its target). */
function mcpItem(record: RequestRecord): { readonly target: string } | undefined {
  const mcp = record.mcp;
  return mcp && (mcp.tool ?? mcp.prompt ?? mcp.resource);
}

function mcpResourceType(record: RequestRecord): string | undefined {
  const mcp = record.mcp;
  if (!mcp) return undefined;
  return mcp.tool ? 'tool' : mcp.prompt ? 'prompt' : mcp.resource ? 'resource' : undefined;
}

function timeToFirstToken(record: RequestRecord): number | undefined {
  const seconds = record.timeToFirstTokenSeconds();
  return seconds < 0 ? undefined : seconds;
}

interface CompiledField {
  readonly name: string;
  /** `,"name":` (or ` name=`), encoded once. */
  readonly key: string;
  readonly value: (record: RequestRecord) => FieldValue;
  /** False for a field the format's message already says. */
  readonly inLine: boolean;
}

interface CompiledAttribute {
  readonly name: string;
  readonly key: string;
  readonly expression: Expression;
}

const FAILED = Symbol('failed');

export class AccessLogger {
  /** Expressions that do not compile: a filter that never passes, attributes never written. */
  readonly problems: readonly string[];
  readonly #sink: LogSink;
  readonly #format: LogFormat;
  readonly #filter: Expression | ExpressionError | undefined;
  readonly #fields: readonly CompiledField[];
  readonly #attributes: readonly CompiledAttribute[];

  /** `config` undefined logs every request with the default fields; `format` is gw's log format. */
  constructor(config: AccessLog | undefined, sink: LogSink, format: LogFormat = 'json') {
    this.#sink = sink;
    this.#format = format;
    const problems: string[] = [];
    if (config?.filter !== undefined) {
      this.#filter = compileExpression(config.filter);
      if (this.#filter instanceof ExpressionError) {
        problems.push(`access log filter does not compile, nothing is logged: ${this.#filter.message}`);
      }
    }
    const adds = config?.attributes?.add ?? [];
    const replaced = new Set([...(config?.attributes?.remove ?? []), ...adds.map((add) => add.name)]);
    this.#fields = DEFAULT_FIELDS.filter((field) => !replaced.has(field.name)).map((field) => ({
      name: field.name,
      key: fieldKey(format, field.name),
      value: field.value,
      // A terminal reader has the method, path and status in the message already.
      inLine: format === 'json' || field.inMessage !== true,
    }));
    const attributes: CompiledAttribute[] = [];
    const seen = new Set<string>();
    for (const add of adds) {
      if (seen.has(add.name)) {
        problems.push(`access log attribute ${JSON.stringify(add.name)} is added twice; the first one is written`);
        continue;
      }
      seen.add(add.name);
      const expression = compileExpression(add.expression);
      if (expression instanceof ExpressionError) {
        problems.push(`access log attribute ${JSON.stringify(add.name)} does not compile: ${expression.message}`);
        continue;
      }
      attributes.push({ name: add.name, key: fieldKey(format, add.name), expression });
    }
    this.#attributes = attributes;
    this.problems = problems;
  }

  /** Whether log() evaluates CEL (so the caller can share one set of variables with the metrics). */
  get usesCel(): boolean {
    return this.#filter !== undefined || this.#attributes.length > 0;
  }

  /** Writes the request's line to the sink unless the filter rejects it; true when written. */
  log(record: RequestRecord, variables?: CelVariables): boolean {
    const line = this.format(record, variables);
    if (line === undefined) return false;
    this.#sink.write(line);
    return true;
  }

  /** Whether the filter lets the request's entry out (true when there is none). */
  passes(record: RequestRecord, variables?: CelVariables): boolean {
    const filter = this.#filter;
    if (filter === undefined) return true;
    if (filter instanceof ExpressionError) return false;
    return evaluate(filter, variables ?? celContext(record)) === true;
  }

  /**
   * The entry as attributes (for OTLP export): the same fields as the line, added attributes as
   * their JSON-compatible values; undefined when the filter is not true.
   */
  attributes(record: RequestRecord, variables?: CelVariables): Record<string, unknown> | undefined {
    const vars =
      this.#filter !== undefined || this.#attributes.length > 0 ? (variables ?? celContext(record)) : undefined;
    if (!this.passes(record, vars)) return undefined;
    const out: Record<string, unknown> = {};
    for (const field of this.#fields) {
      const value = field.value(record);
      if (value !== undefined) out[field.name] = value;
    }
    for (const attribute of this.#attributes) {
      const value = evaluate(attribute.expression, vars!);
      if (value === FAILED || value === undefined) continue;
      if (value instanceof Date) out[attribute.name] = value.toISOString();
      else if (value instanceof Duration) out[attribute.name] = value.toString();
      else out[attribute.name] = boundedValue(fromCelValue(value));
    }
    return out;
  }

  /** The request's line, or undefined when the filter is not true for it. */
  format(record: RequestRecord, variables?: CelVariables): string | undefined {
    let vars = variables;
    if (this.#filter !== undefined) {
      vars ??= celContext(record);
      if (!this.passes(record, vars)) return undefined;
    }
    const format = this.#format;
    let line = lineStart(format, logTimestamp(), 'info', 'request', accessLogMessage(record));
    for (const field of this.#fields) {
      if (!field.inLine) continue;
      const value = field.value(record);
      if (value === undefined) continue;
      line += field.key + encodeValue(format, value);
    }
    if (this.#attributes.length > 0) {
      vars ??= celContext(record);
      for (const attribute of this.#attributes) {
        const json = jsonText(evaluate(attribute.expression, vars));
        if (json === undefined) continue;
        // A string reads better bare in the text format; other values are their JSON either way.
        line += attribute.key + (format === 'text' && json.startsWith('"') ? textString(JSON.parse(json)) : json);
      }
    }
    return line + lineEnd(format);
  }
}

function evaluate(expression: Expression, variables: CelVariables): unknown {
  try {
    return expression.evaluate(variables);
  } catch {
    return FAILED;
  }
}

/** A CEL result as JSON text; undefined (pair left out) for a failure or a value JSON cannot hold. */
function jsonText(value: unknown): string | undefined {
  if (value === FAILED || value === undefined) return undefined;
  if (value instanceof Date) return Number.isNaN(value.getTime()) ? undefined : JSON.stringify(value.toISOString());
  if (value instanceof Duration) return JSON.stringify(value.toString());
  try {
    const json = JSON.stringify(fromCelValue(value));
    return json === undefined || json.length <= MAX_ATTRIBUTE_CHARS
      ? json
      : JSON.stringify(cutText(json, MAX_ATTRIBUTE_CHARS));
  } catch {
    return undefined;
  }
}

/** An added attribute's value for a span: a string cut to the bound, a larger value as its cut JSON text. */
function boundedValue(value: unknown): unknown {
  if (typeof value === 'string') return cutText(value, MAX_ATTRIBUTE_CHARS);
  if (value === null || typeof value !== 'object') return value;
  let json: string | undefined;
  try {
    json = JSON.stringify(value);
  } catch {
    return undefined;
  }
  return json === undefined || json.length <= MAX_ATTRIBUTE_CHARS ? value : cutText(json, MAX_ATTRIBUTE_CHARS);
}
