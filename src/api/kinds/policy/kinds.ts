// The policy/v1 kind gw's provisioning writes: PodDisruptionBudget, stored and served.
import { defineKind, type KindDefinition } from '../kind.ts';
import { PodDisruptionBudgetSpec, PodDisruptionBudgetStatus } from './pod-disruption-budget.ts';

export const policyKinds: KindDefinition[] = [
  defineKind({
    group: 'policy',
    version: 'v1',
    unknownFields: 'warn',
    builtIn: true,
    namespaced: true,
    kind: 'PodDisruptionBudget',
    plural: 'poddisruptionbudgets',
    shortNames: ['pdb'],
    notRead: 'a disruption budget of pods: gw runs no pods',
    description: 'How many data-plane pods a voluntary disruption must leave; stored, gw evicts nothing.',
    fields: { spec: PodDisruptionBudgetSpec, status: PodDisruptionBudgetStatus },
  }),
];
