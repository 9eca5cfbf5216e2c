// gw's command line: one file per command; this file only dispatches.
import { readFileSync } from 'node:fs';
import { didYouMean } from '../util/did-you-mean.ts';
import { asksForHelp } from './args.ts';
import { CONTROLLER_USAGE, controllerCommand } from './controller.ts';
import { CRDS_USAGE, crdsCommand } from './crds.ts';
import { EXPLAIN_USAGE, explainCommand } from './explain.ts';
import { IDP_USAGE, idpCommand } from './idp-setup.ts';
import { INSTALL_MANIFESTS_USAGE, installManifestsCommand } from './install-manifests.ts';
import type { Io } from './io.ts';
import { MANIFESTS_USAGE, manifestsCommand } from './manifests.ts';
import { RUN_USAGE, runCommand } from './run.ts';
import { STATUS_USAGE, statusCommand } from './status.ts';
import { VALIDATE_USAGE, validateCommand } from './validate.ts';
import { gwVersion } from './version.ts';

const processIo: Io = {
  stdout: (text) => process.stdout.write(text),
  stderr: (text) => process.stderr.write(text),
  readStdin: () => (process.stdin.isTTY ? '' : readFileSync(0, 'utf8')),
};

const USAGE = `gw — a gateway for AI traffic, configured by Kubernetes-style resources

Usage:
  gw run [-f FILE|DIR [-R]] [--api-port PORT] [--data-dir DIR] [--address ADDR]
         [--kubeconfig FILE|--cluster [--read-only]] [--admin-port PORT] [--workers N|auto]
         [--demo-llm [--demo-llm-port PORT]]
                       serve Gateways: objects kept in the embedded Kubernetes API server
                       (manage them with kubectl), or files with -f, reloading on change,
                       or read from a Kubernetes cluster with --kubeconfig; --demo-llm also
                       starts gw's demo LLM for the quickstart (an echo, not a model)
  gw controller [--kubeconfig FILE] [--context NAME] [--admin-port PORT]
                       the control plane alone against a Kubernetes API server: translate
                       the objects and write their statuses; serves no traffic
  gw validate -f FILE|DIR|- [-f ...] [-R] [--show-defaults] [-o yaml|json]
                       check resources as the API server would; exit 1 when any is invalid
  gw manifests -f FILE|DIR [-R]
                       print the objects gw provisions for each Gateway (Deployment, Service,
                       ...), its GwParameters applied, as multi-document YAML for GitOps
  gw crds [--gateway-api] [--output-dir DIR]
                       print the CustomResourceDefinitions of the gw.dev kinds (or, with
                       --gateway-api, of the Gateway API kinds gw reads)
  gw install-manifests [--namespace NAME] [--image REFERENCE]
                       print what installs gw in a cluster: CRDs, the controller and its
                       RBAC, the data planes' ClusterRole, the GatewayClass
  gw status -f FILE|DIR [-R] | --kubeconfig FILE [--context NAME]
                       every object's conditions, as the controller writes them (for files)
                       or wrote them (a running gw's API server, a cluster)
  gw explain (-f FILE|DIR | --kubeconfig FILE) route NAMESPACE/NAME[/RULE]
  gw explain (-f FILE|DIR | --kubeconfig FILE) backend NAMESPACE/NAME[/SECTION]
                       the effective frontend, traffic and backend policy there, field by
                       field, with the object that set each field and what it overrode
  gw idp setup [--idp-url URL --realm NAME --mcp-resource-url URL --user ... | --config FILE]
               [--dry-run] [--allow-anonymous-dcr]
                       prepare a Keycloak realm for MCP authentication (safe to re-run) and
                       print the GwPolicy that uses it; gw idp setup --help lists the settings
  gw version           print gw's version (also gw --version)
  gw help [COMMAND]    this text, or a command's (also gw COMMAND --help)
`;

interface Command {
  run: (args: string[], io: Io) => Promise<number> | number;
  /** Printed on standard output by `gw COMMAND --help` and `gw help COMMAND`. */
  usage: string;
}

const COMMANDS: Record<string, Command> = {
  run: { run: runCommand, usage: RUN_USAGE },
  controller: { run: controllerCommand, usage: CONTROLLER_USAGE },
  validate: { run: validateCommand, usage: VALIDATE_USAGE },
  manifests: { run: manifestsCommand, usage: MANIFESTS_USAGE },
  crds: { run: crdsCommand, usage: CRDS_USAGE },
  'install-manifests': { run: installManifestsCommand, usage: INSTALL_MANIFESTS_USAGE },
  status: { run: statusCommand, usage: STATUS_USAGE },
  explain: { run: explainCommand, usage: EXPLAIN_USAGE },
  idp: { run: idpCommand, usage: IDP_USAGE },
};

/** The command names a user may type, for "did you mean". */
const NAMES = [...Object.keys(COMMANDS), 'help', 'version'];

export async function main(argv: string[], io: Io = processIo): Promise<number> {
  const [command, ...rest] = argv;
  if (command === undefined) {
    io.stderr(USAGE);
    return 2;
  }
  if (command === '--version' || command === 'version') {
    io.stdout(`gw ${gwVersion()}\n`);
    return 0;
  }
  if (command === 'help' || command === '--help' || command === '-h') {
    const topic = rest[0] === undefined ? undefined : COMMANDS[rest[0]];
    if (rest[0] !== undefined && !topic) return unknownCommand(rest[0], io);
    io.stdout(topic?.usage ?? USAGE);
    return 0;
  }
  const found = COMMANDS[command];
  if (!found) return unknownCommand(command, io);
  if (asksForHelp(rest)) {
    io.stdout(found.usage);
    return 0;
  }
  return found.run(rest, io);
}

function unknownCommand(command: string, io: Io): number {
  const hint = didYouMean(command, NAMES, (name) => `"gw ${name}"`);
  io.stderr(`gw: unknown command "${command}"${hint ? `; ${hint}` : ''}\n\n${USAGE}`);
  return 2;
}
