// Sets of field paths, the unit of ownership in server-side apply, read from objects through
// their schema the way Kubernetes reads them: object fields and map keys are `f:<name>`, items of
// a list-type map `k:{"key":value}` (key fields sorted), items of a list-type set `v:<value>`;
// atomic lists, atomic maps and scalars are leaves. A set is kept flat (one string per path) and
// converted to the nested FieldsV1 form of metadata.managedFields only at the edge.

import type { SchemaNode } from '../../api/schema/schema.ts';
import { isPlainObject } from '../../util/values.ts';

/** Path elements joined by this character (it cannot occur inside an element's JSON). */
const SEPARATOR = '\u0000';

export type FieldPath = string;

/** Which part of an object a set describes: the main resource, or the status subresource. */
export type FieldScope = 'main' | 'status';

/** The metadata fields a manager can own; the rest are the server's. */
const OWNED_METADATA = new Set(['labels', 'annotations', 'finalizers', 'ownerReferences', 'generateName']);

export function joinPath(elements: readonly string[]): FieldPath {
  return elements.join(SEPARATOR);
}

export function splitPath(path: FieldPath): string[] {
  return path === '' ? [] : path.split(SEPARATOR);
}

/** The schema of a child field or map value; undefined when the schema says nothing about it. */
export function childSchema(schema: SchemaNode | undefined, name: string): SchemaNode | undefined {
  if (!schema) return undefined;
  return schema.properties?.[name] ?? schema.additionalProperties;
}

function isAtomicMap(schema: SchemaNode | undefined): boolean {
  return schema?.['x-kubernetes-map-type'] === 'atomic';
}

export function listType(schema: SchemaNode | undefined): 'atomic' | 'set' | 'map' {
  return schema?.['x-kubernetes-list-type'] ?? 'atomic';
}

/** JSON with object keys sorted, so equal values give equal text. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (isPlainObject(value)) {
    const keys = Object.keys(value)
      .filter((key) => value[key] !== undefined)
      .sort();
    return `{${keys.map((key) => `${JSON.stringify(key)}:${canonicalJson(value[key])}`).join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

export function sameValue(a: unknown, b: unknown): boolean {
  return canonicalJson(a) === canonicalJson(b);
}

/** The `k:` element of a list-map item: its key fields, sorted by name. */
export function itemKeyElement(item: unknown, keys: readonly string[]): string {
  const fields: Record<string, unknown> = {};
  for (const key of [...keys].sort()) {
    const value = isPlainObject(item) ? item[key] : undefined;
    if (value !== undefined) fields[key] = value;
  }
  return `k:${canonicalJson(fields)}`;
}

function collect(schema: SchemaNode | undefined, value: unknown, prefix: string[], out: Set<FieldPath>): void {
  if (value === undefined) return;
  if (isPlainObject(value) && !isAtomicMap(schema) && Object.keys(value).length > 0) {
    for (const [name, child] of Object.entries(value)) {
      if (child === undefined || child === null) continue;
      collect(childSchema(schema, name), child, [...prefix, `f:${name}`], out);
    }
    return;
  }
  if (Array.isArray(value) && value.length > 0) {
    const type = listType(schema);
    if (type === 'map') {
      const keys = schema?.['x-kubernetes-list-map-keys'] ?? [];
      for (const item of value) {
        const itemPath = [...prefix, itemKeyElement(item, keys)];
        out.add(joinPath(itemPath));
        collect(schema?.items, item, itemPath, out);
      }
      return;
    }
    if (type === 'set') {
      for (const item of value) out.add(joinPath([...prefix, `v:${canonicalJson(item)}`]));
      return;
    }
  }
  out.add(joinPath(prefix));
}

/** The fields an object sets, in the given scope. */
export function fieldsOf(schema: SchemaNode, object: Record<string, unknown>, scope: FieldScope): Set<FieldPath> {
  const out = new Set<FieldPath>();
  for (const [name, value] of Object.entries(object)) {
    if (value === undefined || value === null || name === 'apiVersion' || name === 'kind') continue;
    if ((scope === 'status') !== (name === 'status')) continue;
    if (name === 'metadata') {
      if (!isPlainObject(value)) continue;
      const metaSchema = childSchema(schema, 'metadata');
      for (const [field, child] of Object.entries(value)) {
        if (!OWNED_METADATA.has(field) || child === undefined || child === null) continue;
        collect(childSchema(metaSchema, field), child, ['f:metadata', `f:${field}`], out);
      }
      continue;
    }
    collect(childSchema(schema, name), value, [`f:${name}`], out);
  }
  return out;
}

function findItem(list: unknown[], element: string, schema: SchemaNode | undefined): number {
  if (element.startsWith('k:')) {
    const keys = schema?.['x-kubernetes-list-map-keys'] ?? [];
    return list.findIndex((item) => itemKeyElement(item, keys) === element);
  }
  const wanted = element.slice(2);
  return list.findIndex((item) => canonicalJson(item) === wanted);
}

