// gw run: serve Gateways. By default the objects live in the embedded Kubernetes API server
// (src/apiserver): kubectl and Kubernetes clients manage them through the kubeconfig it writes,
// and its SQLite database keeps them across restarts. gw run -f FILE|DIR serves files instead,
// reloading them on change; with --api-port as well, the files are applied into the API server
// and kept applied there (docs/apiserver.md). An invalid file never takes the gateway down: the
// last good objects keep serving and the problem is logged with the file and field path. With
// --workers N (N > 1) this process is the primary: it holds the objects and runs the controller,
// and N worker processes serve the listeners (src/run/cluster-primary.ts, docs/dataplane.md
// "Multi-core").

import { parseArgs } from 'node:util';
import { readAdminToken } from '../admin/ui/security/admin-token.ts';
import { objectSource, type UiSources } from '../admin/ui/sources.ts';
import { createAdminUi } from '../admin/ui/ui-server.ts';
import { resolveFiles } from '../api/load/documents.ts';
import { defaultDataDir } from '../apiserver/embedded.ts';
import type { DataPlaneConfig } from '../contract/dataplane-config.ts';
import type { ConfigUpdate, Controller } from '../controller/controller.ts';
import type { PlacedHealthReport } from '../dataplane/balancing/health-report.ts';
import { type MeshTransport, meshTransportFromEnv } from '../dataplane/mesh/transport.ts';
import { bindFailureText, type UnboundPort } from '../dataplane/server/data-plane.ts';
import type { DownstreamLimits } from '../dataplane/server/downstream-limits.ts';
import { type AdminServer, type MetricsSource, startAdminServer } from '../dataplane/telemetry/admin-server.ts';
import { Telemetry } from '../dataplane/telemetry/request-telemetry.ts';
import { DEMO_LLM_DEFAULT_PORT, type DemoLlm, startDemoLlm } from '../demo/demo-llm.ts';
import { ApiSource } from '../run/api-source.ts';
import { ClusterGateway } from '../run/cluster-primary.ts';
import type { ConfigSourceKind } from '../run/config-source.ts';
import { KubeSource, type KubeSourceSettings } from '../run/kube-source.ts';
import { LocalGateway } from '../run/local-gateway.ts';
import { parseLimits, parsePort, parseWorkers, RUN_SETTINGS, readRunSettingsFile } from '../run/run-settings.ts';
import type { LoadReport } from '../store/file-store.ts';
import { LogFilter, parseLogLevel } from '../util/log-filter.ts';
import { type LogFormat, type LogFunction, lineLogger, parseLogFormat } from '../util/log-line.ts';
import { argsErrorText } from './args.ts';
import type { Io } from './io.ts';
import { applyReporter, loadReporter } from './run-reports.ts';
import { gwVersion } from './version.ts';

