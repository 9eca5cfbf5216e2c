// Routes & backends: every HTTPRoute with its hostnames, parents (and their statuses) and rules
// (name, matches, backends); the backends (GwBackends, and the Services routes send traffic to);
// and the effective policy at a route, a rule, a backend or a backend's section, exactly as
// gw explain computes it (controller/policies/explanation.ts), its inline credentials hidden
// (security/redaction.ts).
import type { HTTPRouteSpec } from '../../../api/kinds/gateway-api/http-route.ts';
import { type ExplainedSection, explain } from '../../../controller/policies/explanation.ts';
import { SNAPSHOT_KINDS } from '../../../controller/snapshot.ts';
import { statusesByObject, statusKey } from '../../../controller/status-report.ts';
import { redactPolicyField } from '../security/redaction.ts';
import { json, problem, type UiEndpoint } from './endpoint.ts';
import { liveWorld } from './live-world.ts';
import { refOf } from './object-ref.ts';

export const routesEndpoint: UiEndpoint = {
  method: 'GET',
  path: '/ui/api/routes',
  handle: ({ sources }) => {
    const store = sources.controller.objects;
    const statuses = statusesByObject(store);
    const routes = store.list(SNAPSHOT_KINDS.httpRoutes).items.map((route) => {
      const namespace = route.metadata.namespace ?? 'default';
      const spec = route.spec as HTTPRouteSpec;
      const status = statuses.get(statusKey(SNAPSHOT_KINDS.httpRoutes, namespace, route.metadata.name ?? ''));
      return {
        ...refOf(SNAPSHOT_KINDS.httpRoutes, route),
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
    const backends = [SNAPSHOT_KINDS.backends, SNAPSHOT_KINDS.services].flatMap((kindKey) =>
      store.list(kindKey).items.map((object) => refOf(kindKey, object)),
    );
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
    const explanation = explain(liveWorld(sources), what, { namespace, name, section });
    if ('problem' in explanation) return problem(404, explanation.problem);
    if (explanation.what === 'backend') return json({ ...explanation, sections: explanation.sections.map(redacted) });
    const placements = explanation.placements.map((p) => ({ ...p, sections: p.sections.map(redacted) }));
    return json({ ...explanation, placements });
  },
};

/** A section of gw explain's answer with each field's inline credentials hidden. */
function redacted(section: ExplainedSection): ExplainedSection {
  const fields = section.fields.map((f) => ({ ...f, value: redactPolicyField(section.policy, f.field, f.value) }));
  return { ...section, fields };
}
