// Gateway API GatewayClass (cluster-scoped): which controller implements Gateways of the class.
import { array, named, object, refine, required, string } from '../../schema/build.ts';
import type { Infer } from '../../schema/schema.ts';
import { Group, Kind, ObjectName } from '../../types/common.ts';
import { conditions, GatewayController, Namespace, pendingConditions } from './shared.ts';

export const ParametersReference = named(
  {
    name: 'ParametersReference',
    description: 'The object holding the parameters of a GatewayClass.',
    source: 'gateway-api',
  },
  object({
    group: required(Group),
    kind: required(Kind),
    name: required(ObjectName),
    namespace: refine(Namespace, {
      description: 'Required for a namespaced parameters resource; omitted for a cluster-scoped one.',
    }),
  }),
);
export type ParametersReference = Infer<typeof ParametersReference>;

export const GatewayClassSpec = named(
  {
    name: 'GatewayClassSpec',
    description: 'The controller that manages Gateways of this class, and their parameters.',
    source: 'gateway-api',
  },
  object({
    controllerName: required(
      refine(GatewayController, {
        description: 'The controller that manages Gateways of this class; cannot be changed.',
      }),
    ),
    parametersRef: refine(ParametersReference, {
      description: 'Controller-specific configuration for the class (for gw: a GwParameters).',
    }),
    description: string({ maxLength: 64, description: 'Human-readable description of the class.' }),
  }),
);
export type GatewayClassSpec = Infer<typeof GatewayClassSpec>;

export const SupportedFeature = named(
  { name: 'SupportedFeature', description: 'A Gateway API feature the controller supports.', source: 'gateway-api' },
  object({ name: required(string({ description: 'Name of a Gateway API feature the controller supports.' })) }),
);
export type SupportedFeature = Infer<typeof SupportedFeature>;

export const GatewayClassStatus = named(
  {
    name: 'GatewayClassStatus',
    description: 'Whether the controller accepted this class, and the features it supports.',
    source: 'gateway-api',
    notes:
      'Condition types: Accepted (Accepted, InvalidParameters, Pending, Unsupported) and SupportedVersion (SupportedVersion, UnsupportedVersion).',
  },
  object({
    conditions: refine(conditions(), { default: pendingConditions(['Accepted']) }),
    supportedFeatures: array(SupportedFeature, {
      maxItems: 64,
      listType: 'map',
      listMapKeys: ['name'],
      description: 'Gateway API features the controller supports for this class.',
    }),
  }),
);
export type GatewayClassStatus = Infer<typeof GatewayClassStatus>;
