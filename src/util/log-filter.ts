// gw's log filter (`--log-level`, GwParameters logging.level): the per-module syntax of Rust's
// env_logger (RUST_LOG), which agentgateway's RUST_LOG also takes — comma-separated directives,
// each a level (`warn`: every module), a module and a level (`dataplane=debug`), or a module
// alone (`kube`: everything it says). A module covers the modules under it (`dataplane` covers
// `dataplane::failures`); the most specific directive wins, and a module no directive reaches
// logs at the bare level given, or at info. Every module name is one of gw's (LOG_MODULES): a
// misspelt one would silently filter nothing, so it is an error naming the known ones.
// docs/telemetry.md "Log level".

/** The parts of gw that log, as the `scope` of their lines; a `::` nests a module in another. */
export const LOG_MODULES = {
  run: 'gw run: start and stop, configuration loaded or refused, the Gateways and listeners served',
  'run::workers': 'gw run --workers: worker processes started, exited, restarted',
  controller: 'gw controller: the configurations it computes and what the proxies will refuse',
  kube: 'reading and writing a Kubernetes API server (--kubeconfig, --cluster, gw controller)',
  apiserver: "gw run's embedded API server and the -f files applied into it",
  dataplane: 'the data plane: configuration problems it meets, listener ports it cannot bind',
  'dataplane::failures': "gw's own 5xx answers, one line per kind of failure and minute",
  'dataplane::credentials': 'backend credentials gw obtains (token refreshes that fail)',
} as const;

export type LogModule = keyof typeof LOG_MODULES;

/** Filter levels, least severe first; a line passes when its level is at least its module's. */
const FILTER_LEVELS = ['trace', 'debug', 'info', 'warn', 'error', 'off'] as const;
export type FilterLevel = (typeof FILTER_LEVELS)[number];

/** The default filter: spec document 1, logging.level "default info". */
export const DEFAULT_LOG_LEVEL = 'info';

function rank(level: string): number {
  return FILTER_LEVELS.indexOf(level as FilterLevel);
}

function parseLevel(text: string): FilterLevel | undefined {
  const level = text.toLowerCase();
  return rank(level) >= 0 ? (level as FilterLevel) : undefined;
}

function isModule(name: string): name is LogModule {
  return Object.hasOwn(LOG_MODULES, name);
}

const KNOWN = `gw's modules: ${Object.keys(LOG_MODULES).join(', ')}`;
const LEVELS = `levels: ${FILTER_LEVELS.join(', ')}`;

export class LogFilter {
  /** The filter as given (or the default). */
  readonly text: string;
  readonly #threshold: ReadonlyMap<string, number>;

  private constructor(text: string, threshold: ReadonlyMap<string, number>) {
    this.text = text;
    this.#threshold = threshold;
  }

  /** The filter of `text`, or what is wrong with it (naming the directive). */
  static parse(text: string = DEFAULT_LOG_LEVEL): LogFilter | string {
    let fallback: FilterLevel = 'info';
    const byModule = new Map<LogModule, FilterLevel>();
    const directives = text.split(',').map((directive) => directive.trim());
    if (directives.every((directive) => directive === ''))
      return `"${text}" is empty: give a level (${FILTER_LEVELS.join(', ')}) or MODULE=LEVEL`;
    for (const directive of directives) {
      if (directive === '') continue;
      if (directive.includes('/'))
        return `"${directive}": message filters (/regex) are not supported; filter by module and level`;
      const equals = directive.indexOf('=');
      if (equals === -1) {
        const level = parseLevel(directive);
        if (level !== undefined) fallback = level;
        else if (isModule(directive)) byModule.set(directive, 'trace');
        else return `"${directive}" is neither a level nor a module (${LEVELS}; ${KNOWN})`;
        continue;
      }
      const name = directive.slice(0, equals).trim();
      const levelText = directive.slice(equals + 1).trim();
      if (!isModule(name)) return `"${directive}": unknown module "${name}" (${KNOWN})`;
      const level = parseLevel(levelText);
      if (level === undefined) return `"${directive}": unknown level "${levelText}" (${LEVELS})`;
      byModule.set(name, level);
    }
    const threshold = new Map<string, number>();
    for (const module of Object.keys(LOG_MODULES) as LogModule[]) {
      // The most specific directive: the module itself, else its nearest enclosing module.
      let level: FilterLevel = fallback;
      for (let name = module; ; ) {
        const set = byModule.get(name as LogModule);
        if (set !== undefined) {
          level = set;
          break;
        }
        const cut = name.lastIndexOf('::');
        if (cut === -1) break;
        name = name.slice(0, cut) as LogModule;
      }
      threshold.set(module, rank(level));
    }
    return new LogFilter(text, threshold);
  }

  /** Whether a line of `module` at `level` is written. */
  enabled(module: string, level: string): boolean {
    return rank(level) >= (this.#threshold.get(module) ?? rank('info'));
  }
}

/** The default filter (info everywhere). */
export const DEFAULT_LOG_FILTER = LogFilter.parse() as LogFilter;

/** `--log-level`'s value, or the error to report. */
export function parseLogLevel(text: string | undefined): LogFilter | { problem: string } {
  const filter = LogFilter.parse(text);
  return typeof filter === 'string' ? { problem: `--log-level ${filter}` } : filter;
}
