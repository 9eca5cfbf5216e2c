// Prometheus metrics of the data plane (docs/telemetry.md): HTTP requests, their duration and
// the upstream call's, the OpenTelemetry GenAI metrics (token usage, request duration, time to
// first token) with the conventions' bucket boundaries, the cost of LLM requests by the Gateway's
// model catalog (decision 0040), and what each prompt guard did (its duration by outcome, the names
// it matched; decision 0031), all with Frontend.metrics custom labels.
//
// Hand-written rather than prom-client because recording sits on the request path: one request
// here is one series look-up per label group (a trie of Maps over the label values, no label
// object hashed or sorted) and then plain array increments; bench/telemetry.bench.ts measures
// both (docs/telemetry.md has the figures). Each label group holds at most `maxSeries` label sets;
// past that, new label sets are counted in one series whose labels are all "overflow", so a
// client sending random model names cannot grow memory or the scrape without bound.
//
// With several worker processes (`gw run --workers N`, docs/dataplane.md) each worker has its own
// registry; snapshot() gives its series as plain data that travels over IPC, and the primary
// sums them with mergeMetricsSnapshots() and renders the sum. Recording is not involved.
import type { MetricLabels } from '../../api/types/observability.ts';
import { cutText } from '../../util/values.ts';
import type { GuardOutcome } from '../ai/guards/outcome.ts';
import { compileExpression, type Expression, ExpressionError, evaluateOr } from '../cel/expression.ts';
import { type CelVariables, celContext } from './cel-context.ts';
import type { LlmRecord, RequestRecord } from './request-record.ts';

/** HTTP request and upstream call durations, seconds (agentgateway's general-purpose buckets). */
export const HTTP_DURATION_BUCKETS: readonly number[] = [
  0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 80,
];
/** gen_ai.client.token.usage explicit bucket boundaries (OpenTelemetry GenAI semantic conventions). */
export const GEN_AI_TOKEN_BUCKETS: readonly number[] = [
  1, 4, 16, 64, 256, 1024, 4096, 16384, 65536, 262144, 1048576, 4194304, 16777216, 67108864,
];
/** gen_ai.server.request.duration explicit bucket boundaries, seconds. */
export const GEN_AI_DURATION_BUCKETS: readonly number[] = [
  0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24, 20.48, 40.96, 81.92,
];
/** gen_ai.server.time_to_first_token explicit bucket boundaries, seconds. */
export const GEN_AI_TTFT_BUCKETS: readonly number[] = [
  0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10,
];
/**
 * gw.ai.guard.duration bucket boundaries, seconds: a regex guard takes microseconds, a guard
 * service tens of milliseconds to its 10 s deadline.
 */
export const GUARD_DURATION_BUCKETS: readonly number[] = [
  0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10,
];

export const METRICS_CONTENT_TYPE = 'text/plain; version=0.0.4; charset=utf-8';

/** Label sets kept per label group (HTTP, GenAI) before new ones go to the overflow series. */
export const DEFAULT_MAX_SERIES = 10_000;
/** Longest label value kept; longer ones are cut and marked (before they key a series, so cut values merge). */
export const MAX_LABEL_VALUE_LENGTH = 128;
/** The value of a custom label whose expression fails or gives no string, number or bool. */
export const UNKNOWN = 'unknown';

const HTTP_LABELS = ['gateway', 'listener', 'route', 'backend', 'method', 'status'] as const;
const GEN_AI_LABELS = [
  'gateway',
  'listener',
  'route',
  'gen_ai_operation_name',
  'gen_ai_provider_name',
  'gen_ai_request_model',
  'gen_ai_response_model',
] as const;
// Which guard (where it is configured: the route's backend, its side and place in the list, its
// kind) and what it did. error_type is last and left out of a guard that did not fail.
const GUARD_WHICH = [
  'gateway',
  'listener',
  'route',
  'backend',
  'gen_ai_provider_name',
  'gw_ai_guard_side',
  'gw_ai_guard_index',
  'gw_ai_guard_kind',
  'gw_ai_guard_action',
] as const;
const GUARD_LABELS = [...GUARD_WHICH, 'error_type'] as const;
const GUARD_MATCH_LABELS = [...GUARD_WHICH, 'gw_ai_guard_match'] as const;
/** The error_type label of a guard that did not fail, taken out of its series' label text. */
const NO_ERROR_TYPE = ',error_type=""';
const RESERVED_LABELS = new Set<string>([
  ...HTTP_LABELS,
  ...GEN_AI_LABELS,
  ...GUARD_LABELS,
  ...GUARD_MATCH_LABELS,
  'gen_ai_token_type',
  'le',
]);