/** The value at a path (undefined when absent). */
export function valueAt(schema: SchemaNode, object: unknown, path: FieldPath): unknown {
  let current: unknown = object;
  let currentSchema: SchemaNode | undefined = schema;
  for (const element of splitPath(path)) {
    if (element.startsWith('f:')) {
      if (!isPlainObject(current)) return undefined;
      const name = element.slice(2);
      current = current[name];
      currentSchema = childSchema(currentSchema, name);
    } else {
      if (!Array.isArray(current)) return undefined;
      const index = findItem(current, element, currentSchema);
      if (index === -1) return undefined;
      current = current[index];
      currentSchema = currentSchema?.items;
    }
    if (current === undefined) return undefined;
  }
  return current;
}

/**
 * Removes the value at a path from `object` (which the caller owns). An object emptied by the
 * removal is removed too, up to the top-level field: a manager that gave up its last label does
 * not leave `labels: {}` behind.
 */
export function removePath(schema: SchemaNode, object: Record<string, unknown>, path: FieldPath): void {
  const elements = splitPath(path);
  const parents: { container: Record<string, unknown> | unknown[]; element: string; schema?: SchemaNode }[] = [];
  let current: unknown = object;
  let currentSchema: SchemaNode | undefined = schema;
  for (const element of elements) {
    if (element.startsWith('f:')) {
      if (!isPlainObject(current)) return;
      parents.push({ container: current, element, schema: currentSchema });
      current = current[element.slice(2)];
      currentSchema = childSchema(currentSchema, element.slice(2));
    } else {
      if (!Array.isArray(current)) return;
      parents.push({ container: current, element, schema: currentSchema });
      const index = findItem(current, element, currentSchema);
      if (index === -1) return;
      current = current[index];
      currentSchema = currentSchema?.items;
    }
    if (current === undefined) return;
  }
  for (let level = parents.length - 1; level >= 0; level--) {
    const { container, element, schema: containerSchema } = parents[level]!;
    if (Array.isArray(container)) {
      const index = findItem(container, element, containerSchema);
      if (index !== -1) container.splice(index, 1);
      if (container.length > 0 || level <= 1) return;
    } else {
      delete container[element.slice(2)];
      if (Object.keys(container).length > 0 || level <= 1) return;
    }
  }
}

/** Fields of `next` that are new or hold another value than in `previous`. */
export function changedFields(
  schema: SchemaNode,
  previous: Record<string, unknown> | undefined,
  next: Record<string, unknown>,
  scope: FieldScope,
): { changed: Set<FieldPath>; removed: Set<FieldPath> } {
  const before = previous ? fieldsOf(schema, previous, scope) : new Set<FieldPath>();
  const after = fieldsOf(schema, next, scope);
  const changed = new Set<FieldPath>();
  for (const path of after) {
    if (!before.has(path) || !sameValue(valueAt(schema, previous, path), valueAt(schema, next, path))) {
      changed.add(path);
    }
  }
  const removed = new Set<FieldPath>();
  for (const path of before) if (!after.has(path)) removed.add(path);
  return { changed, removed };
}

/** The nested FieldsV1 form: `{"f:spec":{"f:replicas":{}}}`; "." marks a node owned with children. */
export function toFieldsV1(paths: Iterable<FieldPath>): Record<string, unknown> {
  const root: Record<string, Record<string, unknown>> = {};
  const sorted = [...paths].sort();
  const set = new Set(sorted);
  for (const path of sorted) {
    let node: Record<string, unknown> = root;
    for (const element of splitPath(path)) {
      node[element] ??= {};
      node = node[element] as Record<string, unknown>;
    }
  }
  // A path that is itself in the set and also has children gets its "." marker.
  for (const path of set) {
    let node: Record<string, unknown> = root;
    for (const element of splitPath(path)) node = node[element] as Record<string, unknown>;
    if (Object.keys(node).length > 0) node['.'] = {};
  }
  return root;
}

/** Reads the nested FieldsV1 form back into paths; malformed parts are ignored. */
export function fromFieldsV1(fields: unknown): Set<FieldPath> {
  const out = new Set<FieldPath>();
  const walk = (node: unknown, prefix: string[]) => {
    if (!isPlainObject(node)) return;
    const children = Object.keys(node).filter((key) => key !== '.');
    if (prefix.length > 0 && (children.length === 0 || '.' in node)) out.add(joinPath(prefix));
    for (const child of children) {
      if (/^[fkvi]:/.test(child)) walk(node[child], [...prefix, child]);
    }
  };
  walk(fields, []);
  return out;
}

/**
 * A path as Kubernetes prints it in apply conflicts: `.spec.ports[port=80,protocol="TCP"].name`,
 * `.metadata.finalizers[="x"]`.
 */
export function describePath(path: FieldPath): string {
  let text = '';
  for (const element of splitPath(path)) {
    const body = element.slice(2);
    if (element.startsWith('f:')) text += `.${body}`;
    else if (element.startsWith('k:')) {
      const key = JSON.parse(body) as Record<string, unknown>;
      text += `[${Object.entries(key)
        .map(([name, value]) => `${name}=${JSON.stringify(value)}`)
        .join(',')}]`;
    } else text += `[=${body}]`;
  }
  return text;
}
