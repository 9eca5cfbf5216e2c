// `gw run --gateway NAMESPACE/NAME`: a process that serves one Gateway only (the data plane the
// provisioning generates per Gateway). The controller still translates every object, since routes
// and policies are shared, but publishes only that Gateway's configuration; this file says why
// that Gateway is not served when it is not (it does not exist yet, its class is not gw's...), and
// marks the other Gateways' listeners as not programmed by this process when it writes statuses.
import type { GatewayClassSpec } from '../api/kinds/gateway-api/gateway-class.ts';
import type { DataPlaneConfig } from '../contract/dataplane-config.ts';
import { CONTROLLER_NAME, type GatewayApiResult } from './gateway-api/index.ts';
import { markListenersNotProgrammed } from './listener-programmed.ts';
import type { Snapshot } from './snapshot.ts';

/**
 * Why the Gateway `key` ("namespace/name") has no configuration to serve, for the log; undefined
 * when it has one.
 */
export function servedGatewayProblem(
  snapshot: Snapshot,
  key: string,
  configs: ReadonlyMap<string, DataPlaneConfig>,
): string | undefined {
  if (configs.has(key)) return undefined;
  const gateway = snapshot.gateways.get(key);
  if (!gateway) return `Gateway ${key} does not exist (yet): waiting for it`;
  const className = (gateway.spec as { gatewayClassName?: string } | undefined)?.gatewayClassName ?? '';
  const gatewayClass = snapshot.gatewayClasses.get(className);
  if (!gatewayClass)
    return `Gateway ${key} names GatewayClass ${className}, which does not exist (yet): waiting for it (gw's classes have controllerName ${CONTROLLER_NAME})`;
  const controllerName = (gatewayClass.spec as GatewayClassSpec | undefined)?.controllerName;
  if (controllerName !== CONTROLLER_NAME)
    return `Gateway ${key} is not gw's: its GatewayClass ${className} has controllerName ${controllerName}, not ${CONTROLLER_NAME}; waiting for it to be gw's`;
  return `Gateway ${key} is gw's but has nothing to serve (its status conditions say why): waiting for a change`;
}

/**
 * The listeners of every Gateway but `served` are Programmed False: this process does not serve
 * them. Only a process that writes statuses and serves one Gateway calls this (gw run --gateway
 * with files or the embedded API server).
 */
export function markNotServedGateways(gatewayApi: GatewayApiResult, served: string): void {
  const why = `not served by this gw run, which serves only Gateway ${served} (--gateway)`;
  for (const gateway of gatewayApi.listeners.keys())
    if (gateway !== served) markListenersNotProgrammed(gatewayApi, gateway, 'Pending', () => why);
}
