// A dynamicForwardProxy GwBackend can reach any destination its rules permit, so a route to it
// without authorization lets every client of the listener use the gateway as an open proxy. The
// controller looks at the effective policies of each rule sending to one (the rule's traffic
// policy, the listener's PreRouting policy and frontend) and warns in the GwBackend's status,
// naming each route left open (decision 0044). Authentication alone does not count: it says who
// the client is, not where it may go.
import type { DataPlaneConfig, ListenerConfig, RuleConfig, TrafficConfig } from '../../contract/dataplane-config.ts';

/** What counts as an authorization policy covering a route to a forward proxy. */
export const AUTHORIZATION_FIELDS = 'traffic.authorization, traffic.extAuth or frontend.networkAuthorization';

function authorizes(traffic: TrafficConfig | undefined): boolean {
  return traffic?.authorization !== undefined || traffic?.extAuth !== undefined;
}

function covered(listener: ListenerConfig, rule: RuleConfig): boolean {
  return (
    authorizes(rule.traffic) || authorizes(listener.preRouting) || listener.frontend.networkAuthorization !== undefined
  );
}

/** Where a forward proxy is reached from, and whether authorization covers each path. */
export interface ForwardProxyRoutes {
  /** Every route rule sending to the backend, as the status names it. */
  readonly all: string[];
  /** Those no authorization policy covers. */
  readonly open: string[];
}

/** For each dynamicForwardProxy GwBackend ("ns/name") a route sends to, its routes and the open ones. */
export function forwardProxyRoutes(configs: ReadonlyMap<string, DataPlaneConfig>): Map<string, ForwardProxyRoutes> {
  const found = new Map<string, { all: Set<string>; open: Set<string> }>();
  for (const [gateway, config] of configs)
    for (const listener of config.listeners)
      for (const route of listener.routes)
        route.rules.forEach((rule, index) => {
          for (const ref of rule.backendRefs) {
            const object = config.backends[ref.backend];
            if (object?.kind !== 'GwBackend' || object.spec.dynamicForwardProxy === undefined) continue;
            const key = ref.backend.slice(ref.backend.indexOf(' ') + 1);
            const where = `HTTPRoute ${route.route} rule ${rule.name ?? index} (Gateway ${gateway} listener ${listener.name})`;
            const entry = found.get(key) ?? { all: new Set<string>(), open: new Set<string>() };
            found.set(key, entry);
            entry.all.add(where);
            if (!covered(listener, rule)) entry.open.add(where);
          }
        });
  return new Map([...found].map(([key, { all, open }]) => [key, { all: [...all].sort(), open: [...open].sort() }]));
}
