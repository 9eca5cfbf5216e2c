// OTLP exporters of the process (access log export and tracing), one per collector, protocol
// and path, shared by every Frontend that names the same collector and kept across
// configuration swaps; after a swap the ones no configuration uses are shut down (flushed).
// Transport and batching are the OpenTelemetry SDK's: bounded queues, batches, retries.

import type * as LogsOverGrpc from '@opentelemetry/exporter-logs-otlp-grpc';
import type * as LogsOverHttp from '@opentelemetry/exporter-logs-otlp-http';
import type * as TracesOverGrpc from '@opentelemetry/exporter-trace-otlp-grpc';
import type * as TracesOverHttp from '@opentelemetry/exporter-trace-otlp-http';
import type * as Resources from '@opentelemetry/resources';
import type * as SdkLogs from '@opentelemetry/sdk-logs';
import type { LoggerProvider, LogRecordExporter } from '@opentelemetry/sdk-logs';
import type * as SdkTrace from '@opentelemetry/sdk-trace';
import type { SpanExporter, TracerProvider } from '@opentelemetry/sdk-trace';
import { loadOnFirstUse } from '../../../util/load-on-first-use.ts';
import type { ResolvedEndpoint } from '../../policies/endpoint.ts';
import type { SpanFilter } from './span-filter.ts';

// The SDK and its exporters (with gRPC and protobufjs: about 20 MiB) load when a Frontend first
// names a collector; a gateway without OTLP export never loads them.
const logsOverGrpc = loadOnFirstUse<typeof LogsOverGrpc>('@opentelemetry/exporter-logs-otlp-grpc');
const logsOverHttp = loadOnFirstUse<typeof LogsOverHttp>('@opentelemetry/exporter-logs-otlp-http');
const tracesOverGrpc = loadOnFirstUse<typeof TracesOverGrpc>('@opentelemetry/exporter-trace-otlp-grpc');
const tracesOverHttp = loadOnFirstUse<typeof TracesOverHttp>('@opentelemetry/exporter-trace-otlp-http');
const resources = loadOnFirstUse<typeof Resources>('@opentelemetry/resources');
const sdkLogs = loadOnFirstUse<typeof SdkLogs>('@opentelemetry/sdk-logs');
const sdkTrace = loadOnFirstUse<typeof SdkTrace>('@opentelemetry/sdk-trace');

export type OtlpProtocol = 'GRPC' | 'HTTP';

export interface OtlpTarget {
  endpoint: ResolvedEndpoint;
  protocol: OtlpProtocol;
  /** Request path for HTTP (default /v1/logs or /v1/traces); unused with gRPC. */
  path: string;
}

/** The service name exported spans and logs carry. */
const SERVICE_NAME = 'gw';
/** How long one export may take before the SDK gives it up (it retries later batches). */
const EXPORT_TIMEOUT_MS = 10_000;

function targetUrl(target: OtlpTarget): string {
  if (target.protocol === 'GRPC') return target.endpoint.origin;
  return `${target.endpoint.origin}${target.endpoint.basePath}${target.path}`;
}

export function targetKey(kind: 'logs' | 'traces', target: OtlpTarget, extra = ''): string {
  return `${kind} ${target.protocol} ${targetUrl(target)}${extra}`;
}

interface Shutdownable {
  shutdown(): Promise<void>;
}

export class OtlpExporters {
  private readonly providers = new Map<string, LoggerProvider | TracerProvider>();

  /** The log provider exporting to `target` (created on first use). */
  logs(target: OtlpTarget): { key: string; provider: LoggerProvider } {
    const key = targetKey('logs', target);
    let provider = this.providers.get(key) as LoggerProvider | undefined;
    if (!provider) {
      const url = targetUrl(target);
      const exporter: LogRecordExporter =
        target.protocol === 'GRPC'
          ? new (logsOverGrpc().OTLPLogExporter)({ url, timeoutMillis: EXPORT_TIMEOUT_MS })
          : new (logsOverHttp().OTLPLogExporter)({ url, timeoutMillis: EXPORT_TIMEOUT_MS });
      const { LoggerProvider, BatchLogRecordProcessor } = sdkLogs();
      provider = new LoggerProvider({
        resource: resources().resourceFromAttributes({ 'service.name': SERVICE_NAME }),
        processors: [new BatchLogRecordProcessor({ exporter })],
      });
      this.providers.set(key, provider);
    }
    return { key, provider };
  }

  /**
   * The tracer provider exporting to `target` with these resource attributes; spans `filter`
   * marks as dropped are not exported.
   */
  traces(
    target: OtlpTarget,
    resource: Record<string, string>,
    filter: SpanFilter,
  ): { key: string; provider: TracerProvider } {
    const key = targetKey('traces', target, ` ${JSON.stringify(resource)}`);
    let provider = this.providers.get(key) as TracerProvider | undefined;
    if (!provider) {
      const url = targetUrl(target);
      const exporter: SpanExporter =
        target.protocol === 'GRPC'
          ? new (tracesOverGrpc().OTLPTraceExporter)({ url, timeoutMillis: EXPORT_TIMEOUT_MS })
          : new (tracesOverHttp().OTLPTraceExporter)({ url, timeoutMillis: EXPORT_TIMEOUT_MS });
      const { TracerProvider, AlwaysOnSampler, BatchSpanProcessor } = sdkTrace();
      provider = new TracerProvider({
        resource: resources().resourceFromAttributes({ 'service.name': SERVICE_NAME, ...resource }),
        // Sampling is decided by RequestTracing before a span exists; every span made is kept.
        sampler: new AlwaysOnSampler(),
        spanProcessors: [filter.wrap(new BatchSpanProcessor({ exporter }))],
      });
      this.providers.set(key, provider);
    }
    return { key, provider };
  }

  /** Shuts down (after a last flush) the exporters whose key is not in `keep`. */
  retainOnly(keep: ReadonlySet<string>): void {
    for (const [key, provider] of this.providers) {
      if (keep.has(key)) continue;
      this.providers.delete(key);
      shutdownQuietly(provider);
    }
  }

  /** Flushes and shuts every exporter down. */
  async close(): Promise<void> {
    const providers = [...this.providers.values()];
    this.providers.clear();
    await Promise.all(providers.map((provider) => shutdownQuietly(provider)));
  }

  /** Exports what is queued now (tests and shutdown). */
  async flush(): Promise<void> {
    await Promise.all([...this.providers.values()].map((provider) => provider.forceFlush().catch(() => undefined)));
  }
}

function shutdownQuietly(provider: Shutdownable): Promise<void> {
  return provider.shutdown().catch(() => undefined);
}
