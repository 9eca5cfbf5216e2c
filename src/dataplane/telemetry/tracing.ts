// Request tracing (Frontend.tracing): one SERVER span per request, exported over OTLP. The span
// starts when the listener is known, continues an incoming W3C trace context, and its context
// goes upstream in `traceparent`; at the end it gets the request's attributes (the access log's
// fields, changed by `attributes`) and a child span per prompt guard that ran (guard-spans.ts),
// and is exported unless `filter` says no.
//
// Sampling follows agentgateway: a request that carries a trace context is traced when that
// context is sampled and `clientSampling` (default true) allows it; one without starts a trace
// when `randomSampling` (a fraction 0-1 or a boolean, default false) picks it.
import {
  ROOT_CONTEXT,
  type Span,
  type SpanContext,
  SpanKind,
  SpanStatusCode,
  type Tracer,
  trace,
} from '@opentelemetry/api';
import type { Tracing } from '../../api/types/observability.ts';
import { compileExpression, type Expression, ExpressionError } from '../cel/expression.ts';
import type { ResolvedEndpoint } from '../policies/endpoint.ts';
import { AccessLogger } from './access-log.ts';
import { type CelVariables, celContext } from './cel-context.ts';
import { traceGuards } from './guard-spans.ts';
import type { LogSink } from './log-sink.ts';
import type { OtlpExporters } from './otlp/exporters.ts';
import { SpanFilter } from './otlp/span-filter.ts';
import type { HeaderMap, RequestRecord } from './request-record.ts';

const TRACEPARENT = /^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/;
const NO_SINK: LogSink = { write: () => undefined };

/** The trace context of an incoming `traceparent` header, if it is a valid one. */
export function parseTraceparent(value: string | string[] | number | undefined): SpanContext | undefined {
  if (typeof value !== 'string') return undefined;
  const match = TRACEPARENT.exec(value.trim().toLowerCase());
  if (!match || match[1] === 'ff') return undefined;
  const traceId = match[2]!;
  const spanId = match[3]!;
  if (/^0+$/.test(traceId) || /^0+$/.test(spanId)) return undefined;
  return { traceId, spanId, traceFlags: Number.parseInt(match[4]!, 16), isRemote: true };
}

export class RequestTracing {
  /** Expressions that do not compile, and what that means. */
  readonly problems: string[] = [];
  /** The exporter key this tracing uses (kept while a configuration uses it). */
  readonly exporterKey: string;
  private readonly tracer: Tracer;
  private readonly filter = new SpanFilter();
  private readonly attributes: AccessLogger;
  private readonly randomSampling: Expression | undefined;
  private readonly clientSampling: Expression | undefined;

  constructor(config: Tracing, endpoint: ResolvedEndpoint, exporters: OtlpExporters) {
    this.randomSampling = this.compile(config.randomSampling, 'randomSampling', 'no request starts a trace');
    this.clientSampling = this.compile(config.clientSampling, 'clientSampling', 'incoming traces are not continued');
    const resource: Record<string, string> = {};
    for (const add of config.resources ?? []) {
      const expression = this.compile(add.expression, `resources ${add.name}`, 'the attribute is left out');
      if (!expression) continue;
      try {
        const value = expression.evaluate({});
        if (value !== undefined && value !== null) resource[add.name] = String(value);
      } catch {
        this.problems.push(`tracing resources ${add.name}: the expression fails without a request; left out`);
      }
    }
    const { key, provider } = exporters.traces(
      { endpoint, protocol: config.protocol ?? 'GRPC', path: config.path ?? '/v1/traces' },
      resource,
      this.filter,
    );
    this.exporterKey = key;
    this.tracer = provider.getTracer('gw');
    // The access log's field builder gives the span attributes; its filter is the span filter.
    this.attributes = new AccessLogger({ filter: config.filter, attributes: config.attributes }, NO_SINK);
    this.problems.push(...this.attributes.problems.map((problem) => problem.replace('access log', 'tracing')));
  }

  private compile(source: string | undefined, field: string, consequence: string): Expression | undefined {
    if (source === undefined) return undefined;
    const expression = compileExpression(source);
    if (expression instanceof ExpressionError) {
      this.problems.push(`tracing ${field} does not compile, ${consequence}: ${expression.message}`);
      // A broken expression samples nothing (fail towards less data, never towards a crash).
      return { source, evaluate: () => false };
    }
    return expression;
  }

  /** Starts the request's span when it is sampled; sets record.span and record.traceparent. */
  start(record: RequestRecord, headers: HeaderMap): void {
    const incoming = parseTraceparent(headers.traceparent);
    let variables: CelVariables | undefined;
    const decide = (expression: Expression | undefined, fallback: boolean): boolean => {
      if (!expression) return fallback;
      variables ??= celContext(record);
      let value: unknown;
      try {
        value = expression.evaluate(variables);
      } catch {
        return false;
      }
      if (typeof value === 'boolean') return value;
      if (typeof value === 'number' || typeof value === 'bigint') return Math.random() < Number(value);
      return false;
    };
    const sampled = incoming
      ? (incoming.traceFlags & 1) === 1 && decide(this.clientSampling, true)
      : decide(this.randomSampling, false);
    if (!sampled) return;
    const parent = incoming ? trace.setSpanContext(ROOT_CONTEXT, incoming) : ROOT_CONTEXT;
    const span = this.tracer.startSpan(
      record.method === '' ? 'request' : record.method,
      { kind: SpanKind.SERVER, startTime: record.startedAt },
      parent,
    );
    const spanContext = span.spanContext();
    record.span = span;
    record.traceparent = `00-${spanContext.traceId}-${spanContext.spanId}-01`;
  }

  /** Ends the request's span with its attributes (or drops it when the filter says no). */
  finish(record: RequestRecord, variables: CelVariables | undefined): void {
    const span = record.span as Span | undefined;
    if (!span) return;
    const attributes = this.attributes.attributes(record, variables);
    const endedAt = record.startedAt + record.durationSeconds() * 1000;
    if (attributes === undefined) this.filter.drop(span);
    else {
      for (const [name, value] of Object.entries(attributes)) {
        if (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean')
          span.setAttribute(name, value);
        else if (value !== null && value !== undefined) span.setAttribute(name, JSON.stringify(value));
      }
      if (record.route !== '') span.updateName(`${record.method} ${record.route}`);
      if (record.status >= 500 || record.error !== '')
        span.setStatus({ code: SpanStatusCode.ERROR, message: record.error || `HTTP ${record.status}` });
      const guards = record.llm?.guards;
      if (guards !== undefined) traceGuards(this.tracer, span, record, guards, endedAt);
    }
    span.end(endedAt);
    record.span = undefined;
  }
}
