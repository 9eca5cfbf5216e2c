// gw validate: admission of every resource in the given files, all errors at once.
import { parseArgs } from 'node:util';
import { stringify } from 'yaml';
import { notReadText } from '../api/kinds/kind.ts';
import { findKind } from '../api/kinds/registry.ts';
import {
  describeProblem,
  type LoadResult,
  loadResources,
  locationOf,
  type SourceDocument,
} from '../api/load/documents.ts';
import { admit, describeObject, type KubeObject } from '../api/validate/admission.ts';
import { admissionLine } from '../api/validate/errors.ts';
import { argsErrorText } from './args.ts';
import type { Io } from './io.ts';

export const VALIDATE_USAGE = `usage: gw validate -f FILE|DIR|- [-f ...] [-R] [--show-defaults] [-o yaml|json]
  Checks resources as the API server would (schema, defaults, cross-field rules) and prints every
  problem with its file, document, object and field path; exit 1 when any is invalid.
  -f, --filename     a file, a directory (its .yaml, .yml and .json files) or - (standard input);
                     repeatable
  -R, --recursive    read directories recursively
  --show-defaults    print the objects as they would be stored, defaults filled in
  -o, --output       the format of --show-defaults: yaml (default) or json
`;

const VALIDATE_OPTIONS = {
  filename: { type: 'string', short: 'f', multiple: true },
  recursive: { type: 'boolean', short: 'R' },
  'show-defaults': { type: 'boolean' },
  output: { type: 'string', short: 'o' },
} as const;

export function validateCommand(args: string[], io: Io): number {
  let options: ReturnType<typeof parse>;
  try {
    options = parse(args);
  } catch (error) {
    io.stderr(`gw validate: ${argsErrorText(error, VALIDATE_OPTIONS)}\n${VALIDATE_USAGE}`);
    return 2;
  }
  const files = options.values.filename ?? [];
  if (files.length === 0) {
    io.stderr('gw validate: name the resources with -f FILE, -f DIR or -f - (standard input)\n');
    return 2;
  }
  const output = options.values.output ?? 'yaml';
  if (output !== 'yaml' && output !== 'json') {
    io.stderr(`gw validate: -o must be yaml or json, not "${output}"\n`);
    return 2;
  }
  const loaded = loadResources(files, { recursive: options.values.recursive, stdin: io.readStdin });
  const { stored, failures } = admitLoaded(loaded, io);
  if (options.values['show-defaults']) {
    if (output === 'json')
      io.stdout(
        `${JSON.stringify(stored.length === 1 ? stored[0] : { apiVersion: 'v1', kind: 'List', items: stored }, null, 2)}\n`,
      );
    else io.stdout(stored.map((object) => stringify(object, { lineWidth: 0 })).join('---\n'));
  }
  const total = loaded.documents.length;
  if (failures > 0) {
    io.stderr(`${failures} invalid of ${total + loaded.problems.length}\n`);
    return 1;
  }
  if (!options.values['show-defaults']) io.stdout(`${total} valid\n`);
  return 0;
}

/**
 * Admission of loaded documents as the API server would: every problem and warning on standard
 * error (file, document, object, field), duplicates refused, and a note on each object of a kind
 * gw does not read (a Deployment: valid, but gw acts on nothing in it). Returns the admitted objects, with
 * their metadata as written (a uid stays), and how many documents failed. gw manifests reads its
 * input the same way.
 */
export function admitLoaded(loaded: LoadResult, io: Io): { stored: KubeObject[]; failures: number } {
  let failures = 0;
  for (const problem of loaded.problems) {
    failures++;
    io.stderr(`${describeProblem(problem)}\n`);
  }
  const stored: KubeObject[] = [];
  const seen = new Map<string, SourceDocument>();
  for (const document of loaded.documents) {
    const result = admit(document.value, { fromFiles: true });
    const name = describeObject(result.object ?? document.value);
    const where = locationOf(document);
    for (const warning of result.warnings) io.stderr(`${admissionLine(where, name, warning, 'warning')}\n`);
    const definition = result.object && findKind(result.object.apiVersion, result.object.kind);
    const note = definition && notReadText(definition);
    if (note && result.errors.length === 0) io.stderr(`${where}: ${name}: note: ${note}\n`);
    if (result.errors.length > 0) {
      failures++;
      for (const error of result.errors) io.stderr(`${admissionLine(where, name, error, 'error')}\n`);
      continue;
    }
    const key = `${result.object!.apiVersion.split('/')[0]} ${name}`;
    const previous = seen.get(key);
    if (previous) {
      failures++;
      io.stderr(
        `${locationOf(document)}: ${name}: Duplicate value: the same object is already defined at ${locationOf(previous)}\n`,
      );
      continue;
    }
    seen.set(key, document);
    stored.push(result.object!);
  }
  return { stored, failures };
}

function parse(args: string[]) {
  return parseArgs({
    args,
    options: VALIDATE_OPTIONS,
    allowPositionals: false,
  });
}
