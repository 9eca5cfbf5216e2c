// backendRefs of HTTPRoute rules: which kinds gw serves, and whether each reference resolves.
import type { ServiceSpec } from '../../api/kinds/core/service.ts';
import type { HTTPBackendRef } from '../../api/kinds/gateway-api/http-route.ts';
import { backendAcceptance } from '../backends/acceptance.ts';
import { missingReferenceGrant } from '../reference-grants.ts';
import type { Snapshot } from '../snapshot.ts';
import { type BackendProblem, GATEWAY_GROUP, GW_GROUP, type RouteBackendRef } from './types.ts';

export interface BackendRefResult {
  ref: RouteBackendRef;
  /** Why the reference cannot be used, for the route's ResolvedRefs condition. */
  message?: string;
}

function problem(ref: RouteBackendRef, reason: BackendProblem, message: string): BackendRefResult {
  ref.problem = reason;
  ref.problemMessage = message;
  return { ref, message };
}

/**
 * Resolves one backendRef of a route in `routeNamespace`. Checks, in order: the kind is one gw
 * serves (core Service, gw.dev GwBackend, or gw.dev GwModel named `*`, which stands for the
 * GwModels attached to the route); a reference into another namespace is allowed by a
 * ReferenceGrant there; the object exists; a GwBackend is accepted (backends/acceptance.ts); a
 * Service has the port.
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
  if (isModel) {
    if (spec.name !== '*') {
      return problem(
        ref,
        'InvalidKind',
        `${what}: a GwModel backendRef must be named * (GwModels attach to the route)`,
      );
    }
    if (namespace !== routeNamespace) {
      return problem(
        ref,
        'RefNotPermitted',
        `${what}: the GwModel backendRef stands for the models attached to this route and takes no namespace (a GwModel of another namespace attaches through its parentRefs, with a ReferenceGrant)`,
      );
    }
    return { ref };
  }
  const refused = missingReferenceGrant(snapshot, {
    from: { group: GATEWAY_GROUP, kind: 'HTTPRoute', namespace: routeNamespace },
    to: { group, kind, namespace, name: spec.name },
  });
  if (refused) return problem(ref, 'RefNotPermitted', `${what}: ${refused}`);
  if (isBackend) {
    const backend = snapshot.backends.get(`${namespace}/${spec.name}`);
    if (!backend) return problem(ref, 'BackendNotFound', `${what}: not found`);
    const acceptance = backendAcceptance(backend);
    if (!acceptance.accepted) {
      return problem(
        ref,
        'BackendNotAccepted',
        `${what}: the GwBackend is not Accepted (${acceptance.reason}): ${acceptance.message}`,
      );
    }
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
