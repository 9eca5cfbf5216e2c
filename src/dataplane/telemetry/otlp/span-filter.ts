// Spans a Frontend's tracing filter rejects: the span is ended as usual (so its children and the
// context propagation stay consistent) but never reaches the exporter.
import type { Context } from '@opentelemetry/api';
import type { ReadableSpan, Span, SpanProcessor } from '@opentelemetry/sdk-trace';

export class SpanFilter {
  private readonly dropped = new WeakSet<object>();

  /** Marks a span (before it ends) as not to be exported. */
  drop(span: object): void {
    this.dropped.add(span);
  }

  /** `processor`, skipping the spans marked dropped. */
  wrap(processor: SpanProcessor): SpanProcessor {
    const dropped = this.dropped;
    return {
      onStart: (span: Span, parentContext: Context) => processor.onStart(span, parentContext),
      onEnd: (span: ReadableSpan) => {
        if (!dropped.has(span)) processor.onEnd(span);
      },
      forceFlush: () => processor.forceFlush(),
      shutdown: () => processor.shutdown(),
    };
  }
}
