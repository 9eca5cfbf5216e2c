// What provisioning needs of a Gateway: its identity (for names, labels and the owner reference)
// and its listeners' ports (for the Service). Kept apart from the API types so the module stays pure.

export interface ProvisionedGateway {
  name: string;
  namespace: string;
  uid: string;
  gatewayClassName: string;
  listeners: readonly { name: string; port: number; protocol: string }[];
}

/** A field of the effective GwParameters gw cannot provision, and why. */
export interface ProvisioningProblem {
  /** Path within GwParametersSpec, e.g. `spec.mesh`. */
  field: string;
  message: string;
}
