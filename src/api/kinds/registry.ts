// Every kind the API knows, looked up by apiVersion and kind: gw's own, the Gateway API's, its
// Inference Extension's InferencePool, and the Kubernetes built-in kinds gw reads (core,
// discovery) or whose objects its provisioning writes (core, apps, policy, autoscaling, rbac).

import { appsKinds } from './apps/kinds.ts';
import { autoscalingKinds } from './autoscaling/kinds.ts';
import { coreKinds } from './core/kinds.ts';
import { discoveryKinds } from './discovery/kinds.ts';
import { gatewayApiKinds } from './gateway-api/kinds.ts';
import { GwBackendKind } from './gw-backend.ts';
import { GwModelKind } from './gw-model.ts';
import { GwParametersKind } from './gw-parameters.ts';
import { GwPolicyKind } from './gw-policy.ts';
import { inferenceExtensionKinds } from './inference/kinds.ts';
import { type KindDefinition, servedApiVersionsOf } from './kind.ts';
import { policyKinds } from './policy/kinds.ts';
import { rbacKinds } from './rbac/kinds.ts';

export const KINDS: readonly KindDefinition[] = [
  GwBackendKind,
  GwModelKind,
  GwParametersKind,
  GwPolicyKind,
  ...gatewayApiKinds,
  ...inferenceExtensionKinds,
  ...coreKinds,
  ...discoveryKinds,
  ...appsKinds,
  ...policyKinds,
  ...autoscalingKinds,
  ...rbacKinds,
];

/** Every served apiVersion of every kind (a kind served in two versions is found by either). */
const byApiVersionAndKind = new Map(
  KINDS.flatMap((definition) =>
    servedApiVersionsOf(definition).map((apiVersion) => [`${apiVersion} ${definition.kind}`, definition] as const),
  ),
);

export function findKind(apiVersion: string, kind: string): KindDefinition | undefined {
  return byApiVersionAndKind.get(`${apiVersion} ${kind}`);
}

export function kindsOfGroup(group: string): KindDefinition[] {
  return KINDS.filter((definition) => definition.group === group);
}

/** The kinds `gw crds` emits: gw's own. */
export function crdKinds(): KindDefinition[] {
  return KINDS.filter((definition) => definition.crd);
}

/** The Gateway API kinds gw reads, whose CRDs `gw crds --gateway-api` emits from gw's schemas. */
export function gatewayApiCrdKinds(): KindDefinition[] {
  return gatewayApiKinds;
}

/** The Inference Extension kinds gw reads (InferencePool), whose CRD `gw crds --inference-extension` emits. */
export function inferenceExtensionCrdKinds(): KindDefinition[] {
  return inferenceExtensionKinds;
}
