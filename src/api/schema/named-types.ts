// Every named type of the API, found by loading the modules that declare them. Used by the
// reference docs, the spec coverage table and the per-type fixtures.
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { META, type SchemaNode } from './schema.ts';

const apiRoot = new URL('../', import.meta.url).pathname;
const repoRoot = new URL('../../../', import.meta.url).pathname;
const typeFolders = [
  'types',
  'kinds',
  'kinds/gateway-api',
  'kinds/core',
  'kinds/apps',
  'kinds/policy',
  'kinds/autoscaling',
  'kinds/rbac',
];

function isSchema(value: unknown): value is SchemaNode {
  return value !== null && typeof value === 'object' && META in value;
}

interface Loaded {
  types: Map<string, SchemaNode>;
  /** The module (relative to the repository root) that declares each name. */
  sources: Map<string, string>;
}

let cache: Promise<Loaded> | undefined;

export async function namedTypes(): Promise<Map<string, SchemaNode>> {
  cache ??= load();
  return (await cache).types;
}

/** The file (relative to the repository root, e.g. src/api/types/common.ts) declaring each named type. */
export async function namedTypeSources(): Promise<Map<string, string>> {
  cache ??= load();
  return (await cache).sources;
}

const texts = new Map<string, string>();

function declares(path: string, name: string): boolean {
  let text = texts.get(path);
  if (text === undefined) {
    text = readFileSync(path, 'utf8');
    texts.set(path, text);
  }
  return text.includes(`name: '${name}'`);
}

async function load(): Promise<Loaded> {
  const found = new Map<string, SchemaNode>();
  const sources = new Map<string, string>();
  for (const folder of typeFolders) {
    let files: string[];
    try {
      files = readdirSync(join(apiRoot, folder))
        .filter((f) => f.endsWith('.ts'))
        .sort();
    } catch {
      continue;
    }
    for (const file of files) {
      const path = join(apiRoot, folder, file);
      const module = (await import(path)) as Record<string, unknown>;
      for (const value of Object.values(module)) {
        if (!isSchema(value)) continue;
        const name = value[META]!.name;
        const existing = found.get(name);
        // A refined copy shares the name of its original; the original is the one exported first.
        if (!existing) found.set(name, value);
        // A module may re-export a type it imports; the source is the one that names it.
        const recorded = sources.get(name);
        if (!recorded || (!declares(join(repoRoot, recorded), name) && declares(path, name)))
          sources.set(name, relative(repoRoot, path));
      }
    }
  }
  return { types: found, sources };
}