export const RUN_USAGE = `usage: gw run [-f FILE|DIR [-f ...] [-R]] [--api-port PORT] [--api-address ADDR] [--data-dir DIR]
              [--kubeconfig FILE | --cluster] [--context NAME] [--read-only] [--gateway NAMESPACE/NAME] [--provision]
              [--address ADDR] [--admin-port PORT] [--admin-address ADDR] [--admin-token-file FILE]
              [--workers N|auto]
              [--log-format json|text] [--log-level FILTER] [--config FILE]
              [--demo-llm [--demo-llm-port PORT]]
  (no -f)            serve the embedded Kubernetes API server: manage objects with kubectl
                     (export KUBECONFIG=DATA_DIR/kubeconfig); they are kept in DATA_DIR
  -f, --filename     serve these files (directories, repeatable), reloading them on change;
                     no API server unless --api-port is given, then the files are applied into it
  -R, --recursive    read directories recursively
  --api-port         port of the API server (default 6443; 0 picks a free one)
  --api-address      address the API server binds (default 127.0.0.1)
  --data-dir         the API server's database, certificates, token and kubeconfig
                     (default $GW_DATA_DIR, else $XDG_STATE_HOME/gw, else ~/.local/state/gw)
  --kubeconfig       read the objects from this Kubernetes API server (a cluster with the CRDs
                     of gw crds, or another gw's embedded one) instead of serving one
  --cluster          the same with the default kubeconfig ($KUBECONFIG, ~/.kube/config, or the
                     pod's service account)
  --context          a context of the kubeconfig other than its current one
  --read-only        with --kubeconfig/--cluster: write no statuses (proxy replicas, when
                     gw controller runs and writes them)
  --gateway          serve this Gateway only (the others are not served); one that does not
                     exist yet or is not gw's is waited for, /healthz/ready answering 503 until
                     its listeners serve. With --kubeconfig/--cluster, give --read-only too
  --provision        with the embedded API server: also generate each Gateway's data-plane
                     objects (Deployment, Service, ...) into it, as gw controller does in a
                     cluster, to see them with kubectl (nothing runs them; gw run serves)
  --address          address the listeners bind (default 127.0.0.1; 0.0.0.0 for all interfaces)
  --admin-port       port of the admin endpoints /metrics, /healthz/ready, /healthz/live and
                     the web UI /ui/ (default 15000; 0 disables)
  --admin-address    address of the admin endpoints (default 127.0.0.1); on any other than
                     loopback the web UI needs an admin token, and is off without one
  --admin-token-file a file holding the admin token the web UI asks for (default
                     $GW_ADMIN_TOKEN; at least 16 characters; docs/ui.md)
  --workers          processes serving the listeners (default 1: everything in this process;
                     auto: one per core). With more than 1, this process holds the objects and
                     runs the controller and the admin endpoints, the workers serve traffic
  --log-format       json (default): one JSON object per line; text: for a terminal. The
                     access log goes to standard output, gw's own messages to standard error
  --log-level        which of gw's own messages are written, in RUST_LOG's per-module syntax:
                     info (default), warn, debug, off, warn,dataplane=debug, ... Modules: run,
                     run::workers, kube, apiserver, dataplane, dataplane::failures,
                     dataplane::credentials (docs/telemetry.md "Log level"); not the access log
  --config           a settings file (YAML or JSON) of the settings that follow: address,
                     admin.address, admin.port, workers, logging.level, logging.format and the
                     limits below as limits.requestHeaderTimeout, ... (docs/cli.md); flags
                     given override it
  --demo-llm         also start gw's demo LLM on 127.0.0.1 (an OpenAI-compatible echo, not a model)
                     for examples/quickstart.yaml: a first completion with no API key
  --demo-llm-port    its port (default 8081; the quickstart's GwBackend demo-llm names 8081)
What clients may cost (docs/security.md); durations such as 10s, sizes such as 64Mi:
  --request-header-timeout         a request's headers must arrive within this (default 10s)
  --request-body-idle-timeout      longest silence of a client sending a body (default 30s)
  --request-body-timeout           a body gw buffers must arrive within this (default 60s)
  --response-write-timeout         longest a client may leave gw's writes untaken (default 30s)
  --max-buffered-bytes             request-body bytes buffered while they arrive, per process
                                   (default 64Mi; each worker has its own)
  --max-buffered-bytes-per-listener  the same per listener port (default: 3/4 of the above)
`;

/** The API server's port when none is given (kube-apiserver's). */
export const DEFAULT_API_PORT = 6443;

export interface RunOptions {
  paths: string[];
  recursive: boolean;
  address: string;
  adminPort: number;
  /** Processes serving the listeners; 1 runs everything in one process. */
  workers: number;
  adminAddress: string;
  /** The token the web UI requires (--admin-token-file, GW_ADMIN_TOKEN). */
  adminToken?: string;
  /** The embedded API server, when it runs (without -f and --kubeconfig; with -f only given --api-port). */
  api?: { port: number; address: string; dataDir: string; provision?: boolean };
  /** A Kubernetes API server to read the objects from (--kubeconfig, --cluster). */
  kube?: KubeSourceSettings;
  /** Serve only this Gateway, "namespace/name" (--gateway). */
  gateway?: string;
  /** Deadlines and the buffer budget for what clients send. */
  limits: DownstreamLimits;
  /** The format of the access log and of gw's own messages (--log-format). */
  logFormat: LogFormat;
  /** Which of gw's own messages are written (--log-level). */
  logFilter: LogFilter;
  /** gw's demo LLM, started beside the gateway (--demo-llm; src/demo/demo-llm.ts). */
  demoLlm?: { port: number };
}