type LabelValue = string | number;

/** A histogram as data: observations per bucket (not cumulative; the last slot is +Inf), sum, count. */
export interface HistogramSnapshot {
  counts: number[];
  sum: number;
  count: number;
}

/** One HTTP series as data; `labels` is its rendered label text, which identifies it. */
export interface HttpSeriesSnapshot {
  labels: string;
  requests: number;
  duration: HistogramSnapshot;
  upstream?: HistogramSnapshot | undefined;
}

/** One GenAI series as data. */
export interface GenAiSeriesSnapshot {
  labels: string;
  inputTokens: HistogramSnapshot;
  outputTokens: HistogramSnapshot;
  duration: HistogramSnapshot;
  timeToFirstToken?: HistogramSnapshot | undefined;
  /** Model catalog lookups of requests with usage (absent: none), and the USD the priced ones cost. */
  costs?: CostSnapshot | undefined;
}

/** What the model catalog made of a GenAI series' requests. */
export interface CostSnapshot {
  /** USD of the priced requests. */
  usd: number;
  priced: number;
  /** Requests with usage whose model the catalog does not price. */
  missing: number;
}

/** One prompt guard series as data: its durations (their count is the number of checks). */
export interface GuardSeriesSnapshot {
  labels: string;
  duration: HistogramSnapshot;
}

/** How often one guard matched one name, as data. */
export interface GuardMatchSeriesSnapshot {
  labels: string;
  matches: number;
}

/** A counter read at snapshot time (e.g. access log lines dropped). */
export interface CounterSnapshot {
  name: string;
  help: string;
  /** Rendered label text (`kind="aws",outcome="success"`); absent for a counter without labels. */
  labels?: string;
  value: number;
}

/** Every metric of a registry as plain JSON-safe data (for IPC between worker processes). */
export interface MetricsSnapshot {
  http: HttpSeriesSnapshot[];
  genAi: GenAiSeriesSnapshot[];
  guards: GuardSeriesSnapshot[];
  guardMatches: GuardMatchSeriesSnapshot[];
  counters: CounterSnapshot[];
}

// What rendering reads: the live series and the snapshots both have this shape.
interface HistogramView {
  readonly counts: ArrayLike<number>;
  readonly sum: number;
  readonly count: number;
}
interface HttpSeriesView {
  readonly labels: string;
  readonly requests: number;
  readonly duration: HistogramView;
  readonly upstream?: HistogramView | undefined;
}
interface GenAiSeriesView {
  readonly labels: string;
  readonly inputTokens: HistogramView;
  readonly outputTokens: HistogramView;
  readonly duration: HistogramView;
  readonly timeToFirstToken?: HistogramView | undefined;
  readonly costs?: CostSnapshot | undefined;
}
interface GuardSeriesView {
  readonly labels: string;
  readonly duration: HistogramView;
}

class HistogramData {
  /** Observations per bucket (not cumulative); the last slot is +Inf. */
  readonly counts: Float64Array;
  sum = 0;
  count = 0;
  constructor(bucketCount: number) {
    this.counts = new Float64Array(bucketCount + 1);
  }
  observe(bounds: readonly number[], value: number): void {
    let i = 0;
    const n = bounds.length;
    while (i < n && value > (bounds[i] as number)) i++;
    this.counts[i]++;
    this.sum += value;
    this.count++;
  }
}

class HttpSeries {
  readonly labels: string;
  requests = 0;
  readonly duration = new HistogramData(HTTP_DURATION_BUCKETS.length);
  upstream: HistogramData | undefined = undefined;
  constructor(labels: string) {
    this.labels = labels;
  }
}

class GenAiSeries {
  readonly labels: string;
  readonly inputTokens = new HistogramData(GEN_AI_TOKEN_BUCKETS.length);
  readonly outputTokens = new HistogramData(GEN_AI_TOKEN_BUCKETS.length);
  readonly duration = new HistogramData(GEN_AI_DURATION_BUCKETS.length);
  timeToFirstToken: HistogramData | undefined = undefined;
  costs: CostSnapshot | undefined = undefined;
  constructor(labels: string) {
    this.labels = labels;
  }
}

