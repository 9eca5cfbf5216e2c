// What provisioning should make of a snapshot, as a pure function: for each Gateway of gw's
// GatewayClasses its data-plane objects (gatewayManifests, with the ports of its listeners and of
// the ListenerSets merged into it) or the problems that stop them; the GatewayClasses whose
// parametersRef does not resolve; and, for every GwParameters, who uses it and which of its
// fields cannot be provisioned. The controller writes the objects (provisioner.ts) and the
// statuses (statuses.ts).
import type { KubeObject } from '../../api/validate/admission.ts';
import type { ProvisionedGateway } from '../../provisioning/gateway.ts';
import { gatewayManifests } from '../../provisioning/manifests.ts';
import type { ParametersLevel } from '../../provisioning/overlay.ts';
import type { ProvisionedObject } from '../../provisioning/provision.ts';
import type { RandomBytes } from '../../provisioning/session-key.ts';
import { gwClassOf } from '../gateway-api/gateway-classes.ts';
import type { GatewayApiResult } from '../gateway-api/index.ts';
import type { Snapshot } from '../snapshot.ts';
import {
  classParameters,
  describeManifestProblem,
  describeRefProblem,
  gatewayParameters,
  type ParametersRefProblem,
  problemSources,
  type ResolvedParameters,
} from './parameters.ts';

export interface PlanOptions {
  /** gw's version: the default image tag and a label. */
  version: string;
  /** A CSPRNG, for a new session key (crypto.randomBytes in gw). */
  randomBytes: RandomBytes;
  /** How a parametersRef to a GwParameters the snapshot lacks is described (default: does not exist). */
  absent?: string;
}

/** One Gateway's data plane: the objects to hold, or why there are none. */
export type GatewayProvisioning = { gateway: ProvisionedGateway } & (
  | { ok: true; objects: ProvisionedObject[] }
  | { ok: false; problems: string[] }
);

/** Who uses a GwParameters, and its fields that cannot be provisioned. */
export interface ParametersUse {
  gatewayClasses: Set<string>;
  gateways: Set<string>;
  /** `FIELD: why` → the Gateways it stops. */
  problems: Map<string, Set<string>>;
}

export interface ProvisioningPlan {
  /** Every Gateway of a GatewayClass of gw (but those being deleted), by "namespace/name". */
  gateways: Map<string, GatewayProvisioning>;
  /** gw's GatewayClasses whose parametersRef does not resolve, by name. */
  classProblems: Map<string, ParametersRefProblem>;
  /** Every GwParameters, by "namespace/name". */
  parameters: Map<string, ParametersUse>;
}

function use(plan: ProvisioningPlan, key: string): ParametersUse {
  let found = plan.parameters.get(key);
  if (!found) {
    found = { gatewayClasses: new Set(), gateways: new Set(), problems: new Map() };
    plan.parameters.set(key, found);
  }
  return found;
}

function provisionedGateway(gateway: KubeObject, listeners: GatewayApiResult['listeners']): ProvisionedGateway {
  const key = `${gateway.metadata.namespace}/${gateway.metadata.name}`;
  return {
    name: gateway.metadata.name!,
    namespace: gateway.metadata.namespace!,
    uid: gateway.metadata.uid ?? '',
    gatewayClassName: (gateway.spec as { gatewayClassName: string }).gatewayClassName,
    listeners: (listeners.get(key) ?? []).map(({ name, port, protocol }) => ({ name, port, protocol })),
  };
}

export function planProvisioning(
  snapshot: Snapshot,
  gatewayApi: GatewayApiResult,
  options: PlanOptions,
): ProvisioningPlan {
  const plan: ProvisioningPlan = { gateways: new Map(), classProblems: new Map(), parameters: new Map() };
  for (const key of snapshot.parameters.keys()) use(plan, key);
  const byClass = new Map<string, ResolvedParameters>();
  for (const name of gatewayApi.gatewayClassStatuses.keys()) {
    const resolved = classParameters(snapshot, snapshot.gatewayClasses.get(name)!, options.absent);
    byClass.set(name, resolved);
    if (!resolved.ok) plan.classProblems.set(name, resolved.problem);
    else if (resolved.level) use(plan, resolved.level.parameters).gatewayClasses.add(name);
  }
  for (const key of [...gatewayApi.listeners.keys()].sort()) {
    const object = snapshot.gateways.get(key);
    const gatewayClass = object && gwClassOf(snapshot, object);
    if (!object || !gatewayClass) continue;
    // A Gateway being deleted wants nothing more: what it had goes (the cluster's garbage
    // collector is deleting it too; re-creating it would fight a foreground deletion).
    if (object.metadata.deletionTimestamp !== undefined) continue;
    const gateway = provisionedGateway(object, gatewayApi.listeners);
    const resolved = [byClass.get(gatewayClass.metadata.name!)!, gatewayParameters(snapshot, object, options.absent)];
    const levels = resolved.map((level) => (level.ok ? level.level : undefined));
    for (const level of levels) if (level) use(plan, level.parameters).gateways.add(key);
    const refProblems = resolved.flatMap((level) => (level.ok ? [] : [describeRefProblem(level.problem)]));
    if (refProblems.length > 0) {
      plan.gateways.set(key, { gateway, ok: false, problems: refProblems });
      continue;
    }
    const [gatewayClassParameters, ownParameters] = levels as [
      ParametersLevel | undefined,
      ParametersLevel | undefined,
    ];
    const result = gatewayManifests({
      gateway,
      ...(gatewayClassParameters && { gatewayClassParameters }),
      ...(ownParameters && { gatewayParameters: ownParameters }),
      version: options.version,
      randomBytes: options.randomBytes,
    });
    if (result.ok) {
      plan.gateways.set(key, { gateway, ok: true, objects: result.objects });
      continue;
    }
    for (const problem of result.problems) {
      for (const source of problemSources(problem, levels)) {
        const line = `${problem.field}: ${problem.message}`;
        const problems = use(plan, source).problems;
        problems.set(line, (problems.get(line) ?? new Set()).add(key));
      }
    }
    const problems = result.problems.map((problem) => describeManifestProblem(problem, levels));
    plan.gateways.set(key, { gateway, ok: false, problems });
  }
  return plan;
}
