// The Gateway API Inference Extension kinds gw reads (inference.networking.k8s.io/v1). Fields gw
// does not model are warnings, not errors: a cluster with the upstream CRD accepts them.
import { defineKind, type KindDefinition } from '../kind.ts';
import { INFERENCE_GROUP, InferencePoolSpec, InferencePoolStatus } from './inference-pool.ts';

/** The Inference Extension release whose InferencePool shape this follows (its CRD's bundle-version). */
export const INFERENCE_EXTENSION_BUNDLE_VERSION = 'v1.6.0';

export const inferenceExtensionKinds: KindDefinition[] = [
  defineKind({
    group: INFERENCE_GROUP,
    version: 'v1',
    unknownFields: 'warn',
    kind: 'InferencePool',
    plural: 'inferencepools',
    shortNames: ['infpool'],
    namespaced: true,
    description: 'Model server Pods picked by labels, and the endpoint picker that chooses one per request.',
    statusSubresource: true,
    printerColumns: [{ name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' }],
    fields: { spec: { requiredField: InferencePoolSpec }, status: InferencePoolStatus },
  }),
];
