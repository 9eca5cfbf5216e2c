// GwParameters (spec document 1, "GwParameters"): how a Gateway's data plane is provisioned.
import { named, object } from '../schema/build.ts';
import type { Infer } from '../schema/schema.ts';
import { GwParametersSpec } from '../types/provisioning.ts';
import { conditions } from './gateway-api/shared.ts';
import { GW_GROUP, GW_VERSION } from './gw-backend.ts';
import { defineKind } from './kind.ts';

/** The spec does not show GwParameters status; gw reports conditions (Accepted) as for GwBackend. */
export const GwParametersStatus = named(
  {
    name: 'GwParametersStatus',
    description: 'State of these parameters as the controller last observed them.',
    source: 'gw',
    notes:
      'Not shown in the spec. gw writes conditions (at most 8), as on GwBackend, so that invalid parameters are visible.',
  },
  object({
    conditions: conditions({
      description: 'Latest observations of the parameters: Accepted says whether the controller can use them.',
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
  printerColumns: [{ name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' }],
});