const DNS_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

/** --gateway: "namespace/name", as Kubernetes names them. */
export function parseGatewayKey(text: string): string | { problem: string } {
  const [namespace, name, ...rest] = text.split('/');
  if (name === undefined || rest.length > 0)
    return { problem: `--gateway takes NAMESPACE/NAME (the Gateway's namespace and name), not "${text}"` };
  if (namespace!.length > 63 || !DNS_LABEL.test(namespace!))
    return { problem: `--gateway "${text}": "${namespace}" is not a namespace name (lowercase letters, digits, '-')` };
  if (name.length > 253 || !DNS_SUBDOMAIN.test(name))
    return { problem: `--gateway "${text}": "${name}" is not a Gateway name (lowercase letters, digits, '-', '.')` };
  return `${namespace}/${name}`;
}

/** The options of gw run, as parseArgs reads them. */
const RUN_OPTIONS = {
  filename: { type: 'string', short: 'f', multiple: true },
  recursive: { type: 'boolean', short: 'R' },
  address: { type: 'string' },
  'admin-port': { type: 'string' },
  workers: { type: 'string' },
  'api-port': { type: 'string' },
  'api-address': { type: 'string' },
  'data-dir': { type: 'string' },
  kubeconfig: { type: 'string' },
  cluster: { type: 'boolean' },
  context: { type: 'string' },
  'read-only': { type: 'boolean' },
  gateway: { type: 'string' },
  provision: { type: 'boolean' },
  'admin-address': { type: 'string' },
  'admin-token-file': { type: 'string' },
  'log-format': { type: 'string' },
  'log-level': { type: 'string' },
  config: { type: 'string' },
  'demo-llm': { type: 'boolean' },
  'demo-llm-port': { type: 'string' },
  ...Object.fromEntries(
    RUN_SETTINGS.filter((setting) => setting.limit !== undefined).map(({ flag }) => [
      flag,
      { type: 'string' as const },
    ]),
  ),
} as const;

export function parseRunArgs(args: string[], env: NodeJS.ProcessEnv = process.env): RunOptions | string {
  try {
    const parsed = parseArgs({
      args,
      options: RUN_OPTIONS,
      strict: true,
      allowPositionals: false,
    });
    let values = parsed.values;
    if (values.config !== undefined) {
      // The file's settings as the flags they stand for; the flags given win.
      const file = readRunSettingsFile(values.config);
      if ('problem' in file) return file.problem;
      values = { ...file, ...values } as typeof values;
    }
    const paths = values.filename ?? [];
    const adminPort = parsePort(values['admin-port'], 15000, '--admin-port');
    if (typeof adminPort === 'string') return adminPort;
    const workers = parseWorkers(values.workers);
    if (typeof workers === 'string') return workers;
    const limits = parseLimits(values as Record<string, string | undefined>);
    if (typeof limits === 'string') return limits;
    const logFormat = parseLogFormat(values['log-format']);
    if (logFormat !== 'json' && logFormat !== 'text') return logFormat;
    const logFilter = parseLogLevel(values['log-level']);
    if (!(logFilter instanceof LogFilter)) return logFilter.problem;
    let gateway: string | undefined;
    if (values.gateway !== undefined) {
      const parsed = parseGatewayKey(values.gateway);
      if (typeof parsed !== 'string') return parsed.problem;
      gateway = parsed;
    }
    const options: RunOptions = {
      paths,
      recursive: values.recursive ?? false,
      address: values.address ?? '127.0.0.1',
      adminPort,
      adminAddress: values['admin-address'] ?? '127.0.0.1',
      workers,
      limits,
      logFormat,
      logFilter,
    };
    if (gateway !== undefined) options.gateway = gateway;
    const adminToken = readAdminToken(values['admin-token-file'], env);
    if ('problem' in adminToken) return adminToken.problem;
    if (adminToken.token !== undefined) options.adminToken = adminToken.token;
    if (values['demo-llm']) {
      const port = parsePort(values['demo-llm-port'], DEMO_LLM_DEFAULT_PORT, '--demo-llm-port');
      if (typeof port === 'string') return port;
      options.demoLlm = { port };
    } else if (values['demo-llm-port'] !== undefined) {
      return '--demo-llm-port applies to --demo-llm: give --demo-llm too';
    }
    const wantsKube = values.kubeconfig !== undefined || values.cluster === true;
    if (wantsKube) {
      if (values.kubeconfig !== undefined && values.cluster) return '--kubeconfig and --cluster: give one';
      const embedded = ['filename', 'api-port', 'api-address', 'data-dir'].filter(
        (flag) => values[flag as keyof typeof values] !== undefined,
      );
      if (embedded.length > 0)
        return `--kubeconfig/--cluster read objects from a Kubernetes API server; drop ${embedded.map((flag) => (flag === 'filename' ? '-f' : `--${flag}`)).join(', ')}`;
      // A process serving one Gateway would write the statuses of the others as not served by it.
      if (gateway !== undefined && !values['read-only'])
        return '--gateway with --kubeconfig/--cluster needs --read-only: the statuses are written by gw controller (or by a gw run serving every Gateway)';
      if (values.provision)
        return '--provision generates into the embedded API server; in a cluster gw controller provisions (drop --provision)';
      options.kube = { kubeconfig: values.kubeconfig, context: values.context, writeStatus: !values['read-only'] };
      return options;
    }
    if (values.context !== undefined || values['read-only'])
      return '--context and --read-only apply to --kubeconfig or --cluster';
    const wantsApi = paths.length === 0 || values['api-port'] !== undefined;
    if (wantsApi) {
      const port = parsePort(values['api-port'], DEFAULT_API_PORT, '--api-port');
      if (typeof port === 'string') return port;
      options.api = {
        port,
        address: values['api-address'] ?? '127.0.0.1',
        dataDir: values['data-dir'] ?? defaultDataDir(env),
      };
      if (values.provision) options.api.provision = true;
    } else if (values.provision) {
      return '--provision generates into the embedded API server: with -f, give --api-port too';
    } else if (values['api-address'] !== undefined || values['data-dir'] !== undefined) {
      return '--api-address and --data-dir apply to the API server: with -f, give --api-port too';
    }
    return options;
  } catch (error) {
    return argsErrorText(error, RUN_OPTIONS);
  }
}

