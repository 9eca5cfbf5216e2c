// apps/v1 Deployment: the data-plane workload gw provisions by default. Stored and served as
// kube-apiserver would (selector, template, strategy checks and defaults); nothing here runs pods,
// so the status is what clients write.
import { boolean, enumOf, integer, intOrString, named, object, refine, required } from '../../schema/build.ts';
import type { Infer, ValidationRule } from '../../schema/schema.ts';
import { PodTemplateSpec, workloadTemplateRules } from '../core/pod.ts';
import { conditionList, statusCount } from '../core/workload-condition.ts';
import { LabelSelector } from '../gateway-api/shared.ts';

/** A count or a percentage ("25%"), as rolling updates bound their surge and unavailability. */
export const IntOrPercent = intOrString({
  rules: [
    {
      rule: "type(self) == int ? self >= 0 : self.matches('^[0-9]+%$')",
      message: 'must be a non-negative integer or a percentage such as 25%',
    },
  ],
});

/** A strategy's rollingUpdate is refused when its type is the other one (Recreate, OnDelete). */
export function rollingUpdateForbiddenWith(type: string): ValidationRule {
  return {
    rule: `!has(self.type) || self.type != '${type}' || !has(self.rollingUpdate)`,
    message: `may not be specified when strategy \`type\` is '${type}'`,
    fieldPath: '.rollingUpdate',
    reason: 'FieldValueForbidden',
  };
}

const isZero = (field: string) => `(has(self.${field}) && (self.${field} == 0 || self.${field} == '0%'))`;

export const RollingUpdateDeployment = named(
  { name: 'RollingUpdateDeployment', description: 'How fast a rolling update replaces pods.', source: 'core' },
  object(
    {
      maxUnavailable: refine(IntOrPercent, {
        default: '25%',
        description: 'Pods that may be unavailable during the update (count or percentage of replicas).',
      }),
      maxSurge: refine(IntOrPercent, {
        default: '25%',
        description: 'Pods that may be created above replicas during the update (count or percentage).',
      }),
    },
    {
      rules: [
        {
          rule: `!(${isZero('maxUnavailable')} && ${isZero('maxSurge')})`,
          message: 'maxUnavailable and maxSurge may not both be 0',
          fieldPath: '.maxUnavailable',
        },
        {
          rule: "!has(self.maxUnavailable) || type(self.maxUnavailable) == int || int(self.maxUnavailable.replace('%', '')) <= 100",
          message: 'maxUnavailable may not be more than 100%',
          fieldPath: '.maxUnavailable',
        },
      ],
    },
  ),
);

export const DeploymentStrategy = named(
  { name: 'DeploymentStrategy', description: 'How a Deployment replaces old pods with new ones.', source: 'core' },
  object(
    {
      type: enumOf(['RollingUpdate', 'Recreate'], {
        default: 'RollingUpdate',
        description: 'RollingUpdate (default) replaces pods gradually; Recreate stops all old pods first.',
      }),
      rollingUpdate: RollingUpdateDeployment,
    },
    {
      rules: [rollingUpdateForbiddenWith('Recreate')],
    },
  ),
);

/** The fields a Deployment's and a DaemonSet's spec share: which pods, what they run, when ready counts. */
export const podSetFields = {
  selector: required(refine(LabelSelector, { description: 'Selects the pods; must match the template labels.' })),
  template: required(PodTemplateSpec),
  minReadySeconds: integer({
    format: 'int32',
    minimum: 0,
    description: 'Seconds a new pod must be ready before it counts as available.',
  }),
};

export const DeploymentSpec = named(
  {
    name: 'DeploymentSpec',
    description: 'The pods a Deployment keeps running and how it updates them.',
    source: 'core',
  },
  object(
    {
      replicas: integer({ format: 'int32', minimum: 0, default: 1, description: 'Number of pods; default 1.' }),
      ...podSetFields,
      strategy: DeploymentStrategy,
      revisionHistoryLimit: integer({
        format: 'int32',
        minimum: 0,
        default: 10,
        description: 'Old ReplicaSets kept for rollback; default 10.',
      }),
      progressDeadlineSeconds: integer({
        format: 'int32',
        minimum: 1,
        default: 600,
        description: 'Seconds without progress before the Deployment is reported failed; default 600.',
      }),
      paused: boolean({ description: 'Stops rollouts of template changes.' }),
    },
    {
      rules: [
        ...workloadTemplateRules,
        {
          rule: '!has(self.progressDeadlineSeconds) || !has(self.minReadySeconds) || self.progressDeadlineSeconds > self.minReadySeconds',
          message: 'must be greater than minReadySeconds',
          fieldPath: '.progressDeadlineSeconds',
        },
      ],
    },
  ),
);
export type DeploymentSpec = Infer<typeof DeploymentSpec>;

export const DeploymentStatus = named(
  {
    name: 'DeploymentStatus',
    description: 'What the Deployment controller observed, as written by it.',
    source: 'core',
    notes: 'gw runs no Deployment controller: the status is what clients write through the status subresource.',
  },
  object({
    observedGeneration: integer({ format: 'int64', minimum: 0, description: 'Generation last acted on.' }),
    replicas: statusCount('Pods targeted by the Deployment.'),
    updatedReplicas: statusCount('Pods with the current template.'),
    readyReplicas: statusCount('Pods ready.'),
    availableReplicas: statusCount('Pods ready for at least minReadySeconds.'),
    unavailableReplicas: statusCount('Pods still needed for full availability.'),
    terminatingReplicas: statusCount('Pods being terminated.'),
    collisionCount: statusCount('Template hash collisions seen.'),
    conditions: conditionList('Latest observations (Available, Progressing, ReplicaFailure).'),
  }),
);
export type DeploymentStatus = Infer<typeof DeploymentStatus>;