class GuardSeries {
  readonly labels: string;
  readonly duration = new HistogramData(GUARD_DURATION_BUCKETS.length);
  constructor(labels: string) {
    this.labels = labels;
  }
}

class GuardMatchSeries {
  readonly labels: string;
  matches = 0;
  constructor(labels: string) {
    this.labels = labels;
  }
}

/**
 * Series of one label group, found by walking a trie of Maps over the label values: each step
 * is a Map look-up on a value that is usually a string from the configuration (its hash cached),
 * which is cheaper than joining the values into a key string per request.
 */
class SeriesTable<T> {
  readonly series: T[] = [];
  readonly #root = new Map<LabelValue, unknown>();
  readonly #max: number;
  readonly #make: (values: readonly LabelValue[]) => T;
  #overflow: T | undefined;
  readonly #makeOverflow: () => T;

  constructor(max: number, make: (values: readonly LabelValue[]) => T, makeOverflow: () => T) {
    this.#max = max;
    this.#make = make;
    this.#makeOverflow = makeOverflow;
  }

  get(values: readonly LabelValue[]): T {
    let node = this.#root;
    const last = values.length - 1;
    for (let i = 0; i < last; i++) {
      const value = values[i] as LabelValue;
      let next = node.get(value) as Map<LabelValue, unknown> | undefined;
      if (next === undefined) {
        if (this.series.length >= this.#max) return this.#overflowSeries();
        next = new Map();
        node.set(value, next);
      }
      node = next;
    }
    const value = values[last] as LabelValue;
    let leaf = node.get(value) as T | undefined;
    if (leaf === undefined) {
      if (this.series.length >= this.#max) return this.#overflowSeries();
      leaf = this.#make(values);
      node.set(value, leaf);
      this.series.push(leaf);
    }
    return leaf;
  }

  #overflowSeries(): T {
    if (this.#overflow === undefined) {
      this.#overflow = this.#makeOverflow();
      this.series.push(this.#overflow);
    }
    return this.#overflow;
  }
}

/** Frontend.metrics compiled: custom label names (Prometheus-safe) and their expressions. */
export class CustomLabels {
  /** Distinguishes label name lists in the series tables (same names, same id). */
  readonly id: number;
  readonly names: readonly string[];
  /** Labels left out, and why (a name Prometheus cannot take twice, an expression that does not compile). */
  readonly problems: readonly string[];
  readonly #expressions: readonly (Expression | ExpressionError)[];

  constructor(id: number, names: string[], expressions: (Expression | ExpressionError)[], problems: string[]) {
    this.id = id;
    this.names = names;
    this.#expressions = expressions;
    this.problems = problems;
  }

  /** The label values for one request: each expression's string, or "unknown" when it fails. */
  values(variables: CelVariables): string[] {
    const out = new Array<string>(this.#expressions.length);
    for (let i = 0; i < out.length; i++) {
      const expression = this.#expressions[i] as Expression | ExpressionError;
      out[i] = expression instanceof ExpressionError ? UNKNOWN : labelText(evaluateOr(expression, variables, UNKNOWN));
    }
    return out;
  }
}

function labelText(value: unknown): string {
  switch (typeof value) {
    case 'string':
      return value === '' ? UNKNOWN : value;
    case 'bigint':
    case 'number':
    case 'boolean':
      return String(value);
    default:
      return UNKNOWN;
  }
}

/** A label name Prometheus accepts: [a-zA-Z_][a-zA-Z0-9_]*, other characters as `_`. */
export function prometheusLabelName(name: string): string {
  const cleaned = name.replace(/[^a-zA-Z0-9_]/g, '_');
  return /^[0-9]/.test(cleaned) ? `_${cleaned}` : cleaned;
}

const NO_CUSTOM_LABELS = new CustomLabels(0, [], [], []);

export interface MetricsOptions {
  /** Label sets per label group before new ones go to the overflow series (default 10,000). */
  maxSeries?: number;
}

interface CounterFunction {
  name: string;
  help: string;
  read: () => number | readonly LabelledCount[];
}

/** One series of a labelled counter read when scraped. */
export interface LabelledCount {
  labels: Readonly<Record<string, string>>;
  value: number;
}

export class DataPlaneMetrics {
  readonly #http: SeriesTable<HttpSeries>;
  readonly #genAi: SeriesTable<GenAiSeries>;
  readonly #guards: SeriesTable<GuardSeries>;
  readonly #guardMatches: SeriesTable<GuardMatchSeries>;
  // Custom label name lists by id: series of different Frontends may carry different labels.
  readonly #labelSetIds = new Map<string, number>();
  readonly #labelNames = new Map<number, readonly string[]>();
  readonly #counterFunctions: CounterFunction[] = [];
  // Reused per record() call: the label values of the request being recorded.
  readonly #httpKey: LabelValue[] = [];
  readonly #genAiKey: LabelValue[] = [];
  readonly #guardKey: LabelValue[] = [];

  constructor(options: MetricsOptions = {}) {
    const max = options.maxSeries ?? DEFAULT_MAX_SERIES;
    this.#http = new SeriesTable(
      max,
      (values) => new HttpSeries(renderLabels(HTTP_LABELS, values, this.#customNames(values[0] as number))),
      () => new HttpSeries(overflowLabels(HTTP_LABELS)),
    );
    this.#genAi = new SeriesTable(
      max,
      (values) => new GenAiSeries(renderLabels(GEN_AI_LABELS, values, this.#customNames(values[0] as number))),
      () => new GenAiSeries(overflowLabels(GEN_AI_LABELS)),
    );
    // A guard that did not fail has no error_type label (OpenTelemetry sets error.type on failures only).
    this.#guards = new SeriesTable(
      max,
      (values) =>
        new GuardSeries(
          renderLabels(GUARD_LABELS, values, this.#customNames(values[0] as number)).replace(NO_ERROR_TYPE, ''),
        ),
      () => new GuardSeries(overflowLabels(GUARD_LABELS)),
    );
    this.#guardMatches = new SeriesTable(
      max,
      (values) =>
        new GuardMatchSeries(renderLabels(GUARD_MATCH_LABELS, values, this.#customNames(values[0] as number))),
      () => new GuardMatchSeries(overflowLabels(GUARD_MATCH_LABELS)),
    );
    this.#labelSetIds.set('', 0);
    this.#labelNames.set(0, []);
  }

  #customNames(id: number): readonly string[] {
    return this.#labelNames.get(id) ?? [];
  }

  /** Compiles Frontend.metrics once per configuration; pass the result to record(). */
  compileLabels(config: MetricLabels | undefined): CustomLabels {
    const adds = config?.attributes.add ?? [];
    if (adds.length === 0) return NO_CUSTOM_LABELS;
    const names: string[] = [];
    const expressions: (Expression | ExpressionError)[] = [];
    const problems: string[] = [];
    for (const add of adds) {
      const name = prometheusLabelName(add.name);
      if (RESERVED_LABELS.has(name) || name.startsWith('__') || names.includes(name)) {
        problems.push(`metric label ${JSON.stringify(add.name)} left out: the label name ${name} is taken`);
        continue;
      }
      const expression = compileExpression(add.expression);
      if (expression instanceof ExpressionError) {
        problems.push(`metric label ${JSON.stringify(add.name)} is always ${UNKNOWN}: ${expression.message}`);
      }
      names.push(name);
      expressions.push(expression);
    }
    const signature = names.join(',');
    let id = this.#labelSetIds.get(signature);
    if (id === undefined) {
      id = this.#labelSetIds.size;
      this.#labelSetIds.set(signature, id);
      this.#labelNames.set(id, names);
    }
    return new CustomLabels(id, names, expressions, problems);
  }

  /**
   * Adds a counter read when scraped: one number (access log lines dropped), or a series per
   * label set (credential fetches by kind and outcome).
   */
  registerCounterFunction(name: string, help: string, read: () => number | readonly LabelledCount[]): void {
    this.#counterFunctions.push({ name, help, read });
  }

  /**
   * Records a completed request. With custom labels, their expressions are evaluated against
   * `variables` (built from the record when not given).
   */
  record(record: RequestRecord, labels: CustomLabels = NO_CUSTOM_LABELS, variables?: CelVariables): void {
    const custom = labels.names.length === 0 ? undefined : labels.values(variables ?? celContext(record));
    const duration = record.durationSeconds();

    const httpKey = this.#httpKey;
    httpKey.length = 0;
    httpKey.push(
      labels.id,
      clip(record.gateway),
      clip(record.listener),
      clip(record.route),
      clip(record.backend),
      clip(record.method),
      record.status,
    );
    if (custom) for (const value of custom) httpKey.push(clip(value));
    const http = this.#http.get(httpKey);
    http.requests++;
    http.duration.observe(HTTP_DURATION_BUCKETS, duration);
    const upstream = record.upstreamSeconds();
    if (upstream >= 0) {
      http.upstream ??= new HistogramData(HTTP_DURATION_BUCKETS.length);
      http.upstream.observe(HTTP_DURATION_BUCKETS, upstream);
    }

    const llm = record.llm;
    if (!llm) return;
    const genAiKey = this.#genAiKey;
    genAiKey.length = 0;
    genAiKey.push(
      labels.id,
      clip(record.gateway),
      clip(record.listener),
      clip(record.route),
      llm.operation,
      clip(llm.genAiProvider),
      clip(llm.requestModel),
      clip(llm.responseModel),
    );
    if (custom) for (const value of custom) genAiKey.push(clip(value));
    const genAi = this.#genAi.get(genAiKey);
    genAi.duration.observe(GEN_AI_DURATION_BUCKETS, duration);
    if (llm.usage) {
      genAi.inputTokens.observe(GEN_AI_TOKEN_BUCKETS, llm.usage.inputTokens);
      genAi.outputTokens.observe(GEN_AI_TOKEN_BUCKETS, llm.usage.outputTokens);
    }
    const ttft = record.timeToFirstTokenSeconds();
    if (ttft >= 0) {
      genAi.timeToFirstToken ??= new HistogramData(GEN_AI_TTFT_BUCKETS.length);
      genAi.timeToFirstToken.observe(GEN_AI_TTFT_BUCKETS, ttft);
    }
    if (llm.costLookup !== undefined) {
      genAi.costs ??= { usd: 0, priced: 0, missing: 0 };
      if (llm.cost) {
        genAi.costs.usd += llm.cost.total;
        genAi.costs.priced++;
      } else genAi.costs.missing++;
    }
    if (llm.guards !== undefined) this.#recordGuards(record, llm, llm.guards, labels.id, custom);
  }

  /**
   * Each guard's duration by what it did, and the names it matched. Only bounded values become
   * labels: kind, side, place and action come from the configuration, error_type is a failure's
   * type (never its message), and matched names are entity, pattern or category names (never the
   * text they matched); a guard's reason is not a label.
   */
  #recordGuards(
    record: RequestRecord,
    llm: LlmRecord,
    outcomes: readonly GuardOutcome[],
    labelsId: number,
    custom: readonly string[] | undefined,
  ): void {
    const key = this.#guardKey;
    for (const outcome of outcomes) {
      key.length = 0;
      key.push(
        labelsId,
        clip(record.gateway),
        clip(record.listener),
        clip(record.route),
        clip(record.backend),
        clip(llm.genAiProvider),
        outcome.side,
        String(outcome.index),
        clip(outcome.kind),
        outcome.action,
      );
      const which = key.length;
      key.push(outcome.error === undefined ? '' : clip(outcome.errorType ?? '_OTHER'));
      if (custom) for (const value of custom) key.push(clip(value));
      this.#guards.get(key).duration.observe(GUARD_DURATION_BUCKETS, outcome.ms / 1000);
      if (outcome.matched === undefined) continue;
      for (const name of outcome.matched) {
        key.length = which;
        key.push(clip(name));
        if (custom) for (const value of custom) key.push(clip(value));
        this.#guardMatches.get(key).matches++;
      }
    }
  }

  /** The Prometheus text exposition (format 0.0.4) of every metric. */
  render(): string {
    return renderExposition(
      this.#http.series,
      this.#genAi.series,
      this.#guards.series,
      this.#guardMatches.series,
      this.#readCounters(),
    );
  }

  /** Every series and counter as plain data, copied (later requests do not change it). */
  snapshot(): MetricsSnapshot {
    return {
      http: this.#http.series.map((series) => ({
        labels: series.labels,
        requests: series.requests,
        duration: histogramSnapshot(series.duration),
        upstream: series.upstream && histogramSnapshot(series.upstream),
      })),
      genAi: this.#genAi.series.map((series) => ({
        labels: series.labels,
        inputTokens: histogramSnapshot(series.inputTokens),
        outputTokens: histogramSnapshot(series.outputTokens),
        duration: histogramSnapshot(series.duration),
        timeToFirstToken: series.timeToFirstToken && histogramSnapshot(series.timeToFirstToken),
        costs: series.costs && { ...series.costs },
      })),
      guards: this.#guards.series.map((series) => ({
        labels: series.labels,
        duration: histogramSnapshot(series.duration),
      })),
      guardMatches: this.#guardMatches.series.map((series) => ({ labels: series.labels, matches: series.matches })),
      counters: this.#readCounters(),
    };
  }

  #readCounters(): CounterSnapshot[] {
    const out: CounterSnapshot[] = [];
    for (const counter of this.#counterFunctions) {
      const read = counter.read();
      if (typeof read === 'number') {
        out.push({ name: counter.name, help: counter.help, value: read });
        continue;
      }
      for (const series of read) {
        const labels = Object.entries(series.labels)
          .map(([name, value]) => label(name, clip(value)))
          .join(',');
        out.push({ name: counter.name, help: counter.help, labels, value: series.value });
      }
    }
    return out;
  }
}

