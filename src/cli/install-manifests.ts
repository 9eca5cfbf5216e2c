// gw install-manifests: the objects that install gw's control plane in a cluster (src/install/), as
// multi-document YAML. deploy/install.yaml is its output with the defaults.
import { parseArgs } from 'node:util';
import { stringify } from 'yaml';
import { DEFAULT_NAMESPACE, defaultImage, installManifests } from '../install/manifests.ts';
import { argsErrorText } from './args.ts';
import type { Io } from './io.ts';
import { gwVersion } from './version.ts';

export const INSTALL_MANIFESTS_USAGE = `usage: gw install-manifests [--namespace NAME] [--image REFERENCE]
  Prints what installs gw in a cluster, as multi-document YAML (deploy/install.yaml is the output
  with the defaults): the gw.dev CRDs, the controller's Namespace, ServiceAccount, ClusterRole,
  ClusterRoleBinding and Deployment, the gw-proxy ClusterRole of the data planes, and the
  GatewayClass gw. Install the Gateway API CRDs first (gw crds --gateway-api) unless the cluster
  has them:  gw install-manifests | kubectl apply --server-side -f -
  --namespace   the controller's namespace (default ${DEFAULT_NAMESPACE})
  --image       the controller's image (default ${defaultImage('VERSION')} at gw's version);
                the data planes' image is GwParameters' image field
`;

const OPTIONS = {
  namespace: { type: 'string' },
  image: { type: 'string' },
} as const;

/** A namespace name: a DNS label. */
const DNS_LABEL = /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/;

export function installManifestsCommand(args: string[], io: Io): number {
  let values: { namespace?: string; image?: string };
  try {
    ({ values } = parseArgs({ args, options: OPTIONS, allowPositionals: false }));
  } catch (error) {
    io.stderr(`gw install-manifests: ${argsErrorText(error, OPTIONS)}\n${INSTALL_MANIFESTS_USAGE}`);
    return 2;
  }
  const namespace = values.namespace ?? DEFAULT_NAMESPACE;
  if (!DNS_LABEL.test(namespace)) {
    io.stderr(
      `gw install-manifests: --namespace ${JSON.stringify(namespace)} is not a namespace name (lower-case letters, digits and '-', at most 63)\n`,
    );
    return 2;
  }
  if (values.image !== undefined && (values.image === '' || /\s/.test(values.image))) {
    io.stderr(`gw install-manifests: --image ${JSON.stringify(values.image)} is not an image reference\n`);
    return 2;
  }
  const version = gwVersion();
  const objects = installManifests({ namespace, image: values.image ?? defaultImage(version), version });
  io.stdout(objects.map((object) => stringify(object, { lineWidth: 0, aliasDuplicateObjects: false })).join('---\n'));
  return 0;
}
