// Core v1 PodStatus: what gw reads of a pod for the mesh (decision 0035 part 3) — its IP addresses,
// its phase and its Ready condition. The kubelet writes it; the rest of a real pod's status is kept
// as sent (fields not modelled are warnings, as for every core kind).
import { array, enumOf, named, object, required, string } from '../../schema/build.ts';
import type { Infer } from '../../schema/schema.ts';

export const PodCondition = named(
  {
    name: 'PodCondition',
    description: 'One aspect of the state of a pod (Ready, ContainersReady...).',
    source: 'core',
  },
  object({
    type: required(string({ minLength: 1, description: 'Type of the condition.' })),
    status: required(enumOf(['True', 'False', 'Unknown'], { description: 'True, False or Unknown.' })),
    lastProbeTime: string({ format: 'date-time', description: 'When the condition was last probed.' }),
    lastTransitionTime: string({ format: 'date-time', description: 'When the status last changed.' }),
    reason: string({ description: 'Machine-readable reason for the last change.' }),
    message: string({ description: 'Human-readable details.' }),
  }),
);
export type PodCondition = Infer<typeof PodCondition>;

const PodIP = object({ ip: required(string({ minLength: 1, description: 'An IP address of the pod.' })) });

export const PodStatus = named(
  { name: 'PodStatus', description: 'State of the pod, as the kubelet reports it.', source: 'core' },
  object({
    phase: enumOf(['Pending', 'Running', 'Succeeded', 'Failed', 'Unknown'], {
      description: 'Where the pod is in its lifecycle.',
    }),
    conditions: array(PodCondition, {
      listType: 'map',
      listMapKeys: ['type'],
      patchMergeKey: 'type',
      description: 'Latest observations of the pod.',
    }),
    hostIP: string({ description: 'IP address of the node the pod runs on.' }),
    podIP: string({ description: 'The first IP address of the pod.' }),
    podIPs: array(PodIP, {
      listType: 'map',
      listMapKeys: ['ip'],
      patchMergeKey: 'ip',
      description: 'Every IP address of the pod (one per address family); the first is podIP.',
    }),
    startTime: string({ format: 'date-time', description: 'When the kubelet acknowledged the pod.' }),
  }),
);
export type PodStatus = Infer<typeof PodStatus>;
