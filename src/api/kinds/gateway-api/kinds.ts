// The Gateway API kinds gw acts on (gateway.networking.k8s.io/v1; ReferenceGrant stored in v1beta1,
// served in v1 too, as upstream does). Fields gw does not model are reported as warnings, not
// errors: a real cluster with the upstream CRDs accepts them.
import { defineKind, type KindDefinition } from '../kind.ts';
import { GatewaySpec, GatewayStatus } from './gateway.ts';
import { GatewayClassSpec, GatewayClassStatus } from './gateway-class.ts';
import { HTTPRouteSpec, HTTPRouteStatus } from './http-route.ts';
import { ListenerSetSpec, ListenerSetStatus } from './listener-set.ts';
import { ReferenceGrantSpec } from './reference-grant.ts';
import { GATEWAY_API_GROUP } from './shared.ts';

const common = { group: GATEWAY_API_GROUP, version: 'v1', unknownFields: 'warn' as const };

export const gatewayApiKinds: KindDefinition[] = [
  defineKind({
    ...common,
    kind: 'GatewayClass',
    plural: 'gatewayclasses',
    namespaced: false,
    description: 'A class of Gateways and the controller that implements them.',
    fields: { spec: { requiredField: GatewayClassSpec }, status: GatewayClassStatus },
  }),
  defineKind({
    ...common,
    kind: 'Gateway',
    plural: 'gateways',
    namespaced: true,
    description: 'A set of listeners where traffic enters.',
    fields: { spec: { requiredField: GatewaySpec }, status: GatewayStatus },
  }),
  defineKind({
    ...common,
    kind: 'ListenerSet',
    plural: 'listenersets',
    namespaced: true,
    description: 'Listeners attached to a Gateway from outside its spec.',
    fields: { spec: { requiredField: ListenerSetSpec }, status: ListenerSetStatus },
  }),
  defineKind({
    ...common,
    kind: 'HTTPRoute',
    plural: 'httproutes',
    namespaced: true,
    description: 'Rules that route HTTP requests from Gateway listeners to backends.',
    fields: { spec: { requiredField: HTTPRouteSpec }, status: HTTPRouteStatus },
  }),
  // v1beta1 is what every Gateway API release since 0.6 serves (and what upstream stores); v1
  // came with 1.6. A cluster is read at v1beta1, so older Gateway API installations work too.
  defineKind({
    ...common,
    version: 'v1beta1',
    servedVersions: ['v1', 'v1beta1'],
    kind: 'ReferenceGrant',
    plural: 'referencegrants',
    namespaced: true,
    description: 'Consent, in its namespace, to references from other namespaces.',
    fields: { spec: { requiredField: ReferenceGrantSpec } },
  }),
];
