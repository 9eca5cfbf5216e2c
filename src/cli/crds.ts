// gw crds: the CustomResourceDefinitions of the gw.dev kinds, as one YAML stream on standard
// output, or one file per CRD with --output-dir (how deploy/crds/ is written).
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { crdFileName, crdYaml } from '../api/crd/generate.ts';
import { crdKinds } from '../api/kinds/registry.ts';
import { argsErrorText } from './args.ts';
import type { Io } from './io.ts';

export const CRDS_USAGE = `usage: gw crds [--output-dir DIR]
  Prints the CustomResourceDefinitions of the gw.dev kinds (install them in a cluster with
  gw crds | kubectl apply -f -).
  -d, --output-dir   write one file per CRD into DIR instead
`;

const CRDS_OPTIONS = { 'output-dir': { type: 'string', short: 'd' } } as const;

export function crdsCommand(args: string[], io: Io): number {
  let outputDir: string | undefined;
  try {
    outputDir = parseArgs({ args, options: CRDS_OPTIONS }).values['output-dir'];
  } catch (error) {
    io.stderr(`gw crds: ${argsErrorText(error, CRDS_OPTIONS)}\n${CRDS_USAGE}`);
    return 2;
  }
  if (outputDir === undefined) {
    io.stdout(crdKinds().map(crdYaml).join('---\n'));
    return 0;
  }
  mkdirSync(outputDir, { recursive: true });
  for (const definition of crdKinds()) {
    const file = join(outputDir, crdFileName(definition));
    writeFileSync(file, crdYaml(definition));
    io.stdout(`wrote ${file}\n`);
  }
  return 0;
}
