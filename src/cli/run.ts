// gw run -f FILE|DIR: serve the Gateways of the files, reloading them on change. An invalid
// file never takes the gateway down: the last good objects keep serving and the problem is
// logged with the file and field path.
import { parseArgs } from 'node:util';
import { type AdminServer, startAdminServer } from '../dataplane/telemetry/admin-server.ts';
import { LocalGateway } from '../run/local-gateway.ts';
import type { Io } from './main.ts';

export const RUN_USAGE = `usage: gw run -f FILE|DIR [-f ...] [-R] [--address ADDR] [--admin-port PORT]
  -f, --filename     resources to serve (files, directories, repeatable)
  -R, --recursive    read directories recursively
  --address          address the listeners bind (default 127.0.0.1; 0.0.0.0 for all interfaces)
  --admin-port       port of the admin endpoints /metrics, /healthz/ready, /healthz/live
                     (default 15000, bound to 127.0.0.1; 0 disables)
`;

export interface RunOptions {
  paths: string[];
  recursive: boolean;
  address: string;
  adminPort: number;
}

export function parseRunArgs(args: string[]): RunOptions | string {
  try {
    const { values } = parseArgs({
      args,
      options: {
        filename: { type: 'string', short: 'f', multiple: true },
        recursive: { type: 'boolean', short: 'R' },
        address: { type: 'string' },
        'admin-port': { type: 'string' },
      },
      strict: true,
      allowPositionals: false,
    });
    if (!values.filename || values.filename.length === 0) return 'gw run needs -f FILE|DIR';
    const adminPort = Number(values['admin-port'] ?? 15000);
    if (!Number.isInteger(adminPort) || adminPort < 0 || adminPort > 65535)
      return `--admin-port must be a port number, not "${values['admin-port']}"`;
    return {
      paths: values.filename,
      recursive: values.recursive ?? false,
      address: values.address ?? '127.0.0.1',
      adminPort,
    };
  } catch (error) {
    return (error as Error).message;
  }
}

export async function runCommand(args: string[], io: Io): Promise<number> {
  const options = parseRunArgs(args);
  if (typeof options === 'string') {
    io.stderr(`gw run: ${options}\n${RUN_USAGE}`);
    return 2;
  }
  const log = (line: string) => io.stderr(`${new Date().toISOString()} ${line}\n`);
  let lastProblems = '';
  let ready = false;
  const gateway = new LocalGateway({
    paths: options.paths,
    recursive: options.recursive,
    address: options.address,
    log,
    onLoad: (report) => {
      const text = report.problems.map((problem) => problem.message).join('\n');
      if (text === lastProblems) return;
      lastProblems = text;
      if (text) log(`configuration problems (the last good objects keep serving):\n${text}`);
      else if (report.changes > 0) log('configuration loaded');
    },
    onApplied: (update) => {
      for (const [key, config] of update.changed) {
        const ports = config.listeners.map((listener) => `${listener.name} ${listener.protocol} :${listener.port}`);
        log(`Gateway ${key}: serving ${ports.length > 0 ? ports.join(', ') : 'no listeners'}`);
      }
      for (const key of update.removed) log(`Gateway ${key}: no longer served`);
    },
  });
  try {
    await gateway.start();
  } catch (error) {
    io.stderr(`gw run: ${(error as Error).message}\n`);
    await gateway.stop();
    return 1;
  }
  let admin: AdminServer | undefined;
  if (options.adminPort !== 0) {
    try {
      admin = await startAdminServer({
        port: options.adminPort,
        ready: () => ready,
        metrics: gateway.dataPlane.telemetry.metrics,
      });
      log(`admin endpoints on http://${admin.host}:${admin.port} (/metrics, /healthz/ready, /healthz/live)`);
    } catch (error) {
      log(`admin endpoints not served: ${(error as Error).message}`);
    }
  }
  ready = true;
  if (gateway.controller.currentConfigs.size === 0)
    log('no Gateway of GatewayClass controllerName gw.dev/gateway-controller in the files: nothing to serve yet');
  await new Promise<void>((resolve) => {
    const stop = () => resolve();
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
  });
  log('stopping');
  ready = false;
  await admin?.close();
  await gateway.stop();
  return 0;
}
