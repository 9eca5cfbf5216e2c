// gw controller: the control plane alone, against a Kubernetes API server (a cluster with the
// CRDs from `gw crds` installed, or a gw's embedded API server). It reads the objects through
// client-node informers, translates them as `gw run` does, writes every status, and provisions
// each gw Gateway's data plane (Deployment, Service, ... from its GwParameters; --no-provision
// leaves that to something else, e.g. `gw manifests` and GitOps); it serves no traffic. Proxy replicas read the same objects themselves (`gw run --kubeconfig ...
// --read-only`) until configuration is streamed to them (docs/control-plane.md, "In a cluster").
import { randomBytes } from 'node:crypto';
import { parseArgs } from 'node:util';
import { ControllerMetrics } from '../controller/metrics.ts';
import { refusalLines } from '../controller/refusals.ts';
import { type AdminServer, startAdminServer } from '../dataplane/telemetry/admin-server.ts';
import { KubeSource } from '../run/kube-source.ts';
import { parsePort } from '../run/run-settings.ts';
import { LogFilter, parseLogLevel } from '../util/log-filter.ts';
import { type LogFormat, lineLogger, parseLogFormat } from '../util/log-line.ts';
import { argsErrorText } from './args.ts';
import type { Io } from './io.ts';
import { gwVersion } from './version.ts';

export const CONTROLLER_USAGE = `usage: gw controller [--kubeconfig FILE] [--context NAME] [--admin-port PORT] [--admin-address ADDR]
                     [--log-format json|text] [--log-level FILTER] [--no-provision]
  --kubeconfig     the API server and credentials (default: $KUBECONFIG, else ~/.kube/config,
                   else the pod's service account)
  --context        a context of the kubeconfig other than its current one
  --admin-port     port of /metrics, /healthz/ready (200 once every kind is listed), /healthz/live
                   (default 15000; 0 disables)
  --admin-address  address of the admin endpoints (default 127.0.0.1; 0.0.0.0 in a pod, for probes)
  --log-format     json (default): one JSON object per line on standard error; text: for a terminal
  --log-level      which messages are written, in RUST_LOG's per-module syntax: info (default),
                   warn, debug, kube=debug, ... Modules: controller, kube (docs/telemetry.md)
  --no-provision   write statuses only: do not generate the Gateways' data-plane objects
                   (Deployment, Service, ...; docs/provisioning.md), e.g. when gw manifests feeds GitOps
`;

const CONTROLLER_OPTIONS = {
  kubeconfig: { type: 'string' },
  context: { type: 'string' },
  'admin-port': { type: 'string' },
  'admin-address': { type: 'string' },
  'log-format': { type: 'string' },
  'log-level': { type: 'string' },
  provision: { type: 'boolean', default: true },
} as const;

export interface ControllerOptions {
  kubeconfig?: string;
  context?: string;
  adminPort: number;
  adminAddress: string;
  logFormat: LogFormat;
  logFilter: LogFilter;
  /** Generate each gw Gateway's data-plane objects (default; --no-provision turns it off). */
  provision: boolean;
}

export function parseControllerArgs(args: string[]): ControllerOptions | string {
  try {
    const { values } = parseArgs({
      args,
      options: CONTROLLER_OPTIONS,
      strict: true,
      allowPositionals: false,
      allowNegative: true,
    });
    const adminPort = parsePort(values['admin-port'], 15000, '--admin-port');
    if (typeof adminPort === 'string') return adminPort;
    const logFormat = parseLogFormat(values['log-format']);
    if (logFormat !== 'json' && logFormat !== 'text') return logFormat;
    const logFilter = parseLogLevel(values['log-level']);
    if (!(logFilter instanceof LogFilter)) return logFilter.problem;
    return {
      kubeconfig: values.kubeconfig,
      context: values.context,
      adminPort,
      adminAddress: values['admin-address'] ?? '127.0.0.1',
      logFormat,
      logFilter,
      provision: values.provision,
    };
  } catch (error) {
    return argsErrorText(error, CONTROLLER_OPTIONS);
  }
}

export async function controllerCommand(args: string[], io: Io): Promise<number> {
  const options = parseControllerArgs(args);
  if (typeof options === 'string') {
    io.stderr(`gw controller: ${options}\n${CONTROLLER_USAGE}`);
    return 2;
  }
  const log = lineLogger(options.logFormat, 'controller', io.stderr, options.logFilter);
  const metrics = new ControllerMetrics();
  let source: KubeSource;
  try {
    source = new KubeSource(
      {
        kube: { kubeconfig: options.kubeconfig, context: options.context, writeStatus: true },
        log,
        onReconcile: (report) => metrics.observe(report),
        ...(options.provision && { provision: { version: gwVersion(), randomBytes, log } }),
      },
      (update) => {
        for (const [key, config] of update.changed) {
          log(`Gateway ${key}: configuration ${config.revision} (${config.listeners.length} listeners)`);
          // What the proxies will refuse (and answer 500), said once per configuration here too.
          for (const line of refusalLines(key, config)) log(`Gateway ${key}: ${line}`, 'warn');
        }
        for (const key of update.removed) log(`Gateway ${key}: no configuration (no longer a gw Gateway)`);
      },
    );
  } catch (error) {
    log(`gw controller: ${(error as Error).message}`, 'error');
    return 1;
  }
  let stopping = false;
  let admin: AdminServer | undefined;
  if (options.adminPort !== 0) {
    try {
      admin = await startAdminServer({
        port: options.adminPort,
        host: options.adminAddress,
        ready: () => !stopping && source.ready(),
        metrics: { render: () => metrics.render(source.store.problems().length, source.ready()) },
      });
      log(`admin endpoints on http://${admin.host}:${admin.port} (/metrics, /healthz/ready, /healthz/live)`);
    } catch (error) {
      log(`gw controller: admin endpoints: ${(error as Error).message}`, 'error');
      return 1;
    }
  }
  const stopped = new Promise<void>((resolve) => {
    process.once('SIGINT', resolve);
    process.once('SIGTERM', resolve);
  });
  log(`reading ${source.store.server}`);
  // Listing waits for the API server as long as it takes; a signal meanwhile still stops.
  await Promise.race([source.start().then(() => log('every kind listed; reconciling')), stopped]);
  await stopped;
  stopping = true;
  log('stopping');
  await admin?.close();
  await source.stop();
  return 0;
}