function histogramSnapshot(data: HistogramData): HistogramSnapshot {
  return { counts: Array.from(data.counts), sum: data.sum, count: data.count };
}

/** The Prometheus text exposition of a snapshot (e.g. the sum of several workers' snapshots). */
export function renderMetricsSnapshot(snapshot: MetricsSnapshot): string {
  return renderExposition(snapshot.http, snapshot.genAi, snapshot.guards, snapshot.guardMatches, snapshot.counters);
}

/**
 * The sum of several registries' snapshots: series with the same label text are added (counters,
 * bucket counts, sums and counts), counters by name. Each label group keeps at most `maxSeries`
 * label sets, as a registry does; the rest are added into the overflow series.
 */
export function mergeMetricsSnapshots(
  snapshots: readonly MetricsSnapshot[],
  maxSeries: number = DEFAULT_MAX_SERIES,
): MetricsSnapshot {
  const http = new Map<string, HttpSeriesSnapshot>();
  const genAi = new Map<string, GenAiSeriesSnapshot>();
  const guards = new Map<string, GuardSeriesSnapshot>();
  const guardMatches = new Map<string, GuardMatchSeriesSnapshot>();
  const counters = new Map<string, CounterSnapshot>();
  const httpOverflow = overflowLabels(HTTP_LABELS);
  const genAiOverflow = overflowLabels(GEN_AI_LABELS);
  const guardOverflow = overflowLabels(GUARD_LABELS);
  const guardMatchOverflow = overflowLabels(GUARD_MATCH_LABELS);
  for (const snapshot of snapshots) {
    for (const series of snapshot.http) {
      const target = mergeTarget(
        http,
        series.labels,
        maxSeries,
        httpOverflow,
        (labels): HttpSeriesSnapshot => ({
          labels,
          requests: 0,
          duration: emptyHistogram(),
        }),
      );
      target.requests += series.requests;
      addHistogram(target.duration, series.duration);
      if (series.upstream) {
        target.upstream ??= emptyHistogram();
        addHistogram(target.upstream, series.upstream);
      }
    }
    for (const series of snapshot.genAi) {
      const target = mergeTarget(
        genAi,
        series.labels,
        maxSeries,
        genAiOverflow,
        (labels): GenAiSeriesSnapshot => ({
          labels,
          inputTokens: emptyHistogram(),
          outputTokens: emptyHistogram(),
          duration: emptyHistogram(),
        }),
      );
      addHistogram(target.inputTokens, series.inputTokens);
      addHistogram(target.outputTokens, series.outputTokens);
      addHistogram(target.duration, series.duration);
      if (series.timeToFirstToken) {
        target.timeToFirstToken ??= emptyHistogram();
        addHistogram(target.timeToFirstToken, series.timeToFirstToken);
      }
      if (series.costs) {
        target.costs ??= { usd: 0, priced: 0, missing: 0 };
        target.costs.usd += series.costs.usd;
        target.costs.priced += series.costs.priced;
        target.costs.missing += series.costs.missing;
      }
    }
    for (const series of snapshot.guards) {
      const target = mergeTarget(guards, series.labels, maxSeries, guardOverflow, (labels) => ({
        labels,
        duration: emptyHistogram(),
      }));
      addHistogram(target.duration, series.duration);
    }
    for (const series of snapshot.guardMatches) {
      const target = mergeTarget(guardMatches, series.labels, maxSeries, guardMatchOverflow, (labels) => ({
        labels,
        matches: 0,
      }));
      target.matches += series.matches;
    }
    for (const counter of snapshot.counters) {
      const key = counter.labels === undefined ? counter.name : `${counter.name}{${counter.labels}}`;
      const target = counters.get(key);
      if (target) target.value += counter.value;
      else counters.set(key, { ...counter });
    }
  }
  return {
    http: [...http.values()],
    genAi: [...genAi.values()],
    guards: [...guards.values()],
    guardMatches: [...guardMatches.values()],
    counters: [...counters.values()],
  };
}

