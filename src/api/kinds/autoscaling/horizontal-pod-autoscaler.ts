// autoscaling/v2 HorizontalPodAutoscaler: scales the data-plane Deployment on metrics. Stored and
// served; gw runs no autoscaler, so replicas are never changed here and the status is what clients
// write.
import {
  array,
  enumOf,
  integer,
  intOrString,
  jsonObject,
  named,
  object,
  refine,
  required,
  string,
} from '../../schema/build.ts';
import type { Infer } from '../../schema/schema.ts';
import { conditionList } from '../core/workload-condition.ts';
import { LabelSelector } from '../gateway-api/shared.ts';

export const CrossVersionObjectReference = named(
  { name: 'CrossVersionObjectReference', description: 'The object an autoscaler scales.', source: 'core' },
  object({
    apiVersion: string({ description: 'apiVersion of the target, e.g. apps/v1.' }),
    kind: required(string({ minLength: 1, description: 'Kind of the target, e.g. Deployment.' })),
    name: required(string({ minLength: 1, description: 'Name of the target in the same namespace.' })),
  }),
);

export const MetricTarget = named(
  { name: 'MetricTarget', description: 'The value of a metric the autoscaler aims for.', source: 'core' },
  object(
    {
      type: required(enumOf(['Utilization', 'Value', 'AverageValue'], { description: 'What the target is.' })),
      value: intOrString({ description: 'Target value of the metric (quantity).' }),
      averageValue: intOrString({ description: 'Target value of the metric averaged over pods (quantity).' }),
      averageUtilization: integer({
        format: 'int32',
        minimum: 1,
        description: 'Target percentage of the requested resource, averaged over pods.',
      }),
    },
    {
      rules: [
        {
          rule: "self.type != 'Utilization' || has(self.averageUtilization)",
          message: 'averageUtilization is required when type is Utilization',
          fieldPath: '.averageUtilization',
          reason: 'FieldValueRequired',
        },
        {
          rule: "self.type != 'Value' || has(self.value)",
          message: 'value is required when type is Value',
          fieldPath: '.value',
          reason: 'FieldValueRequired',
        },
        {
          rule: "self.type != 'AverageValue' || has(self.averageValue)",
          message: 'averageValue is required when type is AverageValue',
          fieldPath: '.averageValue',
          reason: 'FieldValueRequired',
        },
      ],
    },
  ),
);

const MetricIdentifier = object(
  {
    name: required(string({ minLength: 1, description: 'Name of the metric.' })),
    selector: refine(LabelSelector, { description: 'Narrows the metric by its labels.' }),
  },
  { description: 'A metric by name, narrowed by labels.' },
);

const metricSources = {
  Resource: 'resource',
  ContainerResource: 'containerResource',
  Pods: 'pods',
  Object: 'object',
  External: 'external',
} as const;

export const MetricSpec = named(
  {
    name: 'MetricSpec',
    description: 'One metric the autoscaler scales on.',
    source: 'core',
    notes: 'The field named by type (resource, containerResource, pods, object or external) must be set, and only it.',
  },
  object(
    {
      type: required(
        enumOf(Object.keys(metricSources) as (keyof typeof metricSources)[], { description: 'Kind of metric.' }),
      ),
      resource: object(
        { name: required(string({ minLength: 1, description: 'cpu, memory, ...' })), target: required(MetricTarget) },
        { description: 'A resource of the pods, as requests define it.' },
      ),
      containerResource: object(
        {
          name: required(string({ minLength: 1, description: 'cpu, memory, ...' })),
          container: required(string({ minLength: 1, description: 'Name of the container.' })),
          target: required(MetricTarget),
        },
        { description: 'A resource of one container of the pods.' },
      ),
      pods: object(
        { metric: required(MetricIdentifier), target: required(MetricTarget) },
        { description: 'A metric of each pod, averaged.' },
      ),
      object: object(
        {
          describedObject: required(CrossVersionObjectReference),
          metric: required(MetricIdentifier),
          target: required(MetricTarget),
        },
        { description: 'A metric of another object in the namespace.' },
      ),
      external: object(
        { metric: required(MetricIdentifier), target: required(MetricTarget) },
        { description: 'A metric from outside the cluster.' },
      ),
    },
    {
      rules: Object.entries(metricSources).map(([type, field]) => ({
        rule: `(self.type == '${type}') == has(self.${field})`,
        message: `${field} must be set when type is ${type}, and only then`,
        fieldPath: `.${field}`,
      })),
    },
  ),
);

