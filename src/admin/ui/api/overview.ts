// The Overview: each Gateway with its addresses, its listeners (port, protocol, hostname, the
// routes attached, whether its port is bound) and their conditions; and every problem the
// controller or the data plane reports — a condition that says something is wrong on any object
// (a refused field, an unresolved reference, a port that cannot be bound), and the objects the
// source could not read (an invalid file, an object the API server refused) — each naming its object.
import type { Condition } from '../../../api/kinds/gateway-api/shared.ts';
import { SNAPSHOT_KINDS } from '../../../controller/snapshot.ts';
import {
  isProblem,
  type ObjectStatus,
  refText,
  statusesByObject,
  statusKey,
} from '../../../controller/status-report.ts';
import { json, type UiEndpoint } from './endpoint.ts';
import { objectRef, refOf } from './object-ref.ts';

interface Problem {
  object?: ReturnType<typeof objectRef>;
  /** Where on the object: "listener http", "parent Gateway default/gw". */
  where?: string;
  /** The file or the API server the problem was found in, for an object that could not be read. */
  source?: string;
  type?: string;
  reason?: string;
  message: string;
}

function problemsOf(status: ObjectStatus): Problem[] {
  const object = objectRef(status);
  const of = (conditions: readonly Condition[], where?: string) =>
    conditions
      .filter(isProblem)
      .map((c) => ({ object, ...(where && { where }), type: c.type, reason: c.reason, message: c.message }));
  return [
    ...of(status.conditions),
    ...status.listeners.flatMap((listener) => of(listener.conditions, `listener ${listener.name}`)),
    ...status.relations.flatMap((relation) => of(relation.conditions, `${relation.role} ${refText(relation.ref)}`)),
  ];
}

interface ListenerSpec {
  name: string;
  port: number;
  protocol: string;
  hostname?: string;
}

export const overviewEndpoint: UiEndpoint = {
  method: 'GET',
  path: '/ui/api/overview',
  handle: ({ sources }) => {
    const store = sources.controller.objects;
    const statuses = statusesByObject(store);
    const unbound = sources.unboundPorts();
    const served = sources.controller.currentConfigs;
    const gateways = store.list(SNAPSHOT_KINDS.gateways).items.map((gateway) => {
      const key = `${gateway.metadata.namespace}/${gateway.metadata.name}`;
      const status = statuses.get(
        statusKey(SNAPSHOT_KINDS.gateways, gateway.metadata.namespace, gateway.metadata.name ?? ''),
      );
      const specListeners = ((gateway.spec as { listeners?: ListenerSpec[] }).listeners ?? []) as ListenerSpec[];
      const config = served.get(key);
      return {
        ...refOf(SNAPSHOT_KINDS.gateways, gateway),
        className: (gateway.spec as { gatewayClassName?: string }).gatewayClassName,
        served: config !== undefined,
        addresses: ((gateway.status as { addresses?: { value: string }[] } | undefined)?.addresses ?? []).map(
          (a) => a.value,
        ),
        conditions: status?.conditions ?? [],
        listeners: specListeners.map((listener) => {
          const reported = status?.listeners.find((l) => l.name === listener.name);
          const bindProblem = unbound.get(listener.port);
          return {
            name: listener.name,
            port: listener.port,
            protocol: listener.protocol,
            hostname: listener.hostname,
            address: config?.listeners.some((l) => l.name === listener.name)
              ? `${sources.listenAddress}:${listener.port}`
              : undefined,
            bound: config !== undefined && bindProblem === undefined,
            ...(bindProblem && { bindProblem: bindProblem.reason }),
            attachedRoutes: reported?.attachedRoutes ?? 0,
            conditions: reported?.conditions ?? [],
          };
        }),
      };
    });
    const problems: Problem[] = [
      ...store.problems().map((p) => ({ source: p.source, message: p.message })),
      ...[...statuses.values()].flatMap(problemsOf),
    ];
    const counts = Object.fromEntries(
      Object.entries(SNAPSHOT_KINDS).map(([, kindKey]) => [kindKey.split('/')[1], store.list(kindKey).items.length]),
    );
    return json({ source: sources.source.kind, gateways, problems, counts });
  },
};