/** What the command needs of a gateway, in one process or as the primary of workers. */
interface RunningGateway {
  readonly controller: Controller;
  readonly source: ConfigSourceKind;
  /** The API server source, when the API server runs. */
  readonly api: ApiSource | undefined;
  readonly metrics: MetricsSource;
  /** Beyond the command's own readiness (started, not stopping). */
  ready(): boolean;
  /** Whether any listener port is bound. */
  serving(): boolean;
  /** The listener ports that could not be bound, with the Gateway and why. */
  unboundPorts(): ReadonlyMap<number, UnboundPort>;
  /** The backends' live state by process (model health, evictions; each worker keeps its own). */
  healthReports(): Promise<{ worker: number; reports: PlacedHealthReport[] }[]>;
  start(): Promise<void>;
  stop(): Promise<void>;
}

interface GatewayCallbacks {
  log: LogFunction;
  onLoad: (report: LoadReport) => void;
  onApplied: (update: ConfigUpdate, unbound: ReadonlyMap<number, UnboundPort>) => void;
  /** With --gateway: why that Gateway is not served, or undefined once it is. */
  onServedGateway: (problem: string | undefined) => void;
}

/**
 * gw run --gateway is ready once its Gateway is served: the data plane applied a configuration of
 * it whose every listener port is bound. A Gateway that does not exist yet, or a port that cannot
 * be bound, keeps the pod out of its Service's endpoints.
 */
export function servesGateway(
  configs: ReadonlyMap<string, DataPlaneConfig>,
  unbound: ReadonlyMap<number, UnboundPort>,
  gateway: string,
): boolean {
  const config = configs.get(gateway);
  return config !== undefined && config.listeners.length > 0 && config.listeners.every((l) => !unbound.has(l.port));
}

