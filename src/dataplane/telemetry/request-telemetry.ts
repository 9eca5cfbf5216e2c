// What the proxy calls when a request is complete: one FrontendTelemetry per Frontend policy
// (compiled with the configuration), whose finish() records the metrics and writes the access
// log line, sharing one set of CEL variables between the two when either evaluates expressions,
// and hands the record to the web UI's traffic tap while someone watches (traffic-tap.ts).

import type { IncomingHttpHeaders } from 'node:http';
import type { Frontend } from '../../api/types/frontend.ts';
import type { AccessLog, Tracing } from '../../api/types/observability.ts';
import { type FieldNamespaces, fieldNamespace } from '../../contract/dataplane-config.ts';
import type { LogFormat } from '../../util/log-line.ts';
import { credentialMetrics } from '../auth/backend/credential-metrics.ts';
import {
  type EndpointReference,
  type EndpointScope,
  type ResolvedEndpoint,
  resolveEndpoint,
} from '../policies/endpoint.ts';
import { AccessLogger } from './access-log.ts';
import { celContext } from './cel-context.ts';
import { BufferedLogSink, type LogSink, stdoutLogSink } from './log-sink.ts';
import { type CustomLabels, DataPlaneMetrics, type MetricsOptions } from './metrics.ts';
import { OtlpAccessLogExport } from './otlp/access-log-export.ts';
import { OtlpExporters } from './otlp/exporters.ts';
import type { RequestRecord } from './request-record.ts';
import { RequestTracing } from './tracing.ts';
import { TrafficTap } from './traffic-tap.ts';

/** What resolving a Frontend's collector references needs (the configuration's Services and GwBackends). */

export interface TelemetryOptions extends MetricsOptions {
  /** Where access log lines go; standard output (buffered, bounded) when unset. */
  sink?: LogSink;
  /** Writes access log lines; on by default, as agentgateway logs every request at level info. */
  accessLog?: boolean;
  /** The access log's line format (gw run --log-format): JSON objects by default. */
  logFormat?: LogFormat;
}

/** The process's telemetry: one metrics registry and one log sink shared by every Frontend. */
export class Telemetry {
  readonly metrics: DataPlaneMetrics;
  /** OTLP exporters (access log export, tracing), shared by the Frontends naming the same collector. */
  readonly otlp = new OtlpExporters();
  readonly sink: LogSink;
  /** Completed requests for the web UI's live traffic, captured only while someone watches. */
  readonly traffic = new TrafficTap();
  readonly #accessLog: boolean;
  readonly #logFormat: LogFormat;

  constructor(options: TelemetryOptions = {}) {
    this.metrics = new DataPlaneMetrics(options);
    this.#accessLog = options.accessLog ?? true;
    this.#logFormat = options.logFormat ?? 'json';
    const sink = options.sink ?? stdoutLogSink();
    this.sink = sink;
    if (sink instanceof BufferedLogSink) {
      this.metrics.registerCounterFunction(
        'gw_access_log_dropped_lines_total',
        'Access log lines dropped because the log output could not keep up.',
        () => sink.dropped,
      );
      this.metrics.registerCounterFunction(
        'gw_access_log_failed_writes_total',
        'Writes of access log lines that the log output refused.',
        () => sink.failedWrites,
      );
    }
    this.metrics.registerCounterFunction(
      'gw_backend_auth_token_fetches_total',
      'Credentials gw fetched for backends (cloud tokens, STS credentials, exchanged OAuth tokens), by kind and outcome.',
      () => credentialMetrics.entries().map(([kind, outcome, value]) => ({ labels: { kind, outcome }, value })),
    );
  }