/** The merged series for `labels`: existing, new while under the bound, else the overflow series. */
function mergeTarget<T>(
  table: Map<string, T>,
  labels: string,
  maxSeries: number,
  overflow: string,
  make: (labels: string) => T,
): T {
  const existing = table.get(labels);
  if (existing) return existing;
  const key = table.size < maxSeries ? labels : overflow;
  let target = table.get(key);
  if (!target) {
    target = make(key);
    table.set(key, target);
  }
  return target;
}

function emptyHistogram(): HistogramSnapshot {
  return { counts: [], sum: 0, count: 0 };
}

function addHistogram(target: HistogramSnapshot, source: HistogramSnapshot): void {
  for (let i = 0; i < source.counts.length; i++)
    target.counts[i] = (target.counts[i] ?? 0) + (source.counts[i] as number);
  target.sum += source.sum;
  target.count += source.count;
}

function renderExposition(
  http: readonly HttpSeriesView[],
  genAi: readonly GenAiSeriesView[],
  guards: readonly GuardSeriesView[],
  guardMatches: readonly GuardMatchSeriesSnapshot[],
  counters: readonly CounterSnapshot[],
): string {
  const out: string[] = [];
  header(out, 'gw_requests_total', 'counter', 'HTTP requests completed by the data plane.');
  for (const series of http) out.push(`gw_requests_total{${series.labels}} ${series.requests}`);
  header(
    out,
    'gw_request_duration_seconds',
    'histogram',
    'Duration of HTTP requests, arrival to last byte sent (seconds).',
  );
  for (const series of http) {
    histogramLines(out, 'gw_request_duration_seconds', series.labels, HTTP_DURATION_BUCKETS, series.duration);
  }
  header(out, 'gw_upstream_call_duration_seconds', 'histogram', 'Duration of the upstream (backend) call (seconds).');
  for (const series of http) {
    if (series.upstream) {
      histogramLines(out, 'gw_upstream_call_duration_seconds', series.labels, HTTP_DURATION_BUCKETS, series.upstream);
    }
  }

  header(out, 'gen_ai_client_token_usage', 'histogram', 'Number of input and output tokens used per request.');
  for (const series of genAi) {
    if (series.inputTokens.count > 0) {
      const labels = `${series.labels},gen_ai_token_type="input"`;
      histogramLines(out, 'gen_ai_client_token_usage', labels, GEN_AI_TOKEN_BUCKETS, series.inputTokens);
    }
    if (series.outputTokens.count > 0) {
      const labels = `${series.labels},gen_ai_token_type="output"`;
      histogramLines(out, 'gen_ai_client_token_usage', labels, GEN_AI_TOKEN_BUCKETS, series.outputTokens);
    }
  }
  header(
    out,
    'gen_ai_server_request_duration_seconds',
    'histogram',
    'Generative AI request duration, to the last byte (seconds).',
  );
  for (const series of genAi) {
    histogramLines(
      out,
      'gen_ai_server_request_duration_seconds',
      series.labels,
      GEN_AI_DURATION_BUCKETS,
      series.duration,
    );
  }
  header(
    out,
    'gen_ai_server_time_to_first_token_seconds',
    'histogram',
    'Time from request arrival to the first token (seconds).',
  );
  for (const series of genAi) {
    if (series.timeToFirstToken) {
      histogramLines(
        out,
        'gen_ai_server_time_to_first_token_seconds',
        series.labels,
        GEN_AI_TTFT_BUCKETS,
        series.timeToFirstToken,
      );
    }
  }

  header(
    out,
    'gen_ai_client_cost_usd_total',
    'counter',
    "Cost of generative AI requests by the Gateway's model catalog (USD).",
  );
  for (const series of genAi) {
    if (series.costs && series.costs.priced > 0)
      out.push(`gen_ai_client_cost_usd_total{${series.labels}} ${formatNumber(series.costs.usd)}`);
  }
  header(
    out,
    'gw_ai_cost_catalog_lookups_total',
    'counter',
    "LLM requests with token usage looked up in the Gateway's model catalog, by whether it priced the model.",
  );
  for (const series of genAi) {
    if (!series.costs) continue;
    if (series.costs.priced > 0)
      out.push(`gw_ai_cost_catalog_lookups_total{${series.labels},status="priced"} ${series.costs.priced}`);
    if (series.costs.missing > 0)
      out.push(`gw_ai_cost_catalog_lookups_total{${series.labels},status="missing"} ${series.costs.missing}`);
  }

  header(
    out,
    'gw_ai_guard_duration_seconds',
    'histogram',
    'Time each prompt guard took to check a request or a response, by what it did (seconds).',
  );
  for (const series of guards) {
    histogramLines(out, 'gw_ai_guard_duration_seconds', series.labels, GUARD_DURATION_BUCKETS, series.duration);
  }
  header(
    out,
    'gw_ai_guard_matches_total',
    'counter',
    'Names prompt guards matched (entities, patterns, categories), by guard and name.',
  );
  for (const series of guardMatches) out.push(`gw_ai_guard_matches_total{${series.labels}} ${series.matches}`);

  let previous: string | undefined;
  for (const counter of [...counters].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))) {
    if (counter.name !== previous) header(out, counter.name, 'counter', counter.help);
    previous = counter.name;
    const labels = counter.labels === undefined ? '' : `{${counter.labels}}`;
    out.push(`${counter.name}${labels} ${formatNumber(counter.value)}`);
  }
  out.push('');
  return out.join('\n');
}