function createGateway(
  options: RunOptions,
  callbacks: GatewayCallbacks,
  mesh: MeshTransport | undefined,
): RunningGateway {
  const api = options.api && { ...options.api, gwVersion: gwVersion() };
  const { onServedGateway, ...rest } = callbacks;
  const common = {
    ...(options.gateway !== undefined && { servedGateway: options.gateway, onServedGateway }),
    paths: options.paths,
    recursive: options.recursive,
    address: options.address,
    limits: options.limits,
    api,
    kube: options.kube,
    ...rest,
  };
  if (options.workers > 1) {
    const cluster = new ClusterGateway({
      ...common,
      workers: options.workers,
      logFormat: options.logFormat,
      logFilter: options.logFilter,
    });
    return {
      controller: cluster.controller,
      source: cluster.source,
      api: cluster.source instanceof ApiSource ? cluster.source : undefined,
      metrics: { render: () => cluster.renderMetrics() },
      ready: () => cluster.ready(),
      serving: () => cluster.serving(),
      unboundPorts: () => cluster.unboundPorts(),
      healthReports: () => cluster.healthReports(),
      start: () => cluster.start(),
      stop: () => cluster.stop(),
    };
  }
  // Workers build their own mesh transport from the same environment (cluster-worker.ts).
  const local = new LocalGateway({ ...common, mesh, telemetry: new Telemetry({ logFormat: options.logFormat }) });
  return {
    controller: local.controller,
    source: local.source,
    api: local.api,
    metrics: local.dataPlane.telemetry.metrics,
    ready: () => local.caughtUp(),
    serving: () => local.serving(),
    unboundPorts: () => local.dataPlane.unboundPorts,
    healthReports: async () => [{ worker: 0, reports: local.dataPlane.healthReports() }],
    start: () => local.start(),
    stop: () => local.stop(),
  };
}

/** What the web UI reads the gateway through; which source decides whether it may edit. */
function uiSources(gateway: RunningGateway, options: RunOptions): UiSources {
  const source = objectSource({ api: gateway.api?.api, kube: options.kube !== undefined, paths: options.paths });
  return {
    controller: gateway.controller,
    source,
    listenAddress: options.address,
    unboundPorts: () => gateway.unboundPorts(),
    healthReports: () => gateway.healthReports(),
  };
}

