// backendRefs of HTTPRoute rules: which kinds gw serves, and whether each reference resolves.
import type { ServiceSpec } from '../../api/kinds/core/service.ts';
import type { HTTPBackendRef } from '../../api/kinds/gateway-api/http-route.ts';
import type { Snapshot } from '../snapshot.ts';
import { type BackendProblem, GW_GROUP, type RouteBackendRef } from './types.ts';

export interface BackendRefResult {
  ref: RouteBackendRef;
  /** Why the reference cannot be used, for the route's ResolvedRefs condition. */
  message?: string;
}

function problem(ref: RouteBackendRef, reason: BackendProblem, message: string): BackendRefResult {
  ref.problem = reason;
  return { ref, message };
}

/**
 * Resolves one backendRef of a route in `routeNamespace`. Checks, in order: the kind is one gw
 * serves (core Service, gw.dev GwBackend, or gw.dev GwModel named `*`, which stands for the
 * GwModels attached to the route); the reference stays in the route's namespace (ReferenceGrant
 * is not supported); the object exists, and a Service has the port.
 */
export function resolveBackendRef(snapshot: Snapshot, spec: HTTPBackendRef, routeNamespace: string): BackendRefResult {
  const group = spec.group ?? '';
  const kind = spec.kind ?? 'Service';
  const namespace = spec.namespace ?? routeNamespace;
  const ref: RouteBackendRef = {
    group,
    kind,
    name: spec.name,
    namespace,
    ...(spec.port !== undefined ? { port: spec.port } : {}),
    weight: spec.weight ?? 1,
  };
  if (spec.filters && spec.filters.length > 0) ref.filters = structuredClone(spec.filters);
  const what = `backendRef ${group || 'core'}/${kind} ${namespace}/${spec.name}`;

  const isService = group === '' && kind === 'Service';
  const isBackend = group === GW_GROUP && kind === 'GwBackend';
  const isModel = group === GW_GROUP && kind === 'GwModel';
  if (!isService && !isBackend && !isModel) {
    return problem(
      ref,
      'InvalidKind',
      `${what}: kind not supported (gw serves Service, gw.dev/GwBackend and gw.dev/GwModel *)`,
    );
  }
  if (isModel && spec.name !== '*') {
    return problem(ref, 'InvalidKind', `${what}: a GwModel backendRef must be named * (GwModels attach to the route)`);
  }
  if (namespace !== routeNamespace) {
    return problem(
      ref,
      'RefNotPermitted',
      `${what}: a backend in another namespace is not permitted (gw does not support ReferenceGrant)`,
    );
  }
  if (isModel) return { ref };
  if (isBackend) {
    if (!snapshot.backends.has(`${namespace}/${spec.name}`))
      return problem(ref, 'BackendNotFound', `${what}: not found`);
    return { ref };
  }
  const service = snapshot.services.get(`${namespace}/${spec.name}`);
  if (!service) return problem(ref, 'BackendNotFound', `${what}: not found`);
  if (spec.port === undefined) return problem(ref, 'BackendNotFound', `${what}: a Service backendRef needs a port`);
  const ports = (service.spec as ServiceSpec | undefined)?.ports ?? [];
  // An ExternalName or headless Service may list no ports; any port is then taken as given.
  if (ports.length > 0 && !ports.some((p) => p.port === spec.port)) {
    return problem(ref, 'BackendNotFound', `${what}: the Service has no port ${spec.port}`);
  }
  return { ref };
}
