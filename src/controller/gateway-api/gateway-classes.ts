// GatewayClasses: gw owns those whose controllerName is gw's and accepts them all. Classes of
// other controllers get no status from gw (their controller writes it).
import type { GatewayClassSpec, GatewayClassStatus } from '../../api/kinds/gateway-api/gateway-class.ts';
import type { KubeObject } from '../../api/validate/admission.ts';
import type { Snapshot } from '../snapshot.ts';
import { condition, contextOf } from './conditions.ts';
import { CONTROLLER_NAME } from './types.ts';

function isGwClass(gatewayClass: KubeObject | undefined): gatewayClass is KubeObject {
  return (gatewayClass?.spec as GatewayClassSpec | undefined)?.controllerName === CONTROLLER_NAME;
}

/** The class of a Gateway when it exists and is gw's; otherwise the Gateway is not gw's. */
export function gwClassOf(snapshot: Snapshot, gateway: KubeObject): KubeObject | undefined {
  const className = (gateway.spec as { gatewayClassName?: string } | undefined)?.gatewayClassName;
  const gatewayClass = className === undefined ? undefined : snapshot.gatewayClasses.get(className);
  return isGwClass(gatewayClass) ? gatewayClass : undefined;
}

export function gatewayClassStatuses(snapshot: Snapshot, now: string): Map<string, GatewayClassStatus> {
  const statuses = new Map<string, GatewayClassStatus>();
  for (const key of [...snapshot.gatewayClasses.keys()].sort()) {
    const gatewayClass = snapshot.gatewayClasses.get(key)!;
    if (!isGwClass(gatewayClass)) continue;
    statuses.set(key, {
      conditions: [
        condition(contextOf(gatewayClass, now), 'Accepted', true, 'Accepted', `Handled by ${CONTROLLER_NAME}`),
      ],
    });
  }
  return statuses;
}
