// Ports the data plane could not bind (another process holds the port, a privileged port), as the
// controller shows them: the listeners on such a port are Programmed False with reason
// PortUnavailable (Gateway API's reason for a port that cannot be used) and a message naming the
// port, and so is their Gateway. The data plane reports them after each configuration it applies
// (src/run/local-gateway.ts); the statuses follow at the next full pass.
import type { GatewayApiResult } from './gateway-api/types.ts';
import { markListenersNotProgrammed } from './listener-programmed.ts';

/** By Gateway "namespace/name": each listener port it could not bind, and why. */
export type UnboundListenerPorts = ReadonlyMap<string, ReadonlyMap<number, string>>;

export function markUnboundListeners(gatewayApi: GatewayApiResult, unbound: UnboundListenerPorts): void {
  for (const [gateway, ports] of unbound)
    markListenersNotProgrammed(gatewayApi, gateway, 'PortUnavailable', (listener) => ports.get(listener.port));
}

/** The data plane's unbound ports (port, the Gateway it serves it for, why) grouped by Gateway. */
export function unboundByGateway(
  unbound: Iterable<[port: number, { gateway: string; reason: string }]>,
): UnboundListenerPorts {
  const byGateway = new Map<string, Map<number, string>>();
  for (const [port, { gateway, reason }] of unbound) {
    const ports = byGateway.get(gateway) ?? new Map<number, string>();
    ports.set(port, reason);
    byGateway.set(gateway, ports);
  }
  return byGateway;
}
