// The autoscaling/v2 kind gw's provisioning writes: HorizontalPodAutoscaler, stored and served.
import { defineKind, type KindDefinition } from '../kind.ts';
import { HorizontalPodAutoscalerSpec, HorizontalPodAutoscalerStatus } from './horizontal-pod-autoscaler.ts';

export const autoscalingKinds: KindDefinition[] = [
  defineKind({
    group: 'autoscaling',
    version: 'v2',
    unknownFields: 'warn',
    builtIn: true,
    namespaced: true,
    kind: 'HorizontalPodAutoscaler',
    plural: 'horizontalpodautoscalers',
    shortNames: ['hpa'],
    categories: ['all'],
    notRead: 'an autoscaler of a workload: gw runs no pods and scales nothing',
    description: 'Scales the data-plane Deployment on metrics; stored, gw scales nothing.',
    fields: { spec: HorizontalPodAutoscalerSpec, status: HorizontalPodAutoscalerStatus },
  }),
];
