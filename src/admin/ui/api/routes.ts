// Routes & backends: every HTTPRoute with its hostnames, parents (and their statuses) and rules
// (name, matches, backends); the backends (GwBackends, and the Services routes send traffic to);
// and the effective policy at a route, a rule, a backend or a backend's section, exactly as
// gw explain computes it (controller/policies/explanation.ts).
import type { HTTPRouteSpec } from '../../../api/kinds/gateway-api/http-route.ts';
import { explainBackend, explainRoute } from '../../../controller/policies/explanation.ts';
import { SNAPSHOT_KINDS } from '../../../controller/snapshot.ts';
import { objectStatuses } from '../../../controller/status-report.ts';
import { json, problem, type UiEndpoint } from './endpoint.ts';
import { liveWorld, WHERE } from './live-world.ts';
import { objectRef } from './object-ref.ts';

export const routesEndpoint: UiEndpoint = {
  method: 'GET',
  path: '/ui/api/routes',
  handle: ({ sources }) => {
    const store = sources.controller.objects;
    const statuses = objectStatuses(store);
    const routes = store.list(SNAPSHOT_KINDS.httpRoutes).items.map((route) => {
      const namespace = route.metadata.namespace ?? 'default';
      const spec = route.spec as HTTPRouteSpec;
      const status = statuses.find(
        (s) => s.kindKey === SNAPSHOT_KINDS.httpRoutes && s.namespace === namespace && s.name === route.metadata.name,
      );
      return {
        ...objectRef({
          kindKey: SNAPSHOT_KINDS.httpRoutes,
          kind: 'HTTPRoute',
          namespace,
          name: route.metadata.name ?? '',
        }),
        hostnames: spec.hostnames ?? [],
        parents: status?.relations ?? [],
        rules: (spec.rules ?? []).map((rule, index) => ({
          index,
          name: rule.name,
          matches: rule.matches ?? [{ path: { type: 'PathPrefix', value: '/' } }],
          backendRefs: (rule.backendRefs ?? []).map((ref) => ({
            group: ref.group ?? '',
            kind: ref.kind ?? 'Service',
            namespace: ref.namespace ?? namespace,
            name: ref.name,
            port: ref.port,
            weight: ref.weight ?? 1,
          })),
          filters: (rule.filters ?? []).map((filter) => filter.type),
        })),
      };
    });
    const backends = [
      ...store.list(SNAPSHOT_KINDS.backends).items.map((backend) =>
        objectRef({
          kindKey: SNAPSHOT_KINDS.backends,
          kind: 'GwBackend',
          namespace: backend.metadata.namespace,
          name: backend.metadata.name ?? '',
        }),
      ),
      ...store.list(SNAPSHOT_KINDS.services).items.map((service) =>
        objectRef({
          kindKey: SNAPSHOT_KINDS.services,
          kind: 'Service',
          namespace: service.metadata.namespace,
          name: service.metadata.name ?? '',
        }),
      ),
    ];
    return json({ routes, backends });
  },
};

/** ?what=route|backend&namespace=...&name=...[&section=...]: gw explain's answer, as data. */
export const explainEndpoint: UiEndpoint = {
  method: 'GET',
  path: '/ui/api/explain',
  handle: ({ sources }, { query }) => {
    const what = query.get('what');
    const namespace = query.get('namespace');
    const name = query.get('name');
    if ((what !== 'route' && what !== 'backend') || !namespace || !name)
      return problem(400, 'give what=route|backend, namespace and name (and section for a rule or a backend section)');
    const section = query.get('section') || undefined;
    const world = liveWorld(sources);
    const target = { namespace, name, section };
    const explanation =
      what === 'route'
        ? explainRoute(world.snapshot, world.listeners, target, WHERE)
        : explainBackend(world.snapshot, world.listeners, target, WHERE);
    if ('problem' in explanation) return problem(404, explanation.problem);
    return json(explanation);
  },
};