  /**
   * Compiles a Frontend's accessLog (and its OTLP export), tracing and metrics settings, once per
   * configuration. Collector references resolve in `scope`; without one they are problems.
   */
  forFrontend(frontend: Frontend | undefined, scope?: EndpointScope, namespaces?: FieldNamespaces): FrontendTelemetry {
    const accessLog = this.#accessLog ? new AccessLogger(frontend?.accessLog, this.sink, this.#logFormat) : undefined;
    const problems: string[] = [];
    const endpoint = (reference: EndpointReference, field: string): ResolvedEndpoint | undefined => {
      // A field set by a policy of another namespace (a ListenerSet's) resolves there.
      const namespace = scope && fieldNamespace(namespaces, field.split('.')[0]!, scope.namespace);
      const resolved = scope
        ? resolveEndpoint(reference, { ...scope, namespace: namespace! }, field)
        : { field, message: 'cannot be resolved here' };
      if ('message' in resolved) {
        problems.push(`${resolved.field}: ${resolved.message}; nothing is exported`);
        return undefined;
      }
      return resolved;
    };
    let otlpLog: OtlpAccessLogExport | undefined;
    const otlpConfig = frontend?.accessLog?.otlp;
    if (otlpConfig) {
      const resolved = endpoint(otlpConfig, 'frontend.accessLog.otlp');
      if (resolved) otlpLog = new OtlpAccessLogExport(otlpConfig, frontend.accessLog as AccessLog, resolved, this.otlp);
    }
    let tracing: RequestTracing | undefined;
    const tracingConfig = frontend?.tracing as Tracing | undefined;
    if (tracingConfig) {
      const resolved = endpoint(tracingConfig, 'frontend.tracing');
      if (resolved) tracing = new RequestTracing(tracingConfig, resolved, this.otlp);
    }
    return new FrontendTelemetry(this.metrics, accessLog, this.metrics.compileLabels(frontend?.metrics), {
      otlpLog,
      tracing,
      problems,
      traffic: this.traffic,
    });
  }

  /** Shuts down the OTLP exporters no compiled Frontend uses any more. */
  retainExporters(keep: ReadonlySet<string>): void {
    this.otlp.retainOnly(keep);
  }

  /** Flushes and stops the OTLP exporters. */
  async close(): Promise<void> {
    await this.otlp.close();
  }
}

interface FrontendExports {
  otlpLog: OtlpAccessLogExport | undefined;
  tracing: RequestTracing | undefined;
  problems: readonly string[];
  traffic?: TrafficTap;
}

export class FrontendTelemetry {
  /** Expressions that did not compile and what that means for the log or the labels. */
  readonly problems: readonly string[];
  readonly #metrics: DataPlaneMetrics;
  readonly #accessLog: AccessLogger | undefined;
  readonly #labels: CustomLabels;
  readonly #usesCel: boolean;
  readonly #otlpLog: OtlpAccessLogExport | undefined;
  readonly #tracing: RequestTracing | undefined;
  readonly #traffic: TrafficTap | undefined;
  /** OTLP exporter keys this Frontend uses. */
  readonly exporterKeys: readonly string[];

  constructor(
    metrics: DataPlaneMetrics,
    accessLog: AccessLogger | undefined,
    labels: CustomLabels,
    exports: FrontendExports = { otlpLog: undefined, tracing: undefined, problems: [] },
  ) {
    this.#metrics = metrics;
    this.#accessLog = accessLog;
    this.#labels = labels;
    this.#otlpLog = exports.otlpLog;
    this.#tracing = exports.tracing;
    this.#traffic = exports.traffic;
    this.#usesCel =
      (accessLog?.usesCel ?? false) ||
      labels.names.length > 0 ||
      (exports.otlpLog?.usesCel ?? false) ||
      !!exports.tracing;
    this.problems = [
      ...(accessLog?.problems ?? []),
      ...labels.problems,
      ...exports.problems,
      ...(exports.otlpLog?.problems ?? []),
      ...(exports.tracing?.problems ?? []),
    ];
    this.exporterKeys = [exports.otlpLog?.exporterKey, exports.tracing?.exporterKey].filter(
      (key): key is string => key !== undefined,
    );
  }

  /** Called when the request's listener is known: starts its trace span when traced. */
  start(record: RequestRecord, headers: IncomingHttpHeaders): void {
    this.#tracing?.start(record, headers);
  }

  /** Records a request that is complete (its end time is set now unless the proxy set it). */
  finish(record: RequestRecord): void {
    record.finish();
    const variables = this.#usesCel ? celContext(record) : undefined;
    this.#metrics.record(record, this.#labels, variables);
    this.#accessLog?.log(record, variables);
    this.#otlpLog?.export(record, variables);
    this.#tracing?.finish(record, variables);
    // Nobody watching, this boolean is all the web UI costs a request.
    if (this.#traffic?.watching) this.#traffic.capture(record);
  }
}
