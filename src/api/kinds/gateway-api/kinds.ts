// The Gateway API kinds gw acts on (gateway.networking.k8s.io/v1; ReferenceGrant stored in v1beta1,
// served in v1 too, as upstream does). Fields gw does not model are reported as warnings, not
// errors: a real cluster with the upstream CRDs accepts them.
import { defineKind, type KindDefinition, type PrinterColumn } from '../kind.ts';
import { GatewaySpec, GatewayStatus } from './gateway.ts';
import { GatewayClassSpec, GatewayClassStatus } from './gateway-class.ts';
import { HTTPRouteSpec, HTTPRouteStatus } from './http-route.ts';
import { ListenerSetSpec, ListenerSetStatus } from './listener-set.ts';
import { ReferenceGrantSpec } from './reference-grant.ts';
import { GATEWAY_API_GROUP } from './shared.ts';

const common = { group: GATEWAY_API_GROUP, version: 'v1', unknownFields: 'warn' as const };

/**
 * The Gateway API release whose standard-channel shapes these kinds follow; the CRDs gw generates
 * for them say so (`gateway.networking.k8s.io/bundle-version`), as the upstream CRDs do.
 */
export const GATEWAY_API_BUNDLE_VERSION = 'v1.6.0';

// The columns `kubectl get` shows, those of the upstream CRDs: in gw's CRDs and the embedded API server's tables.
const AGE: PrinterColumn = { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' };
const conditionStatus = (type: string): PrinterColumn => ({
  name: type,
  type: 'string',
  jsonPath: `.status.conditions[?(@.type=="${type}")].status`,
});

export const gatewayApiKinds: KindDefinition[] = [
  defineKind({
    ...common,
    kind: 'GatewayClass',
    plural: 'gatewayclasses',
    namespaced: false,
    description: 'A class of Gateways and the controller that implements them.',
    printerColumns: [
      { name: 'Controller', type: 'string', jsonPath: '.spec.controllerName' },
      conditionStatus('Accepted'),
      AGE,
      { name: 'Description', type: 'string', jsonPath: '.spec.description', priority: 1 },
    ],
    fields: { spec: { requiredField: GatewayClassSpec }, status: GatewayClassStatus },
  }),
  defineKind({
    ...common,
    kind: 'Gateway',
    plural: 'gateways',
    namespaced: true,
    description: 'A set of listeners where traffic enters.',
    printerColumns: [
      { name: 'Class', type: 'string', jsonPath: '.spec.gatewayClassName' },
      { name: 'Address', type: 'string', jsonPath: '.status.addresses[*].value' },
      conditionStatus('Programmed'),
      AGE,
    ],
    fields: { spec: { requiredField: GatewaySpec }, status: GatewayStatus },
  }),
  defineKind({
    ...common,
    kind: 'ListenerSet',
    plural: 'listenersets',
    namespaced: true,
    description: 'Listeners attached to a Gateway from outside its spec.',
    printerColumns: [conditionStatus('Accepted'), conditionStatus('Programmed'), AGE],
    fields: { spec: { requiredField: ListenerSetSpec }, status: ListenerSetStatus },
  }),
  defineKind({
    ...common,
    kind: 'HTTPRoute',
    plural: 'httproutes',
    namespaced: true,
    description: 'Rules that route HTTP requests from Gateway listeners to backends.',
    printerColumns: [{ name: 'Hostnames', type: 'string', jsonPath: '.spec.hostnames' }, AGE],
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
