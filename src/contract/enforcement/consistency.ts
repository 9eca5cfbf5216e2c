// What is wrong with a registry against the schema and the repository, one message per problem:
// fields declared nowhere (with the type to declare them in), declarations of fields the schema
// does not have (or that no walk reaches), excluded paths a place does not have, enforced fields
// without a module, modules that do not exist, refused values the field cannot take. The
// registry test asserts there are none.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { Enforcement } from './enforcement.ts';
import { PLACE_NAMES, PLACES } from './places.ts';
import { type Declarations, enumValues, type RegistryWalk } from './walk.ts';

export interface RegistryProblems {
  undeclared: string[];
  stale: string[];
  withoutModule: string[];
  missingModules: string[];
  badRefusedValues: string[];
}

export interface ConsistencyOptions {
  /** The repository root the modules are relative to. */
  root: string;
  /** Modules being written in parallel: allowed to be missing, and a problem once they exist. */
  inProgress?: readonly string[];
}

export function registryProblems(
  walk: RegistryWalk,
  declarations: Declarations,
  options: ConsistencyOptions,
): RegistryProblems {
  const problems: RegistryProblems = {
    undeclared: [],
    stale: [],
    withoutModule: [],
    missingModules: [],
    badRefusedValues: [],
  };
  for (const place of PLACE_NAMES) {
    const { leaves, undeclared } = walk.leavesOf(place);
    for (const field of undeclared)
      problems.undeclared.push(`${place}: ${field.path} (declare ${field.key} in ${field.type})`);
    for (const leaf of leaves) {
      const enforcement = leaf.enforcement;
      if (enforcement.kind !== 'enforced') continue;
      if (enforcement.by === undefined)
        problems.withoutModule.push(
          `${place}: ${leaf.path} (${leaf.declaredIn}): neither it nor an enclosing field names a module`,
        );
      const values = enumValues(leaf.schema);
      for (const value of Object.keys(enforcement.refusedValues ?? {}))
        if (!values?.includes(value))
          problems.badRefusedValues.push(
            `${place}: ${leaf.path} (${leaf.declaredIn}) cannot take the refused value ${value}`,
          );
    }
  }
  for (const [type, fields] of Object.entries(declarations.types))
    for (const key of Object.keys(fields))
      if (!walk.use.types.has(`${type}.${key}`))
        problems.stale.push(`type ${type}: ${key} is not a field any place reaches`);
  for (const [place, paths] of Object.entries(declarations.places))
    for (const path of Object.keys(paths ?? {}))
      if (!walk.use.places.has(`${place}|${path}`)) problems.stale.push(`place ${place}: ${path} is not a field of it`);
  for (const place of PLACES)
    for (const path of Object.keys(place.excluded ?? {}))
      if (!walk.use.excluded.has(`${place.name}|${path}`))
        problems.stale.push(`place ${place.name}: excluded ${path} is not a field of it`);
  const inProgress = new Set(options.inProgress ?? []);
  for (const module of modulesOf(declarations)) {
    const exists = existsSync(join(options.root, module));
    if (!exists && !inProgress.has(module)) problems.missingModules.push(`${module} does not exist`);
    if (exists && inProgress.has(module))
      problems.missingModules.push(`${module} exists now: take it out of MODULES_IN_PROGRESS`);
  }
  return problems;
}

/** Every module a declaration names, once. */
function modulesOf(declarations: Declarations): Set<string> {
  const modules = new Set<string>();
  const add = (table: Readonly<Record<string, Enforcement>> | undefined) => {
    for (const enforcement of Object.values(table ?? {}))
      if (enforcement.kind === 'enforced' && enforcement.by !== undefined) modules.add(enforcement.by);
  };
  for (const table of Object.values(declarations.types)) add(table);
  for (const table of Object.values(declarations.places)) add(table);
  return modules;
}
