// A custom provider's backendRef to an InferencePool (Gateway API Inference Extension) is not
// served yet; a backendRef to a Service is. The data plane refuses such a provider
// (dataplane/ai/providers/custom.ts: its traffic is answered 500) and the controller reports it on
// the object's status (controller/inference-pool-refusals.ts), both with this reason.
export const INFERENCE_POOL_NOT_YET =
  'a backendRef to an InferencePool is not served yet (support is planned); refer to a Service with its port, or set host and port';

/** Whether a custom provider's backendRef names an InferencePool (any group: the kind decides). */
export function isInferencePoolRef(ref: { kind?: string | undefined } | undefined): boolean {
  return ref?.kind === 'InferencePool';
}
