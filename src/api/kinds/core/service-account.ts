// Core v1 ServiceAccount: the identity the data-plane pods run as (their RBAC binds to it). It has
// no spec; ServiceAccountFields describes its top-level fields.
import { array, boolean, named, object, string } from '../../schema/build.ts';
import type { Infer } from '../../schema/schema.ts';

export const ServiceAccountFields = named(
  {
    name: 'ServiceAccountFields',
    description: 'The top-level fields of a ServiceAccount.',
    source: 'core',
    notes: 'A core v1 ServiceAccount has no spec; these fields sit beside apiVersion, kind and metadata.',
  },
  object({
    secrets: array(
      object({
        name: string({ description: 'Name of the Secret.' }),
        namespace: string({ description: 'Namespace of the Secret.' }),
        kind: string({ description: 'Secret.' }),
        apiVersion: string({ description: 'v1.' }),
        uid: string({ description: 'UID of the Secret.' }),
        fieldPath: string({ description: 'Unused for Secrets.' }),
        resourceVersion: string({ description: 'Version of the Secret seen.' }),
      }),
      { patchMergeKey: 'name', description: 'Secrets of the account (legacy token Secrets).' },
    ),
    imagePullSecrets: array(object({ name: string({ description: 'Name of the Secret.' }) }), {
      listType: 'atomic',
      description: 'Registry credentials added to the pods that run as the account.',
    }),
    automountServiceAccountToken: boolean({
      description: "Whether pods mount the account's API token unless they say otherwise.",
    }),
  }),
);
export type ServiceAccountFields = Infer<typeof ServiceAccountFields>;
