// Core v1 Namespace: gw reads only its metadata (labels select namespaces for route attachment).
import { array, enumOf, named, object, required, string } from '../../schema/build.ts';
import type { Infer } from '../../schema/schema.ts';

export const NamespaceSpec = named(
  { name: 'NamespaceSpec', description: 'Specification of the namespace.', source: 'core' },
  object({
    finalizers: array(string({ minLength: 1 }), {
      listType: 'atomic',
      description: 'Finalizers that must empty before the namespace is removed.',
    }),
  }),
);
export type NamespaceSpec = Infer<typeof NamespaceSpec>;

export const NamespaceCondition = named(
  { name: 'NamespaceCondition', description: 'One aspect of the state of a namespace.', source: 'core' },
  object({
    type: required(string({ minLength: 1, description: 'Type of the condition.' })),
    status: required(enumOf(['True', 'False', 'Unknown'], { description: 'True, False or Unknown.' })),
    lastTransitionTime: string({ format: 'date-time', description: 'When the status last changed.' }),
    reason: string({ description: 'Machine-readable reason for the last change.' }),
    message: string({ description: 'Human-readable details.' }),
  }),
);
export type NamespaceCondition = Infer<typeof NamespaceCondition>;

export const NamespaceStatus = named(
  { name: 'NamespaceStatus', description: 'State of the namespace.', source: 'core' },
  object({
    phase: enumOf(['Active', 'Terminating'], {
      description: 'Active, or Terminating while the namespace is being deleted.',
    }),
    conditions: array(NamespaceCondition, {
      listType: 'map',
      listMapKeys: ['type'],
      patchMergeKey: 'type',
      description: 'Latest observations of the namespace.',
    }),
  }),
);
export type NamespaceStatus = Infer<typeof NamespaceStatus>;
