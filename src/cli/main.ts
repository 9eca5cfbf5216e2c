// gw's command line: one file per command; this file only dispatches.
import { readFileSync } from 'node:fs';
import { controllerCommand } from './controller.ts';
import { crdsCommand } from './crds.ts';
import { explainCommand } from './explain.ts';
import { idpCommand } from './idp-setup.ts';
import type { Io } from './io.ts';
import { runCommand } from './run.ts';
import { statusCommand } from './status.ts';
import { validateCommand } from './validate.ts';

const processIo: Io = {
  stdout: (text) => process.stdout.write(text),
  stderr: (text) => process.stderr.write(text),
  readStdin: () => (process.stdin.isTTY ? '' : readFileSync(0, 'utf8')),
};

const USAGE = `gw — a gateway for AI traffic, configured by Kubernetes-style resources

Usage:
  gw run [-f FILE|DIR [-R]] [--api-port PORT] [--data-dir DIR] [--address ADDR]
         [--kubeconfig FILE|--cluster [--read-only]] [--admin-port PORT] [--workers N|auto]
                       serve Gateways: objects kept in the embedded Kubernetes API server
                       (manage them with kubectl), or files with -f, reloading on change,
                       or read from a Kubernetes cluster with --kubeconfig
  gw controller [--kubeconfig FILE] [--context NAME] [--admin-port PORT]
                       the control plane alone against a Kubernetes API server: translate
                       the objects and write their statuses; serves no traffic
  gw validate -f FILE|DIR|- [-f ...] [-R] [--show-defaults] [-o yaml|json]
                       check resources as the API server would; exit 1 when any is invalid
  gw crds [--output-dir DIR]
                       print the CustomResourceDefinitions of the gw.dev kinds
  gw status -f FILE|DIR [-R]
                       every object's conditions, as the controller writes them
  gw explain -f FILE|DIR route NAMESPACE/NAME[/RULE]
  gw explain -f FILE|DIR backend NAMESPACE/NAME[/SECTION]
                       the effective frontend, traffic and backend policy there, field by
                       field, with the object that set each field and what it overrode
  gw idp setup [--idp-url URL --realm NAME --mcp-resource-url URL --user ... | --config FILE]
               [--dry-run] [--allow-anonymous-dcr]
                       prepare a Keycloak realm for MCP authentication (safe to re-run) and
                       print the GwPolicy that uses it; gw idp setup --help lists the settings
  gw help              this text
`;

const COMMANDS: Record<string, (args: string[], io: Io) => Promise<number> | number> = {
  run: runCommand,
  controller: controllerCommand,
  validate: validateCommand,
  crds: crdsCommand,
  status: statusCommand,
  explain: explainCommand,
  idp: idpCommand,
};

export async function main(argv: string[], io: Io = processIo): Promise<number> {
  const [command, ...rest] = argv;
  if (command === undefined || command === 'help' || command === '--help' || command === '-h') {
    io.stdout(USAGE);
    return command === undefined ? 2 : 0;
  }
  const run = COMMANDS[command];
  if (!run) {
    io.stderr(`gw: unknown command "${command}"\n\n${USAGE}`);
    return 2;
  }
  return run(rest, io);
}
