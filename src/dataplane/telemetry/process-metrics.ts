// The process and runtime metrics every /metrics scrape ends with (docs/telemetry.md "Process
// metrics"): CPU time, resident memory, open file descriptors and start time under the names
// Prometheus client libraries use for any process (process_*), and the Node.js runtime's heap and
// event-loop delay (nodejs_*, prom-client's names, so existing dashboards work). Read from Node's
// own APIs and, on Linux, /proc/self; a figure the platform does not give is left out, never 0.
//
// The event-loop delay comes from monitorEventLoopDelay (a libuv timer sampling every 10 ms, no
// work on the request path); each scrape reports the delays since the previous one and starts a
// new window, as prom-client does, but without the sampling interval each sample includes (an
// idle loop reports 0, not 10 ms).
import { readdirSync, readFileSync } from 'node:fs';
import { monitorEventLoopDelay, performance } from 'node:perf_hooks';

const EVENT_LOOP_RESOLUTION_MS = 10;
const NANOS_PER_SECOND = 1e9;

export class ProcessMetrics {
  readonly #loopDelay: ReturnType<typeof monitorEventLoopDelay>;

  constructor() {
    this.#loopDelay = monitorEventLoopDelay({ resolution: EVENT_LOOP_RESOLUTION_MS });
    this.#loopDelay.enable();
  }

  /** The exposition text of the process and runtime metrics (format 0.0.4), as of now. */
  render(): string {
    const out: string[] = [];
    const cpu = process.cpuUsage();
    const user = cpu.user / 1e6;
    const system = cpu.system / 1e6;
    metric(out, 'process_cpu_user_seconds_total', 'counter', 'User CPU time spent (seconds).', user);
    metric(out, 'process_cpu_system_seconds_total', 'counter', 'System CPU time spent (seconds).', system);
    metric(out, 'process_cpu_seconds_total', 'counter', 'User and system CPU time spent (seconds).', user + system);
    metric(out, 'process_resident_memory_bytes', 'gauge', 'Resident memory size (bytes).', process.memoryUsage.rss());
    const proc = procFigures();
    if (proc.virtualMemory !== undefined)
      metric(out, 'process_virtual_memory_bytes', 'gauge', 'Virtual memory size (bytes).', proc.virtualMemory);
    if (proc.openFds !== undefined) metric(out, 'process_open_fds', 'gauge', 'Open file descriptors.', proc.openFds);
    if (proc.maxFds !== undefined)
      metric(out, 'process_max_fds', 'gauge', 'Most open file descriptors allowed.', proc.maxFds);
    metric(
      out,
      'process_start_time_seconds',
      'gauge',
      'Start time of the process since the Unix epoch (seconds).',
      Math.round(performance.timeOrigin) / 1000,
    );
    const memory = process.memoryUsage();
    metric(out, 'nodejs_heap_size_total_bytes', 'gauge', 'V8 heap size (bytes).', memory.heapTotal);
    metric(out, 'nodejs_heap_size_used_bytes', 'gauge', 'V8 heap in use (bytes).', memory.heapUsed);
    metric(
      out,
      'nodejs_external_memory_bytes',
      'gauge',
      'Memory of C++ objects bound to JavaScript (bytes).',
      memory.external,
    );
    this.#renderLoopDelay(out);
    out.push(
      '# HELP nodejs_version_info Node.js version.',
      '# TYPE nodejs_version_info gauge',
      `nodejs_version_info{version="${process.version}"} 1`,
    );
    return `${out.join('\n')}\n`;
  }

  /** Stops sampling the event loop. */
  close(): void {
    this.#loopDelay.disable();
  }

  #renderLoopDelay(out: string[]): void {
    const delay = this.#loopDelay;
    // No sample yet (a scrape within the first 10 ms): the histogram's extremes are meaningless.
    if (delay.count === 0) return;
    // Each sample is the time between two timer runs, the resolution included: the lag is the excess.
    const lag = (nanos: number) => Math.max(0, nanos / NANOS_PER_SECOND - EVENT_LOOP_RESOLUTION_MS / 1000);
    const figures: [string, string, number][] = [
      ['nodejs_eventloop_lag_seconds', 'Mean event loop lag since the last scrape (seconds).', lag(delay.mean)],
      ['nodejs_eventloop_lag_min_seconds', 'Shortest event loop lag since the last scrape (seconds).', lag(delay.min)],
      ['nodejs_eventloop_lag_max_seconds', 'Longest event loop lag since the last scrape (seconds).', lag(delay.max)],
      ['nodejs_eventloop_lag_mean_seconds', 'Mean event loop lag since the last scrape (seconds).', lag(delay.mean)],
      // An offset does not change a standard deviation.
      [
        'nodejs_eventloop_lag_stddev_seconds',
        'Standard deviation of the event loop lag (seconds).',
        delay.stddev / NANOS_PER_SECOND,
      ],
      [
        'nodejs_eventloop_lag_p50_seconds',
        'Median event loop lag since the last scrape (seconds).',
        lag(delay.percentile(50)),
      ],
      [
        'nodejs_eventloop_lag_p90_seconds',
        '90th percentile of the event loop lag (seconds).',
        lag(delay.percentile(90)),
      ],
      [
        'nodejs_eventloop_lag_p99_seconds',
        '99th percentile of the event loop lag (seconds).',
        lag(delay.percentile(99)),
      ],
    ];
    for (const [name, help, value] of figures) metric(out, name, 'gauge', help, value);
    delay.reset();
  }
}

function metric(out: string[], name: string, type: 'counter' | 'gauge', help: string, value: number): void {
  out.push(`# HELP ${name} ${help}`, `# TYPE ${name} ${type}`, `${name} ${value}`);
}

interface ProcFigures {
  virtualMemory?: number;
  openFds?: number;
  maxFds?: number;
}

/** What Linux's /proc/self tells; empty elsewhere (or when /proc is not mounted). */
function procFigures(): ProcFigures {
  if (process.platform !== 'linux') return {};
  const figures: ProcFigures = {};
  try {
    // The command name (field 2) may hold spaces and parentheses: the fields after it start at the last ')'.
    const stat = readFileSync('/proc/self/stat', 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    // vsize is field 23 of the whole line, the 21st after the command name.
    const vsize = Number(fields[20]);
    if (Number.isFinite(vsize)) figures.virtualMemory = vsize;
  } catch {}
  try {
    // The directory's own descriptor, open while it is read, is not counted.
    figures.openFds = readdirSync('/proc/self/fd').length - 1;
  } catch {}
  try {
    const limits = readFileSync('/proc/self/limits', 'utf8');
    const soft = /^Max open files\s+(\d+)/m.exec(limits)?.[1];
    if (soft !== undefined) figures.maxFds = Number(soft);
  } catch {}
  return figures;
}
