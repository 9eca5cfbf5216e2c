// policy/v1 PodDisruptionBudget: how many data-plane pods a voluntary disruption (a node drain)
// must leave running. Stored and served; the disruption controller's status is what clients write.
import { array, enumOf, integer, map, named, object, refine, string } from '../../schema/build.ts';
import { atMostOneOf } from '../../schema/rules.ts';
import type { Infer } from '../../schema/schema.ts';
import { IntOrPercent } from '../apps/deployment.ts';
import { statusCount } from '../core/workload-condition.ts';
import { Condition, LabelSelector } from '../gateway-api/shared.ts';

export const PodDisruptionBudgetSpec = named(
  {
    name: 'PodDisruptionBudgetSpec',
    description: 'The pods a PodDisruptionBudget protects and how many must stay.',
    source: 'core',
  },
  object(
    {
      minAvailable: refine(IntOrPercent, {
        description: 'Pods (count or percentage) that must remain available after an eviction.',
      }),
      maxUnavailable: refine(IntOrPercent, {
        description: 'Pods (count or percentage) that may be unavailable after an eviction.',
      }),
      selector: refine(LabelSelector, { description: 'The pods the budget covers; none when absent.' }),
      unhealthyPodEvictionPolicy: enumOf(['IfHealthyBudget', 'AlwaysAllow'], {
        description: 'When pods that are running but not ready may be evicted.',
      }),
    },
    { rules: [atMostOneOf(['minAvailable', 'maxUnavailable'])] },
  ),
);
export type PodDisruptionBudgetSpec = Infer<typeof PodDisruptionBudgetSpec>;

export const PodDisruptionBudgetStatus = named(
  {
    name: 'PodDisruptionBudgetStatus',
    description: 'What the disruption controller observed, as written by it.',
    source: 'core',
    notes: 'gw runs no disruption controller: the status is what clients write through the status subresource.',
  },
  object({
    observedGeneration: integer({ format: 'int64', minimum: 0, description: 'Generation last acted on.' }),
    disruptedPods: map(string({ format: 'date-time' }), { description: 'Pods evicted but not yet gone, by name.' }),
    disruptionsAllowed: statusCount('Evictions allowed now.'),
    currentHealthy: statusCount('Healthy pods.'),
    desiredHealthy: statusCount('Healthy pods the budget requires.'),
    expectedPods: statusCount('Pods the budget counts.'),
    conditions: array(Condition, {
      listType: 'map',
      listMapKeys: ['type'],
      patchMergeKey: 'type',
      description: 'Latest observations (DisruptionAllowed).',
    }),
  }),
);
export type PodDisruptionBudgetStatus = Infer<typeof PodDisruptionBudgetStatus>;
