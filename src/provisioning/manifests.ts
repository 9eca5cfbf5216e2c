// Every object of one Gateway's data plane, as the cluster should hold it: the objects the typed
// fields give (provision.ts), each with its kind's overlays applied in the spec's order —
// GatewayClass parameters, then the Gateway's (overlay.ts). The session-key Secret has no overlay
// field and is left as generated. Any problem, of a typed field or of an overlay, yields no
// objects: the problems name the GwParameters and the field, for its status.
import { applyOverlays, type GeneratedObject, OVERLAY_FIELDS, overlaysFor, type ParametersLevel } from './overlay.ts';
import { type ProvisionedObject, type ProvisioningInput, provisionGateway } from './provision.ts';

/** GwParameters by level: which object (`namespace/name`) and its spec. */
export interface ManifestsInput extends Omit<ProvisioningInput, 'gatewayClassParameters' | 'gatewayParameters'> {
  gatewayClassParameters?: ParametersLevel;
  gatewayParameters?: ParametersLevel;
}

/** A field that cannot be provisioned: the GwParameters it is in (when known), its path, and why. */
export interface ManifestProblem {
  parameters?: string;
  field: string;
  message: string;
}

export type ManifestsResult = { ok: true; objects: ProvisionedObject[] } | { ok: false; problems: ManifestProblem[] };

export function gatewayManifests(input: ManifestsInput): ManifestsResult {
  const { gatewayClassParameters: gatewayClass, gatewayParameters: gateway, ...rest } = input;
  const typed: ProvisioningInput = { ...rest };
  if (gatewayClass !== undefined) typed.gatewayClassParameters = gatewayClass.spec;
  if (gateway !== undefined) typed.gatewayParameters = gateway.spec;
  const provisioned = provisionGateway(typed);
  if (!provisioned.ok) return provisioned;
  const levels = { ...(gatewayClass && { gatewayClass }), ...(gateway && { gateway }) };
  const objects: ProvisionedObject[] = [];
  const problems: ManifestProblem[] = [];
  for (const object of provisioned.objects) {
    if (!(object.kind in OVERLAY_FIELDS)) {
      objects.push(object);
      continue;
    }
    const generated = object as unknown as GeneratedObject;
    const overlaid = applyOverlays(generated, overlaysFor(generated.kind, levels));
    if (overlaid.ok) objects.push(overlaid.object as unknown as ProvisionedObject);
    else problems.push(...overlaid.problems);
  }
  return problems.length === 0 ? { ok: true, objects } : { ok: false, problems };
}
