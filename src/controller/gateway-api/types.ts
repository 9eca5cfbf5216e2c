// The result of translating the Gateway API objects of a snapshot: statuses to write and, per
// Gateway, the effective listeners with the routes attached to them. Everything here is plain
// data (no Maps inside values, no functions) so it can be serialised into the data-plane config.
import type { GatewayStatus } from '../../api/kinds/gateway-api/gateway.ts';
import type { GatewayClassStatus } from '../../api/kinds/gateway-api/gateway-class.ts';
import type { HTTPRouteFilter, HTTPRouteStatus, HTTPRouteTimeouts } from '../../api/kinds/gateway-api/http-route.ts';
import type { ListenerSetStatus } from '../../api/kinds/gateway-api/listener-set.ts';
import type { AllowedRoutes, RouteGroupKind } from '../../api/kinds/gateway-api/shared.ts';
import type { RouteMatch } from '../../contract/dataplane-config.ts';

/** The controllerName of gw's GatewayClasses, and the controllerName gw writes in route status. */
export const CONTROLLER_NAME = 'gw.dev/gateway-controller';
export const GATEWAY_GROUP = 'gateway.networking.k8s.io';
export const GW_GROUP = 'gw.dev';

/** The object that defines a listener: its Gateway, or the ListenerSet that added it. */
export interface ListenerSource {
  kind: 'Gateway' | 'ListenerSet';
  namespace: string;
  name: string;
}

export interface CertificateRef {
  namespace: string;
  name: string;
}

export interface EffectiveTLS {
  mode: 'Terminate' | 'Passthrough';
  certificateRefs: CertificateRef[];
  options?: Record<string, string>;
}

/**
 * The route's ResolvedRefs reasons for a backendRef it cannot use: Gateway API's, and
 * BackendNotAccepted for a GwBackend whose own Accepted condition is False (docs/api.md).
 */
export type BackendProblem = 'BackendNotFound' | 'BackendNotAccepted' | 'InvalidKind' | 'RefNotPermitted';

export interface RouteBackendRef {
  group: string;
  kind: string;
  name: string;
  namespace: string;
  port?: number;
  weight: number;
  filters?: HTTPRouteFilter[];
  /** Why the reference cannot be used; the data plane answers its share of requests with 500. */
  problem?: BackendProblem;
  /** The problem's message (as the route's ResolvedRefs says it), for the 500 its requests get. */
  problemMessage?: string;
}

export interface RouteRule {
  name?: string;
  matches: RouteMatch[];
  filters?: HTTPRouteFilter[];
  backendRefs: RouteBackendRef[];
  timeouts?: HTTPRouteTimeouts;
}

export interface AttachedRoute {
  namespace: string;
  name: string;
  /** The intersection of the route's and the listener's hostnames; empty means any host. */
  hostnames: string[];
  rules: RouteRule[];
}

export interface EffectiveListener {
  name: string;
  source: ListenerSource;
  port: number;
  protocol: string;
  hostname?: string;
  tls?: EffectiveTLS;
  allowedRoutes: AllowedRoutes;
  supportedKinds: RouteGroupKind[];
  /** Accepted, not conflicted, certificates resolved and at least one route kind supported. */
  programmed: boolean;
  routes: AttachedRoute[];
}

export interface GatewayApiResult {
  /** By GatewayClass name; only gw's classes. */
  gatewayClassStatuses: Map<string, GatewayClassStatus>;
  /** By "namespace/name"; only Gateways of gw's classes. */
  gatewayStatuses: Map<string, GatewayStatus>;
  /** By "namespace/name"; only ListenerSets whose parent is a gw Gateway. */
  listenerSetStatuses: Map<string, ListenerSetStatus>;
  /** By "namespace/name"; only routes with at least one parentRef to a gw Gateway or ListenerSet. */
  routeStatuses: Map<string, HTTPRouteStatus>;
  /** By Gateway "namespace/name": the effective listeners in precedence order. */
  listeners: Map<string, EffectiveListener[]>;
}
