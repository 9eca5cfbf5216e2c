// GwBackend status: Accepted (as acceptance.ts judges the backend's own spec) and ResolvedRefs
// (every Secret, ConfigMap, Service and GwBackend it names exists in its namespace, and every
// Secret a backend authentication reads holds what it needs: secret-contents.ts); for a
// dynamicForwardProxy a route sends to, Authorized (./forward-proxy-authorization.ts).
import type { GwBackendStatus } from '../../api/kinds/gw-backend.ts';
import type { KubeObject } from '../../api/validate/admission.ts';
import type { DataPlaneConfig } from '../../contract/dataplane-config.ts';
import { type ConditionContext, condition, contextOf, sortConditions } from '../gateway-api/conditions.ts';
import { missingReferences } from '../references.ts';
import { INVALID_CREDENTIAL_REF, secretContentProblems } from '../secret-contents.ts';
import type { Snapshot } from '../snapshot.ts';
import { backendAcceptance } from './acceptance.ts';
import { AUTHORIZATION_FIELDS, type ForwardProxyRoutes, forwardProxyRoutes } from './forward-proxy-authorization.ts';

export function backendStatus(
  backend: KubeObject,
  snapshot: Snapshot,
  now: string,
  proxyRoutes?: ForwardProxyRoutes,
): GwBackendStatus {
  const context = contextOf(backend, now);
  const namespace = backend.metadata.namespace ?? 'default';
  const missing = missingReferences(backend.spec, namespace, snapshot);
  const invalid = secretContentProblems(backend.spec, namespace, snapshot);
  const acceptance = backendAcceptance(backend);
  return {
    conditions: sortConditions([
      acceptance.accepted
        ? condition(context, 'Accepted', true, 'Accepted', 'Backend accepted')
        : condition(context, 'Accepted', false, acceptance.reason, acceptance.message),
      missing.length > 0
        ? condition(context, 'ResolvedRefs', false, 'RefNotFound', [...missing, ...invalid].join('; '))
        : invalid.length > 0
          ? condition(context, 'ResolvedRefs', false, INVALID_CREDENTIAL_REF, invalid.join('; '))
          : condition(context, 'ResolvedRefs', true, 'ResolvedRefs', 'All references resolved'),
      ...(proxyRoutes ? [authorizedCondition(context, proxyRoutes)] : []),
    ]),
  };
}

/**
 * A dynamic forward proxy's routes: Authorized False (NoAuthorizationPolicy) naming each route no
 * authorization policy covers — a warning: the backend is still accepted and served.
 */
function authorizedCondition(context: ConditionContext, routes: ForwardProxyRoutes) {
  if (routes.open.length === 0)
    return condition(
      context,
      'Authorized',
      true,
      'AuthorizationPolicy',
      `Every route to this dynamic forward proxy has ${AUTHORIZATION_FIELDS}`,
    );
  return condition(
    context,
    'Authorized',
    false,
    'NoAuthorizationPolicy',
    `${routes.open.join('; ')}: no authorization policy (${AUTHORIZATION_FIELDS}) covers this route to a dynamic forward proxy, so every client of the listener can reach any destination its rules permit; attach a GwPolicy with one`,
  );
}

/** Every GwBackend's status; `configs` (the Gateways' configurations) say which routes reach a forward proxy. */
export function backendStatuses(
  snapshot: Snapshot,
  now: string,
  configs: ReadonlyMap<string, DataPlaneConfig> = new Map(),
): Map<string, GwBackendStatus> {
  const statuses = new Map<string, GwBackendStatus>();
  const proxyRoutes = forwardProxyRoutes(configs);
  for (const key of [...snapshot.backends.keys()].sort())
    statuses.set(key, backendStatus(snapshot.backends.get(key)!, snapshot, now, proxyRoutes.get(key)));
  return statuses;
}
