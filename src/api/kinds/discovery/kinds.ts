// The discovery.k8s.io/v1 kind gw reads: EndpointSlice, the ready addresses of a Service's pods
// (for the mesh, decision 0035 part 3). Written by Kubernetes' EndpointSlice controller; gw only
// lists and watches them.
import { defineKind, type KindDefinition, topLevelFields } from '../kind.ts';
import { EndpointSliceFields } from './endpoint-slice.ts';

export const discoveryKinds: KindDefinition[] = [
  defineKind({
    group: 'discovery.k8s.io',
    version: 'v1',
    unknownFields: 'warn',
    builtIn: true,
    namespaced: true,
    kind: 'EndpointSlice',
    plural: 'endpointslices',
    description: "The addresses of a Service's pods; gw reaches mesh destinations at them.",
    ...topLevelFields(EndpointSliceFields),
  }),
];
