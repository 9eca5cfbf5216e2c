// Custom providers whose backendRef names an InferencePool, found in a GwBackend's or GwModel's
// spec so that the object's status says they are refused (refusals.ts adds them to the registry's
// refusals). The registry cannot say it by itself: backendRef.kind is a free string, not an enum.
import type { GwBackendSpec } from '../api/kinds/gw-backend.ts';
import type { GwModelSpec } from '../api/kinds/gw-model.ts';
import { INFERENCE_POOL_NOT_YET, isInferencePoolRef } from '../contract/inference-pool.ts';

interface PoolRefusal {
  path: string;
  reason: string;
}

function refusalAt(path: string): PoolRefusal {
  return { path: `${path}.custom.backendRef.kind`, reason: INFERENCE_POOL_NOT_YET };
}

/** The GwBackend's ai providers (single or in groups) with a backendRef to an InferencePool. */
export function backendInferencePoolRefusals(spec: GwBackendSpec): PoolRefusal[] {
  const found: PoolRefusal[] = [];
  if (isInferencePoolRef(spec.ai?.provider?.custom?.backendRef)) found.push(refusalAt('spec.ai.provider'));
  for (const [groupIndex, group] of (spec.ai?.groups ?? []).entries())
    for (const [index, provider] of group.providers.entries())
      if (isInferencePoolRef(provider.custom?.backendRef))
        found.push(refusalAt(`spec.ai.groups[${groupIndex}].providers[${index}]`));
  return found;
}

/** A GwModel with provider Custom whose custom.backendRef names an InferencePool. */
export function modelInferencePoolRefusals(spec: GwModelSpec): PoolRefusal[] {
  return isInferencePoolRef(spec.custom?.backendRef) ? [refusalAt('spec')] : [];
}