const ScalingRules = named(
  { name: 'HPAScalingRules', description: 'How fast the autoscaler scales in one direction.', source: 'core' },
  object({
    stabilizationWindowSeconds: integer({
      format: 'int32',
      minimum: 0,
      maximum: 3600,
      description: 'Seconds of past recommendations considered.',
    }),
    selectPolicy: enumOf(['Max', 'Min', 'Disabled'], { description: 'Which policy wins: Max, Min, or Disabled.' }),
    policies: array(
      object({
        type: required(enumOf(['Pods', 'Percent'], { description: 'Pods or Percent.' })),
        value: required(integer({ format: 'int32', minimum: 1, description: 'Change allowed per period.' })),
        periodSeconds: required(
          integer({ format: 'int32', minimum: 1, maximum: 1800, description: 'Period the value applies to.' }),
        ),
      }),
      { listType: 'atomic', description: 'Bounds on change per period.' },
    ),
    tolerance: intOrString({ description: 'Relative metric change ignored (quantity).' }),
  }),
);

export const HorizontalPodAutoscalerSpec = named(
  {
    name: 'HorizontalPodAutoscalerSpec',
    description: 'What an autoscaler scales, between which bounds, on which metrics.',
    source: 'core',
  },
  object(
    {
      scaleTargetRef: required(CrossVersionObjectReference),
      minReplicas: integer({ format: 'int32', minimum: 1, default: 1, description: 'Fewest replicas; default 1.' }),
      maxReplicas: required(integer({ format: 'int32', minimum: 1, description: 'Most replicas.' })),
      metrics: array(MetricSpec, {
        listType: 'atomic',
        description: 'Metrics scaled on; 80% average CPU utilization when empty.',
      }),
      behavior: object(
        { scaleUp: ScalingRules, scaleDown: ScalingRules },
        { description: 'Scaling speed in each direction.' },
      ),
    },
    {
      rules: [
        {
          rule: '!has(self.minReplicas) || self.minReplicas <= self.maxReplicas',
          message: 'must be greater than or equal to minReplicas',
          fieldPath: '.maxReplicas',
        },
      ],
    },
  ),
);
export type HorizontalPodAutoscalerSpec = Infer<typeof HorizontalPodAutoscalerSpec>;

export const HorizontalPodAutoscalerStatus = named(
  {
    name: 'HorizontalPodAutoscalerStatus',
    description: 'What the autoscaler observed, as written by it.',
    source: 'core',
    notes: 'gw runs no autoscaler: the status is what clients write through the status subresource.',
  },
  object({
    observedGeneration: integer({ format: 'int64', minimum: 0, description: 'Generation last acted on.' }),
    lastScaleTime: string({ format: 'date-time', description: 'When the autoscaler last scaled.' }),
    currentReplicas: integer({ format: 'int32', minimum: 0, description: 'Replicas seen last.' }),
    desiredReplicas: integer({ format: 'int32', minimum: 0, description: 'Replicas wanted last.' }),
    currentMetrics: array(jsonObject(), { listType: 'atomic', description: 'Last read value of each metric.' }),
    conditions: conditionList('Latest observations (AbleToScale, ScalingActive, ScalingLimited).'),
  }),
);
export type HorizontalPodAutoscalerStatus = Infer<typeof HorizontalPodAutoscalerStatus>;
