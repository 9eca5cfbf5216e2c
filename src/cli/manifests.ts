// gw manifests -f FILE|DIR: every object gw provisions for the Gateways of its GatewayClass, as
// multi-document YAML for GitOps — from gatewayManifests(), the code the controller will call.
// The files are loaded and admitted as gw validate does (admitLoaded), which keeps a Gateway's
// metadata.uid as written: the owner reference must name the Gateway the cluster has.
import { randomBytes } from 'node:crypto';
import { parseArgs } from 'node:util';
import { stringify } from 'yaml';
import type { GatewaySpec } from '../api/kinds/gateway-api/gateway.ts';
import type { GatewayClassSpec } from '../api/kinds/gateway-api/gateway-class.ts';
import { loadResources } from '../api/load/documents.ts';
import type { GwParametersSpec } from '../api/types/provisioning.ts';
import type { KubeObject } from '../api/validate/admission.ts';
import { gwClassOf } from '../controller/gateway-api/gateway-classes.ts';
import { type Snapshot, snapshotOf } from '../controller/snapshot.ts';
import { gatewayManifests, type ManifestProblem } from '../provisioning/manifests.ts';
import type { ParametersLevel } from '../provisioning/overlay.ts';
import type { ProvisionedObject } from '../provisioning/provision.ts';
import { objectKey } from '../store/store.ts';
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

/** A parametersRef gw reads: a GwParameters. */
const PARAMETERS_GROUP = 'gw.dev';
const PARAMETERS_KIND = 'GwParameters';

type Resolved = { ok: true; level?: ParametersLevel } | { ok: false; problem: string };

/**
 * The GwParameters a parametersRef names, among the loaded objects. `where` names the reference
 * (`GatewayClass gw parametersRef` ...) for the message; no reference is no parameters.
 */
function resolveParameters(
  snapshot: Snapshot,
  ref: { group: string; kind: string; name: string; namespace?: string } | undefined,
  namespace: string | undefined,
  where: string,
): Resolved {
  if (ref === undefined) return { ok: true };
  if (ref.group !== PARAMETERS_GROUP || ref.kind !== PARAMETERS_KIND)
    return {
      ok: false,
      problem: `${where}: refers to ${ref.kind} of group "${ref.group}"; gw reads only ${PARAMETERS_KIND} (group ${PARAMETERS_GROUP})`,
    };
  if (namespace === undefined)
    return {
      ok: false,
      problem: `${where}.namespace: required: ${PARAMETERS_KIND} is namespaced; name the namespace of ${ref.name}`,
    };
  const key = `${namespace}/${ref.name}`;
  const parameters = snapshot.parameters.get(key);
  if (parameters === undefined)
    return { ok: false, problem: `${where}: ${PARAMETERS_KIND} ${key} is not among the given objects` };
  return { ok: true, level: { parameters: key, spec: (parameters.spec ?? {}) as GwParametersSpec } };
}

/**
 * A problem as a line naming the Gateway, the GwParameters and the field. A typed field's problem
 * is of the merged fields, so it names every level that sets the field.
 */
function problemLine(gateway: string, problem: ManifestProblem, levels: (ParametersLevel | undefined)[]): string {
  const field = /^spec\.(\w+)/.exec(problem.field)?.[1];
  const sources =
    problem.parameters !== undefined
      ? [problem.parameters]
      : levels.flatMap((level) =>
          level !== undefined && field !== undefined && field in level.spec ? [level.parameters] : [],
        );
  const named = sources.map((source) => `${PARAMETERS_KIND} ${source}: `).join('');
  return `Gateway ${gateway}: ${named}${problem.field}: ${problem.message}`;
}

/** The objects of one Gateway, or the lines that say why there are none. */
function gatewayObjects(
  snapshot: Snapshot,
  gateway: KubeObject,
  gatewayClass: KubeObject,
): { ok: true; objects: ProvisionedObject[] } | { ok: false; problems: string[] } {
  const key = objectKey(gateway);
  const spec = gateway.spec as GatewaySpec;
  const classSpec = gatewayClass.spec as GatewayClassSpec;
  const classRef = classSpec.parametersRef;
  const byClass = resolveParameters(
    snapshot,
    classRef,
    classRef?.namespace,
    `GatewayClass ${gatewayClass.metadata.name} spec.parametersRef`,
  );
  const byGateway = resolveParameters(
    snapshot,
    spec.infrastructure?.parametersRef,
    gateway.metadata.namespace,
    `Gateway ${key} spec.infrastructure.parametersRef`,
  );
  const refProblems = [byClass, byGateway].flatMap((resolved) => (resolved.ok ? [] : [resolved.problem]));
  if (refProblems.length > 0) return { ok: false, problems: refProblems };
  // A Gateway from a file has no uid; a made-up one would make the cluster's garbage collector
  // delete the objects (their owner would not exist), so they are printed unowned instead.
  const uid = gateway.metadata.uid;
  const result = gatewayManifests({
    gateway: {
      name: gateway.metadata.name!,
      namespace: gateway.metadata.namespace!,
      uid: uid ?? '',
      gatewayClassName: spec.gatewayClassName,
      listeners: spec.listeners.map(({ name, port, protocol }) => ({ name, port, protocol })),
    },
    ...(byClass.ok && byClass.level && { gatewayClassParameters: byClass.level }),
    ...(byGateway.ok && byGateway.level && { gatewayParameters: byGateway.level }),
    version: gwVersion(),
    randomBytes,
  });
  if (!result.ok) {
    const levels = [byClass.ok ? byClass.level : undefined, byGateway.ok ? byGateway.level : undefined];
    return { ok: false, problems: result.problems.map((problem) => problemLine(key, problem, levels)) };
  }
  if (uid === undefined)
    for (const object of result.objects) delete (object.metadata as { ownerReferences?: unknown }).ownerReferences;
  return result;
}

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
  const documents: string[] = [];
  let failed = false;
  let gateways = 0;
  for (const key of [...snapshot.gateways.keys()].sort()) {
    const gateway = snapshot.gateways.get(key)!;
    const gatewayClass = gwClassOf(snapshot, gateway);
    if (gatewayClass === undefined) continue;
    gateways++;
    const result = gatewayObjects(snapshot, gateway, gatewayClass);
    if (!result.ok) {
      failed = true;
      for (const line of result.problems) io.stderr(`${line}\n`);
      continue;
    }
    if (gateway.metadata.uid === undefined)
      io.stderr(
        `Gateway ${key}: no metadata.uid in the files: its objects are printed without ownerReferences (deleting the Gateway will not delete them)\n`,
      );
    for (const object of result.objects) documents.push(stringify(object, { lineWidth: 0 }));
  }
  if (gateways === 0) io.stderr('gw manifests: no Gateway of a GatewayClass of gw in the given files\n');
  io.stdout(documents.join('---\n'));
  return failed ? 1 : 0;
}
