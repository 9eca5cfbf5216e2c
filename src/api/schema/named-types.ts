// Every named type of the API, found by loading the modules that declare them. Used by the
// reference docs, the spec coverage table and the per-type fixtures.
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { META, type SchemaNode } from './schema.ts';

const apiRoot = new URL('../', import.meta.url).pathname;
const typeFolders = ['types', 'kinds', 'kinds/gateway-api', 'kinds/core'];

function isSchema(value: unknown): value is SchemaNode {
  return value !== null && typeof value === 'object' && META in value;
}

let cache: Promise<Map<string, SchemaNode>> | undefined;

export function namedTypes(): Promise<Map<string, SchemaNode>> {
  cache ??= load();
  return cache;
}

async function load(): Promise<Map<string, SchemaNode>> {
  const found = new Map<string, SchemaNode>();
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
      const module = (await import(join(apiRoot, folder, file))) as Record<string, unknown>;
      for (const value of Object.values(module)) {
        if (!isSchema(value)) continue;
        const name = value[META]!.name;
        const existing = found.get(name);
        // A refined copy shares the name of its original; the original is the one exported first.
        if (!existing) found.set(name, value);
      }
    }
  }
  return found;
}
