// GwParameters (spec document 1, "GwParameters"): how a Gateway's data plane is provisioned.
import { array, integer, named, object, required } from '../schema/build.ts';
import type { Infer } from '../schema/schema.ts';
import { ObjectName } from '../types/common.ts';
import { GwParametersSpec } from '../types/provisioning.ts';
import { conditions, Namespace } from './gateway-api/shared.ts';
import { GW_GROUP, GW_VERSION } from './gw-backend.ts';
import { defineKind } from './kind.ts';

/** How many users a GwParameters status lists by name; the counts cover the rest. */
export const MAX_LISTED_USERS = 64;

export const GwParametersGatewayReference = named(
  {
    name: 'GwParametersGatewayReference',
    description: 'A Gateway whose data plane these parameters provision.',
    source: 'gw',
  },
  object({ namespace: required(Namespace), name: required(ObjectName) }),
);

export const GwParametersClassReference = named(
  {
    name: 'GwParametersClassReference',
    description: 'A GatewayClass whose parametersRef names these parameters.',
    source: 'gw',
  },
  object({ name: required(ObjectName) }),
);

/** The spec does not show GwParameters status; gw's is recorded in docs/decisions/0038-gw-parameters-status.md. */
export const GwParametersStatus = named(
  {
    name: 'GwParametersStatus',
    description: 'Who uses these parameters and whether the controller can provision with them, as it last observed.',
    source: 'gw',
    notes:
      'Not shown in the spec (docs/decisions/0038-gw-parameters-status.md). Written by the controller that provisions (gw controller, gw run --provision). Accepted is False with reason InvalidParameters when a field cannot be provisioned for some Gateway: the message names each field and the Gateways concerned.',
  },
  object({
    conditions: conditions({
      description:
        'Latest observations of the parameters: Accepted (True: every Gateway using them can be provisioned; False, reason InvalidParameters: the message names each field that cannot), written by a controller that provisions; ModelCatalogResolved (only with spec.modelCatalog: Resolved, RefNotFound, InvalidModelCatalog or Ignored), written by every gw controller.',
    }),
    gatewayClasses: array(GwParametersClassReference, {
      maxItems: MAX_LISTED_USERS,
      listType: 'atomic',
      description: `The GatewayClasses of gw whose spec.parametersRef names these parameters (the first ${MAX_LISTED_USERS} by name).`,
    }),
    gateways: array(GwParametersGatewayReference, {
      maxItems: MAX_LISTED_USERS,
      listType: 'atomic',
      description: `The Gateways provisioned with these parameters, through their GatewayClass or their own spec.infrastructure.parametersRef (the first ${MAX_LISTED_USERS} by namespace and name).`,
    }),
    attachedGateways: integer({
      format: 'int32',
      minimum: 0,
      description: 'How many Gateways are provisioned with these parameters (all of them, listed or not).',
    }),
  }),
);
export type GwParametersStatus = Infer<typeof GwParametersStatus>;

export const GwParametersKind = defineKind({
  group: GW_GROUP,
  version: GW_VERSION,
  kind: 'GwParameters',
  plural: 'gwparameters',
  namespaced: true,
  shortNames: ['gwpar'],
  categories: ['gw'],
  crd: true,
  description:
    "Provisioning of a Gateway's managed data plane: workload, image, logging, overlays, mesh and model catalog.",
  fields: { spec: { requiredField: GwParametersSpec }, status: GwParametersStatus },
  printerColumns: [
    {
      name: 'Accepted',
      type: 'string',
      jsonPath: ".status.conditions[?(@.type=='Accepted')].status",
      description: 'Whether every Gateway using the parameters can be provisioned',
    },
    {
      name: 'Gateways',
      type: 'integer',
      jsonPath: '.status.attachedGateways',
      description: 'How many Gateways are provisioned with the parameters',
    },
    { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' },
  ],
});
