// Gateway API translation: a pure function of a snapshot (and the time to stamp on conditions)
// giving the statuses gw writes and the effective listeners, with their routes, of each Gateway.
import type { Snapshot } from '../snapshot.ts';
import { gatewayClassStatuses } from './gateway-classes.ts';
import { evaluateGateways, gatewayStatus, type ListenerSetState, listenerSetStatus } from './listeners.ts';
import { attachRoutes } from './routes.ts';
import type { GatewayApiResult } from './types.ts';

export type * from './types.ts';
export { CONTROLLER_NAME } from './types.ts';

/**
 * Translates the Gateway API objects. With a `scope` (Gateway keys), only those Gateways, their
 * ListenerSets and the routes attached to them are translated: the controller's fast path uses
 * it to rebuild the configuration of the Gateways a change touches; statuses of routes that also
 * have parents outside the scope are then partial and must not be written.
 */
export function translateGatewayApi(snapshot: Snapshot, now: string, scope?: ReadonlySet<string>): GatewayApiResult {
  const gateways = evaluateGateways(snapshot, scope);
  const routeStatuses = attachRoutes(snapshot, gateways, now);
  const result: GatewayApiResult = {
    gatewayClassStatuses: gatewayClassStatuses(snapshot, now),
    gatewayStatuses: new Map(),
    listenerSetStatuses: new Map(),
    routeStatuses,
    listeners: new Map(),
  };
  const listenerSets: ListenerSetState[] = [];
  for (const [key, state] of gateways) {
    result.gatewayStatuses.set(key, gatewayStatus(state, now));
    result.listeners.set(
      key,
      state.listeners.map((l) => l.listener),
    );
    listenerSets.push(...state.listenerSets);
  }
  listenerSets.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  for (const set of listenerSets) result.listenerSetStatuses.set(set.key, listenerSetStatus(set, now));
  return result;
}
