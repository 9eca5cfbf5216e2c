// gw crds: the CustomResourceDefinitions of the gw.dev kinds — or, with --gateway-api, of the
// Gateway API kinds gw reads, with --inference-extension of the InferencePool, generated from
// gw's own schemas of them — as one YAML stream on
// standard output, or one file per CRD with --output-dir (how deploy/crds/ is written).
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { crdFileName, crdYaml } from '../api/crd/generate.ts';
import { GATEWAY_API_BUNDLE_VERSION } from '../api/kinds/gateway-api/kinds.ts';
import { INFERENCE_EXTENSION_BUNDLE_VERSION } from '../api/kinds/inference/kinds.ts';
import { crdKinds, gatewayApiCrdKinds, inferenceExtensionCrdKinds } from '../api/kinds/registry.ts';
import { argsErrorText } from './args.ts';
import type { Io } from './io.ts';

export const CRDS_USAGE = `usage: gw crds [--gateway-api | --inference-extension] [--output-dir DIR]
  Prints the CustomResourceDefinitions of the gw.dev kinds (install them in a cluster with
  gw crds | kubectl apply --server-side -f -).
  --gateway-api      the Gateway API's instead (${GATEWAY_API_BUNDLE_VERSION}, standard channel: GatewayClass,
                     Gateway, ListenerSet, HTTPRoute, ReferenceGrant), from gw's schemas; fields gw
                     does not model are kept as written. Skip them where the cluster has them.
  --inference-extension
                     the Gateway API Inference Extension's InferencePool instead
                     (${INFERENCE_EXTENSION_BUNDLE_VERSION}), likewise; skip it where the cluster has it.
  -d, --output-dir   write one file per CRD into DIR instead
`;

const CRDS_OPTIONS = {
  'gateway-api': { type: 'boolean' },
  'inference-extension': { type: 'boolean' },
  'output-dir': { type: 'string', short: 'd' },
} as const;

export function crdsCommand(args: string[], io: Io): number {
  let values: { 'gateway-api'?: boolean; 'inference-extension'?: boolean; 'output-dir'?: string };
  try {
    ({ values } = parseArgs({ args, options: CRDS_OPTIONS }));
  } catch (error) {
    io.stderr(`gw crds: ${argsErrorText(error, CRDS_OPTIONS)}\n${CRDS_USAGE}`);
    return 2;
  }
  if (values['gateway-api'] && values['inference-extension']) {
    io.stderr(`gw crds: give --gateway-api or --inference-extension, not both\n${CRDS_USAGE}`);
    return 2;
  }
  const kinds = values['gateway-api']
    ? gatewayApiCrdKinds()
    : values['inference-extension']
      ? inferenceExtensionCrdKinds()
      : crdKinds();
  const outputDir = values['output-dir'];
  if (outputDir === undefined) {
    io.stdout(kinds.map(crdYaml).join('---\n'));
    return 0;
  }
  mkdirSync(outputDir, { recursive: true });
  for (const definition of kinds) {
    const file = join(outputDir, crdFileName(definition));
    writeFileSync(file, crdYaml(definition));
    io.stdout(`wrote ${file}\n`);
  }
  return 0;
}
