// The prompt guards of a traced request as child spans of its span (decision 0031): one
// INTERNAL span per guard that ran, named after its place (`guard request[0].regex`), from when
// its check began for as long as it took, saying what it did. They are made when the request
// ends, from the outcomes on its LLM record (the ones the access log writes), so a guard kind
// needs nothing of its own to be traced. Only names are written — the guard's place and kind,
// its action, the entity, pattern or category names that fired, a failure's type and message —
// never the text a guard read, nor a reason a service gave (it may quote that text).
import {
  type Attributes,
  ROOT_CONTEXT,
  type Span,
  SpanKind,
  SpanStatusCode,
  type Tracer,
  trace,
} from '@opentelemetry/api';
import { cutText } from '../../util/values.ts';
import type { GuardOutcome } from '../ai/guards/outcome.ts';
import type { RequestRecord } from './request-record.ts';

/** Longest matched name written, and how many names a span carries (a service answers what it likes). */
const MAX_NAME_LENGTH = 128;
const MAX_NAMES = 64;

// performance.now() (a guard's start) runs on the same monotonic clock as process.hrtime (the
// request's start), from another origin: this is the difference, in milliseconds.
const PERFORMANCE_MINUS_HRTIME_MS = performance.now() - Number(process.hrtime.bigint()) / 1e6;

/** The span name of a guard: its place in the configuration, as the access log writes it. */
export function guardSpanName(outcome: GuardOutcome): string {
  return `guard ${outcome.side}[${outcome.index}].${outcome.kind}`;
}

/** What a guard's span says about it. */
export function guardSpanAttributes(outcome: GuardOutcome): Attributes {
  const attributes: Attributes = {
    'gw.ai.guard.side': outcome.side,
    'gw.ai.guard.index': outcome.index,
    'gw.ai.guard.kind': outcome.kind,
    'gw.ai.guard.action': outcome.action,
  };
  if (outcome.matched !== undefined && outcome.matched.length > 0)
    attributes['gw.ai.guard.matched'] = outcome.matched
      .slice(0, MAX_NAMES)
      .map((name) => cutText(name, MAX_NAME_LENGTH));
  if (outcome.error !== undefined) attributes['error.type'] = outcome.errorType ?? '_OTHER';
  return attributes;
}

/**
 * Adds a span per guard outcome under `parent`, the request's span. `endedAt` is the request's
 * end (wall clock, ms): a streamed answer's guard, whose checks are spread over the stream, has
 * no start of its own, so its span ends there and lasts the time its checks took together.
 */
export function traceGuards(
  tracer: Tracer,
  parent: Span,
  record: RequestRecord,
  outcomes: readonly GuardOutcome[],
  endedAt: number,
): void {
  const context = trace.setSpan(ROOT_CONTEXT, parent);
  const requestStart = Number(record.startTime) / 1e6 + PERFORMANCE_MINUS_HRTIME_MS;
  for (const outcome of outcomes) {
    const start =
      outcome.startedAt === undefined ? endedAt - outcome.ms : record.startedAt + (outcome.startedAt - requestStart);
    const span = tracer.startSpan(
      guardSpanName(outcome),
      { kind: SpanKind.INTERNAL, startTime: start, attributes: guardSpanAttributes(outcome) },
      context,
    );
    // A rejection is the guard working; only a guard that could not check is an error.
    if (outcome.error !== undefined) span.setStatus({ code: SpanStatusCode.ERROR, message: outcome.error });
    span.end(start + outcome.ms);
  }
}
