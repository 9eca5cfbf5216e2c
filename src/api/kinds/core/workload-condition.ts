// What the statuses of the built-in workload kinds share: counts, and the condition shape (apps/v1 DeploymentCondition,
// DaemonSetCondition, autoscaling/v2 HorizontalPodAutoscalerCondition): unlike metav1.Condition
// only type and status are required, and a Deployment's carries lastUpdateTime too.
import { array, enumOf, integer, named, object, required, string } from '../../schema/build.ts';
import type { Infer } from '../../schema/schema.ts';

export const WorkloadCondition = named(
  {
    name: 'WorkloadCondition',
    description: 'One observation of a workload: type, status and why.',
    source: 'core',
    notes: 'apps/v1 DeploymentCondition and DaemonSetCondition, autoscaling/v2 HorizontalPodAutoscalerCondition.',
  },
  object({
    type: required(string({ minLength: 1, description: 'Condition type, e.g. Available or Progressing.' })),
    status: required(enumOf(['True', 'False', 'Unknown'], { description: 'True, False or Unknown.' })),
    lastUpdateTime: string({ format: 'date-time', description: 'When the condition was last updated.' }),
    lastTransitionTime: string({ format: 'date-time', description: 'When status last changed.' }),
    reason: string({ description: 'Machine-readable reason for the last change.' }),
    message: string({ description: 'Human-readable details.' }),
  }),
);
export type WorkloadCondition = Infer<typeof WorkloadCondition>;

/** A status's conditions list: one per type, merged by type under strategic merge patch. */
export function conditionList(description: string) {
  return array(WorkloadCondition, { listType: 'map', listMapKeys: ['type'], patchMergeKey: 'type', description });
}

/** A status count (replicas, nodes, pods): a non-negative int32. */
export function statusCount(description: string) {
  return integer({ format: 'int32', minimum: 0, description });
}