/** A label value as it keys a series: cut to the length bound, empty as "unknown". */
function clip(value: string): string {
  if (value === '') return UNKNOWN;
  return cutText(value, MAX_LABEL_VALUE_LENGTH);
}

/** `name="value",...` for a new series: built-in labels from values[1...], then the custom ones. */
function renderLabels(names: readonly string[], values: readonly LabelValue[], custom: readonly string[]): string {
  const parts: string[] = [];
  for (let i = 0; i < names.length; i++) parts.push(label(names[i] as string, values[i + 1] as LabelValue));
  for (let i = 0; i < custom.length; i++)
    parts.push(label(custom[i] as string, values[names.length + 1 + i] as LabelValue));
  return parts.join(',');
}

function overflowLabels(names: readonly string[]): string {
  return names.map((name) => `${name}="overflow"`).join(',');
}

function label(name: string, value: LabelValue): string {
  const text = value === 0 ? UNKNOWN : String(value);
  return `${name}="${escapeLabelValue(text)}"`;
}

/** Label value escaping of the text format: backslash, double quote and line feed. */
export function escapeLabelValue(value: string): string {
  return /[\\"\n]/.test(value) ? value.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n') : value;
}

function header(out: string[], name: string, type: string, help: string): void {
  out.push(`# HELP ${name} ${help}`, `# TYPE ${name} ${type}`);
}

function histogramLines(
  out: string[],
  name: string,
  labels: string,
  bounds: readonly number[],
  data: HistogramView,
): void {
  let cumulative = 0;
  for (let i = 0; i < bounds.length; i++) {
    cumulative += data.counts[i] as number;
    out.push(`${name}_bucket{${labels},le="${formatNumber(bounds[i] as number)}"} ${cumulative}`);
  }
  out.push(`${name}_bucket{${labels},le="+Inf"} ${data.count}`);
  out.push(`${name}_sum{${labels}} ${formatNumber(data.sum)}`);
  out.push(`${name}_count{${labels}} ${data.count}`);
}

function formatNumber(value: number): string {
  if (Number.isNaN(value)) return 'NaN';
  if (value === Number.POSITIVE_INFINITY) return '+Inf';
  if (value === Number.NEGATIVE_INFINITY) return '-Inf';
  return String(value);
}
