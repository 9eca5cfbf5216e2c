// What the proxy calls when a request is complete: one FrontendTelemetry per Frontend policy
// (compiled with the configuration), whose finish() records the metrics and writes the access
// log line, sharing one set of CEL variables between the two when either evaluates expressions.
import type { Frontend } from '../../api/types/frontend.ts';
import { AccessLogger } from './access-log.ts';
import { celContext } from './cel-context.ts';
import { BufferedLogSink, type LogSink, stdoutLogSink } from './log-sink.ts';
import { type CustomLabels, DataPlaneMetrics, type MetricsOptions } from './metrics.ts';
import type { RequestRecord } from './request-record.ts';

export interface TelemetryOptions extends MetricsOptions {
  /** Where access log lines go; standard output (buffered, bounded) when unset. */
  sink?: LogSink;
  /** Writes access log lines; on by default, as agentgateway logs every request at level info. */
  accessLog?: boolean;
}

/** The process's telemetry: one metrics registry and one log sink shared by every Frontend. */
export class Telemetry {
  readonly metrics: DataPlaneMetrics;
  readonly sink: LogSink;
  readonly #accessLog: boolean;

  constructor(options: TelemetryOptions = {}) {
    this.metrics = new DataPlaneMetrics(options);
    this.#accessLog = options.accessLog ?? true;
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
  }

  /** Compiles a Frontend's accessLog and metrics settings (once per configuration). */
  forFrontend(frontend: Frontend | undefined): FrontendTelemetry {
    const accessLog = this.#accessLog ? new AccessLogger(frontend?.accessLog, this.sink) : undefined;
    return new FrontendTelemetry(this.metrics, accessLog, this.metrics.compileLabels(frontend?.metrics));
  }
}

export class FrontendTelemetry {
  /** Expressions that did not compile and what that means for the log or the labels. */
  readonly problems: readonly string[];
  readonly #metrics: DataPlaneMetrics;
  readonly #accessLog: AccessLogger | undefined;
  readonly #labels: CustomLabels;
  readonly #usesCel: boolean;

  constructor(metrics: DataPlaneMetrics, accessLog: AccessLogger | undefined, labels: CustomLabels) {
    this.#metrics = metrics;
    this.#accessLog = accessLog;
    this.#labels = labels;
    this.#usesCel = (accessLog?.usesCel ?? false) || labels.names.length > 0;
    this.problems = [...(accessLog?.problems ?? []), ...labels.problems];
  }

  /** Records a request that is complete (its end time is set now unless the proxy set it). */
  finish(record: RequestRecord): void {
    record.finish();
    const variables = this.#usesCel ? celContext(record) : undefined;
    this.#metrics.record(record, this.#labels, variables);
    this.#accessLog?.log(record, variables);
  }
}
