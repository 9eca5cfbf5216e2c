// apps/v1 DaemonSet: the data-plane workload when GwParameters asks for one pod per node.
// Stored and served as kube-apiserver would; nothing here schedules pods, so the status is what
// clients write.
import { enumOf, integer, named, object, refine } from '../../schema/build.ts';
import type { Infer } from '../../schema/schema.ts';
import { workloadTemplateRules } from '../core/pod.ts';
import { conditionList, statusCount } from '../core/workload-condition.ts';
import { IntOrPercent, podSetFields, rollingUpdateForbiddenWith } from './deployment.ts';

export const DaemonSetUpdateStrategy = named(
  { name: 'DaemonSetUpdateStrategy', description: "How a DaemonSet replaces its nodes' pods.", source: 'core' },
  object(
    {
      type: enumOf(['RollingUpdate', 'OnDelete'], {
        default: 'RollingUpdate',
        description: 'RollingUpdate (default) replaces pods node by node; OnDelete waits for pods to be deleted.',
      }),
      rollingUpdate: object(
        {
          maxUnavailable: refine(IntOrPercent, {
            default: 1,
            description: 'Nodes whose pod may be unavailable during the update; default 1.',
          }),
          maxSurge: refine(IntOrPercent, {
            default: 0,
            description: 'Nodes that may run an old and a new pod at once; default 0.',
          }),
        },
        { description: 'How fast a rolling update proceeds.' },
      ),
    },
    {
      rules: [rollingUpdateForbiddenWith('OnDelete')],
    },
  ),
);

export const DaemonSetSpec = named(
  { name: 'DaemonSetSpec', description: 'The pod a DaemonSet runs on every eligible node.', source: 'core' },
  object(
    {
      ...podSetFields,
      updateStrategy: DaemonSetUpdateStrategy,
      revisionHistoryLimit: integer({
        format: 'int32',
        minimum: 0,
        default: 10,
        description: 'Old revisions kept for rollback; default 10.',
      }),
    },
    {
      rules: [...workloadTemplateRules],
    },
  ),
);
export type DaemonSetSpec = Infer<typeof DaemonSetSpec>;

export const DaemonSetStatus = named(
  {
    name: 'DaemonSetStatus',
    description: 'What the DaemonSet controller observed, as written by it.',
    source: 'core',
    notes: 'gw runs no DaemonSet controller: the status is what clients write through the status subresource.',
  },
  object({
    currentNumberScheduled: statusCount('Nodes running at least one daemon pod that should.'),
    numberMisscheduled: statusCount('Nodes running a daemon pod that should not.'),
    desiredNumberScheduled: statusCount('Nodes that should run the daemon pod.'),
    numberReady: statusCount('Nodes whose daemon pod is ready.'),
    observedGeneration: integer({ format: 'int64', minimum: 0, description: 'Generation last acted on.' }),
    updatedNumberScheduled: statusCount('Nodes running the current template.'),
    numberAvailable: statusCount('Nodes whose daemon pod has been ready for minReadySeconds.'),
    numberUnavailable: statusCount('Nodes whose daemon pod is not available.'),
    collisionCount: statusCount('Template hash collisions seen.'),
    conditions: conditionList('Latest observations of the DaemonSet.'),
  }),
);
export type DaemonSetStatus = Infer<typeof DaemonSetStatus>;
