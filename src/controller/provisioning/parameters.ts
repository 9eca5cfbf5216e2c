// The GwParameters of a Gateway: the one its GatewayClass names (spec.parametersRef) and its own
// (spec.infrastructure.parametersRef), each resolved in the snapshot with the checks the Gateway
// API asks of a parametersRef (the kind gw reads, the namespace, the object exists), and the
// problems of provisioning described as lines naming the GwParameters and the field. Shared by the
// controller's provisioning and `gw manifests`.
import type { GatewaySpec } from '../../api/kinds/gateway-api/gateway.ts';
import type { GatewayClassSpec } from '../../api/kinds/gateway-api/gateway-class.ts';
import type { GwParametersSpec } from '../../api/types/provisioning.ts';
import type { KubeObject } from '../../api/validate/admission.ts';
import type { ManifestProblem } from '../../provisioning/manifests.ts';
import type { ParametersLevel } from '../../provisioning/overlay.ts';
import { objectKey } from '../../store/store.ts';
import type { Snapshot } from '../snapshot.ts';

/** A parametersRef gw reads: a GwParameters. */
export const PARAMETERS_GROUP = 'gw.dev';
export const PARAMETERS_KIND = 'GwParameters';

/** A parametersRef that does not resolve: the object holding it, the field, and why. */
export interface ParametersRefProblem {
  /** `GatewayClass NAME` or `Gateway NAMESPACE/NAME`. */
  object: string;
  field: 'spec.parametersRef' | 'spec.infrastructure.parametersRef';
  message: string;
}

export type ResolvedParameters = { ok: true; level?: ParametersLevel } | { ok: false; problem: ParametersRefProblem };

type Reference = { group: string; kind: string; name: string; namespace?: string };

function resolve(
  snapshot: Snapshot,
  ref: Reference | undefined,
  namespace: string | undefined,
  object: string,
  field: ParametersRefProblem['field'],
  absent: string,
): ResolvedParameters {
  if (ref === undefined) return { ok: true };
  const problem = (message: string): ResolvedParameters => ({ ok: false, problem: { object, field, message } });
  if (ref.group !== PARAMETERS_GROUP || ref.kind !== PARAMETERS_KIND)
    return problem(
      `refers to ${ref.kind} of group "${ref.group}"; gw reads only ${PARAMETERS_KIND} (group ${PARAMETERS_GROUP})`,
    );
  if (namespace === undefined)
    return problem(`namespace is required: ${PARAMETERS_KIND} is namespaced; name the namespace of ${ref.name}`);
  const key = `${namespace}/${ref.name}`;
  const parameters = snapshot.parameters.get(key);
  if (parameters === undefined) return problem(`${PARAMETERS_KIND} ${key} ${absent}`);
  return { ok: true, level: { parameters: key, spec: (parameters.spec ?? {}) as GwParametersSpec } };
}

/** How a reference to a GwParameters the snapshot lacks is described (`gw manifests`: in the files). */
const DOES_NOT_EXIST = 'does not exist';

/** The GwParameters a GatewayClass names, if any. */
export function classParameters(
  snapshot: Snapshot,
  gatewayClass: KubeObject,
  absent = DOES_NOT_EXIST,
): ResolvedParameters {
  const ref = (gatewayClass.spec as GatewayClassSpec).parametersRef;
  const object = `GatewayClass ${gatewayClass.metadata.name}`;
  return resolve(snapshot, ref, ref?.namespace, object, 'spec.parametersRef', absent);
}

/** The GwParameters a Gateway names itself (in its own namespace), if any. */
export function gatewayParameters(
  snapshot: Snapshot,
  gateway: KubeObject,
  absent = DOES_NOT_EXIST,
): ResolvedParameters {
  const ref = (gateway.spec as GatewaySpec).infrastructure?.parametersRef;
  const object = `Gateway ${objectKey(gateway)}`;
  return resolve(snapshot, ref, gateway.metadata.namespace, object, 'spec.infrastructure.parametersRef', absent);
}

export function describeRefProblem(problem: ParametersRefProblem): string {
  return `${problem.object} ${problem.field}: ${problem.message}`;
}

/**
 * The GwParameters a problem of provisioning is in: the one an overlay problem names, or, for a
 * typed field (merged from both levels), every level that sets the field.
 */
export function problemSources(problem: ManifestProblem, levels: readonly (ParametersLevel | undefined)[]): string[] {
  if (problem.parameters !== undefined) return [problem.parameters];
  const field = /^spec\.(\w+)/.exec(problem.field)?.[1];
  return levels.flatMap((level) =>
    level !== undefined && field !== undefined && field in level.spec ? [level.parameters] : [],
  );
}

/** A problem as `GwParameters NS/NAME: FIELD: why` (each GwParameters that sets the field named). */
export function describeManifestProblem(problem: ManifestProblem, levels: readonly (ParametersLevel | undefined)[]) {
  const named = problemSources(problem, levels)
    .map((source) => `${PARAMETERS_KIND} ${source}: `)
    .join('');
  return `${named}${problem.field}: ${problem.message}`;
}
