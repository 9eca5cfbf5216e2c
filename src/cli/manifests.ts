// gw manifests -f FILE|DIR: every object gw provisions for the Gateways of its GatewayClass, as
// multi-document YAML for GitOps — from the controller's provisioning plan (planProvisioning), so
// what is printed is what `gw controller` would apply.
// The files are loaded and admitted as gw validate does (admitLoaded), which keeps a Gateway's
// metadata.uid as written: the owner reference must name the Gateway the cluster has.
import { randomBytes } from 'node:crypto';
import { parseArgs } from 'node:util';
import { stringify } from 'yaml';
import { loadResources } from '../api/load/documents.ts';
import { translateGatewayApi } from '../controller/gateway-api/index.ts';
import { planProvisioning } from '../controller/provisioning/plan.ts';
import { snapshotOf } from '../controller/snapshot.ts';
import { argsErrorText } from './args.ts';
import type { Io } from './io.ts';
import { admitLoaded } from './validate.ts';
import { gwVersion } from './version.ts';

export const MANIFESTS_USAGE = `usage: gw manifests -f FILE|DIR [-f ...] [-R]
  Prints every object gw provisions for each Gateway of its GatewayClass (ServiceAccount and its
  ClusterRoleBinding to gw-proxy, session-key Secret, Service, Deployment or DaemonSet,
  PodDisruptionBudget, HorizontalPodAutoscaler),
  its GwParameters applied, as multi-document YAML; exit 1 when a file, a parametersRef or a
  GwParameters field is wrong (each problem named on standard error; that Gateway prints nothing).
  -f, --filename     a file or a directory of resources; repeatable
  -R, --recursive    read directories recursively
`;

const MANIFESTS_OPTIONS = {
  filename: { type: 'string', short: 'f', multiple: true },
  recursive: { type: 'boolean', short: 'R' },
} as const;

export function manifestsCommand(args: string[], io: Io): number {
  let values: { filename?: string[]; recursive?: boolean };
  try {
    ({ values } = parseArgs({ args, options: MANIFESTS_OPTIONS, allowPositionals: false }));
  } catch (error) {
    io.stderr(`gw manifests: ${argsErrorText(error, MANIFESTS_OPTIONS)}\n${MANIFESTS_USAGE}`);
    return 2;
  }
  const files = values.filename ?? [];
  if (files.length === 0) {
    io.stderr(`gw manifests: name the resources with -f FILE|DIR\n${MANIFESTS_USAGE}`);
    return 2;
  }
  const loaded = loadResources(files, { recursive: values.recursive ?? false, stdin: io.readStdin });
  const { stored, failures } = admitLoaded(loaded, io);
  // With a document that does not load or admit, a Gateway or its parameters may be missing:
  // print nothing rather than manifests that silently lack them.
  if (failures > 0) {
    io.stderr(
      `gw manifests: ${failures} invalid of ${loaded.documents.length + loaded.problems.length}: nothing printed\n`,
    );
    return 1;
  }
  const snapshot = snapshotOf(stored);
  // The controller's plan (src/controller/provisioning/plan.ts), with the listeners of the
  // ListenerSets merged into each Gateway as the controller sees them.
  const plan = planProvisioning(snapshot, translateGatewayApi(snapshot, ''), {
    version: gwVersion(),
    randomBytes,
    absent: 'is not among the given objects',
  });
  const documents: string[] = [];
  let failed = false;
  const gateways = plan.gateways.size;
  for (const [key, provisioning] of plan.gateways) {
    if (!provisioning.ok) {
      failed = true;
      for (const line of provisioning.problems) io.stderr(`Gateway ${key}: ${line}\n`);
      continue;
    }
    // A Gateway from a file has no uid; a made-up one would make the cluster's garbage collector
    // delete the objects (their owner would not exist), so they are printed unowned instead.
    const unowned = snapshot.gateways.get(key)?.metadata.uid === undefined;
    if (unowned)
      io.stderr(
        `Gateway ${key}: no metadata.uid in the files: its objects are printed without ownerReferences (deleting the Gateway will not delete them)\n`,
      );
    for (const object of provisioning.objects) {
      if (unowned) delete (object.metadata as { ownerReferences?: unknown }).ownerReferences;
      documents.push(stringify(object, { lineWidth: 0 }));
    }
  }
  if (gateways === 0) io.stderr('gw manifests: no Gateway of a GatewayClass of gw in the given files\n');
  io.stdout(documents.join('---\n'));
  return failed ? 1 : 0;
}