export async function runCommand(args: string[], io: Io): Promise<number> {
  const options = parseRunArgs(args);
  if (typeof options === 'string') {
    io.stderr(`gw run: ${options}\n${RUN_USAGE}`);
    return 2;
  }
  const log = lineLogger(options.logFormat, 'run', io.stderr, options.logFilter);
  // A file named with -f that is not there is a mistake, not a gateway waiting for it.
  const missing = resolveFiles(options.paths).problems;
  if (missing.length > 0) {
    for (const problem of missing) log(`gw run: -f ${problem.file}: ${problem.message}`, 'error');
    return 1;
  }
  // In a provisioned pod of a Gateway in the mesh (GwParameters mesh): the workload certificate
  // from the mesh CA, for HBONE to the Services in the ambient mesh (decision 0035).
  const mesh = meshTransportFromEnv(process.env, { log: (level, message) => log(message, level) });
  if (typeof mesh === 'string') {
    log(`gw run: mesh: ${mesh}`, 'error');
    return 1;
  }
  let ready = false;
  let gateway: RunningGateway;
  try {
    gateway = createGateway(
      options,
      {
        log,
        onLoad: loadReporter(log),
        onApplied: applyReporter(log),
        onServedGateway: (problem) => {
          if (problem !== undefined) log(problem, 'warn');
        },
      },
      mesh,
    );
  } catch (error) {
    // Preparing the API server's data directory (certificates, database) failed.
    log(`gw run: ${(error as Error).message}`, 'error');
    return 1;
  }
  // Listening for the stop signals before gw says anything a supervisor (or a test) may act on: a
  // SIGTERM sent as soon as gw has said it serves must stop it gracefully, not kill it. One sent
  // while it starts stops it once it has started.
  let admin: AdminServer | undefined;
  let stop = () => {};
  const stopped = new Promise<void>((resolve) => {
    stop = resolve;
  });
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
  let demoLlm: DemoLlm | undefined;
  const fail = async (message: string) => {
    process.off('SIGINT', stop);
    process.off('SIGTERM', stop);
    log(message, 'error');
    await admin?.close();
    await demoLlm?.close();
    await gateway.stop();
    mesh?.stop();
    return 1;
  };
  // The admin endpoints first: health probes and metrics are what an operator watches gw by, so a
  // port that cannot be bound for them ends gw run before any listener serves (docs/cli.md).
  if (options.adminPort !== 0) {
    const ui = createAdminUi({
      sources: uiSources(gateway, options),
      adminAddress: options.adminAddress,
      token: options.adminToken,
    });
    try {
      admin = await startAdminServer({
        port: options.adminPort,
        host: options.adminAddress,
        ready: () =>
          ready &&
          gateway.ready() &&
          (options.gateway === undefined ||
            servesGateway(gateway.controller.currentConfigs, gateway.unboundPorts(), options.gateway)),
        metrics: gateway.metrics,
        routes: ui,
      });
    } catch (error) {
      const reason = bindFailureText(error as NodeJS.ErrnoException, options.adminPort, options.adminAddress);
      return fail(
        `gw run: admin endpoints (/metrics, /healthz): ${reason}; choose another with --admin-port PORT (0 turns them off)`,
      );
    }
    log(`admin endpoints on http://${admin.host}:${admin.port} (/metrics, /healthz/ready, /healthz/live)`);
    if (ui.access === 'refused')
      log(
        `web UI off: the admin listener is on ${admin.host}, not loopback, and no admin token is set (--admin-token-file FILE or GW_ADMIN_TOKEN; docs/ui.md)`,
        'warn',
      );
    else
      log(
        `web UI on http://${admin.host.includes(':') ? `[${admin.host}]` : admin.host}:${admin.port}/ui/${ui.access === 'token' ? ' (admin token required)' : ''}`,
      );
  }
  // The demo LLM before the gateway: the quickstart's first request must find it.
  if (options.demoLlm) {
    try {
      demoLlm = await startDemoLlm({ port: options.demoLlm.port });
    } catch (error) {
      return fail(
        `gw run: --demo-llm: ${(error as Error).message}; give another --demo-llm-port and the same port in the GwBackend that points at it`,
      );
    }
    log(
      `demo LLM (an echo, not a model) serving the OpenAI API on ${demoLlm.baseUrl}: examples/quickstart.yaml's GwBackend demo-llm points at it; docs/guide/providers.md connects a real provider`,
    );
  }
  if (mesh && options.workers === 1) {
    mesh.start();
    log(`in the mesh as ${mesh.certificates.identity}: workload certificate from ${mesh.settings.caAddress.origin}`);
  }
  try {
    await gateway.start();
  } catch (error) {
    return fail(`gw run: ${(error as Error).message}`);
  }
  const listeners = [...gateway.controller.currentConfigs.values()].reduce(
    (sum, config) => sum + config.listeners.length,
    0,
  );
  if (listeners > 0 && !gateway.serving()) {
    return fail('gw run: nothing can be served: no listener port could be bound (see above)');
  }
  ready = true;
  if (gateway.api) {
    const { url, kubeconfigPath } = gateway.api.api;
    log(`API server on ${url}; use it with: export KUBECONFIG=${kubeconfigPath}`);
  }
  if (gateway.source instanceof KubeSource) {
    const readOnly = options.kube?.writeStatus === false ? ' (read-only: statuses are left to gw controller)' : '';
    log(`objects read from ${gateway.source.store.server}${readOnly}`);
  }
  if (options.workers > 1) log(`serving with ${options.workers} worker processes`);
  if (options.gateway !== undefined) log(`serving Gateway ${options.gateway} only (--gateway)`);
  else if (gateway.controller.currentConfigs.size === 0) {
    const where = options.kube
      ? 'in the cluster'
      : gateway.api && options.paths.length === 0
        ? 'yet (kubectl apply one)'
        : 'in the files';
    log(`no Gateway of GatewayClass controllerName gw.dev/gateway-controller ${where}: nothing to serve yet`);
  }
  // Signal handlers do not keep Node's event loop alive: with nothing else open (every file
  // invalid, no listener yet) Node would exit 13 with an unsettled await instead of waiting.
  const keepAlive = setInterval(() => undefined, 2 ** 30);
  await stopped;
  clearInterval(keepAlive);
  log('stopping');
  ready = false;
  await admin?.close();
  await gateway.stop();
  mesh?.stop();
  await demoLlm?.close();
  return 0;
}
