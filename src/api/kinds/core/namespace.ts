// Core v1 Namespace: gw reads only its metadata (labels select namespaces for route attachment).
import { array, enumOf, named, object, required, string } from '../../schema/build.ts';
import type { Infer } from '../../schema/schema.ts';

export const NamespaceSpec = named(
  { name: 'NamespaceSpec', source: 'core' },
  object({
    finalizers: array(string({ minLength: 1 }), {
      listType: 'atomic',
      description: 'Finalizers that must empty before the namespace is removed.',
    }),
  }),
);
export type NamespaceSpec = Infer<typeof NamespaceSpec>;

export const NamespaceCondition = named(
  { name: 'NamespaceCondition', source: 'core' },
  object({
    type: required(string({ minLength: 1 })),
    status: required(enumOf(['True', 'False', 'Unknown'])),
    lastTransitionTime: string({ format: 'date-time' }),
    reason: string(),
    message: string(),
  }),
);
export type NamespaceCondition = Infer<typeof NamespaceCondition>;

export const NamespaceStatus = named(
  { name: 'NamespaceStatus', source: 'core' },
  object({
    phase: enumOf(['Active', 'Terminating']),
    conditions: array(NamespaceCondition, { listType: 'map', listMapKeys: ['type'] }),
  }),
);
export type NamespaceStatus = Infer<typeof NamespaceStatus>;
