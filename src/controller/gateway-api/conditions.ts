// Building status conditions. Every condition of one translation carries the same
// lastTransitionTime (the caller's `now`, so translation stays a pure function) and the
// generation of the object it describes.
import type { Condition } from '../../api/kinds/gateway-api/shared.ts';
import type { KubeObject } from '../../api/validate/admission.ts';

export interface ConditionContext {
  now: string;
  generation?: number;
}

export function contextOf(object: KubeObject, now: string): ConditionContext {
  const generation = object.metadata.generation;
  return typeof generation === 'number' ? { now, generation } : { now };
}

export function condition(
  context: ConditionContext,
  type: string,
  status: boolean,
  reason: string,
  message: string,
): Condition {
  const result: Condition = {
    type,
    status: status ? 'True' : 'False',
    reason,
    message,
    lastTransitionTime: context.now,
  };
  if (context.generation !== undefined) result.observedGeneration = context.generation;
  return result;
}

/** Conditions in a stable order (by type), so that equal statuses serialise identically. */
export function sortConditions(conditions: Condition[]): Condition[] {
  return [...conditions].sort((a, b) => (a.type < b.type ? -1 : a.type > b.type ? 1 : 0));
}
