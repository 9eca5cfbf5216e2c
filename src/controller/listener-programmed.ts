// Listeners that translation accepted but that cannot be served after all — a field the data plane
// refuses (refusals.ts), a port that cannot be bound (port-status.ts) — are Programmed False, and
// so is the Gateway (or ListenerSet) that has them, naming each listener and why.
import type { Condition } from '../api/kinds/gateway-api/shared.ts';
import type { EffectiveListener, GatewayApiResult } from './gateway-api/types.ts';

/** Sets the Programmed condition of a list to False with a reason and why. */
function notProgrammed(conditions: Condition[] | undefined, reason: string, message: string): void {
  const programmed = conditions?.find((entry) => entry.type === 'Programmed');
  if (!programmed) return;
  programmed.status = 'False';
  programmed.reason = reason;
  programmed.message = message;
}

/** Marks each listener of `gateway` that `why` has a reason for, and its Gateway or ListenerSet. */
export function markListenersNotProgrammed(
  gatewayApi: GatewayApiResult,
  gateway: string,
  reason: string,
  why: (listener: EffectiveListener) => string | undefined,
): void {
  const gatewayMessages: string[] = [];
  for (const listener of gatewayApi.listeners.get(gateway) ?? []) {
    const text = why(listener);
    if (text === undefined) continue;
    const source = listener.source;
    const owner =
      source.kind === 'Gateway'
        ? gatewayApi.gatewayStatuses.get(gateway)
        : gatewayApi.listenerSetStatuses.get(`${source.namespace}/${source.name}`);
    notProgrammed(owner?.listeners?.find((entry) => entry.name === listener.name)?.conditions, reason, text);
    const message = `listener ${listener.name} cannot be served: ${text}`;
    if (source.kind === 'Gateway') gatewayMessages.push(message);
    else notProgrammed(owner?.conditions, reason, message);
  }
  if (gatewayMessages.length > 0)
    notProgrammed(gatewayApi.gatewayStatuses.get(gateway)?.conditions, reason, gatewayMessages.join('; '));
}
