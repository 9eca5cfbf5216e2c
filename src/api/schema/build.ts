// Builders for schema nodes. Each returns a plain OpenAPI node typed with the values it accepts.
import {
  type InferProperties,
  type JsonValue,
  META,
  type Properties,
  type Property,
  type Required,
  type Schema,
  type SchemaNode,
  type TypeMeta,
  type ValidationRule,
} from './schema.ts';

interface Common {
  description?: string;
  rules?: ValidationRule[];
}

export interface StringOptions extends Common {
  minLength?: number;
  maxLength?: number;
  pattern?: string;
  format?: string;
  default?: string;
}

export interface NumberOptions extends Common {
  minimum?: number;
  maximum?: number;
  default?: number;
}

export interface ArrayOptions extends Common {
  minItems?: number;
  maxItems?: number;
  listType?: 'atomic' | 'set' | 'map';
  listMapKeys?: string[];
  /**
   * How a strategic merge patch merges the list (Kubernetes' patchStrategy/patchMergeKey tags,
   * built-in kinds only): 'merge' with a key merges object items by it, without one merges a set
   * of scalars; absent, a patch replaces the list.
   */
  patchStrategy?: 'merge';
  patchMergeKey?: string;
}

export interface ObjectOptions extends Common {
  minProperties?: number;
  maxProperties?: number;
}

export interface MapOptions extends Common {
  minProperties?: number;
  maxProperties?: number;
}

function common(node: SchemaNode, options: Common | undefined): void {
  if (options?.description !== undefined) node.description = options.description;
  if (options?.rules && options.rules.length > 0) node['x-kubernetes-validations'] = options.rules;
}

function assign<T extends object>(node: T, values: Record<string, unknown>): T {
  for (const [key, value] of Object.entries(values)) {
    if (value !== undefined) (node as Record<string, unknown>)[key] = value;
  }
  return node;
}

export function string(options?: StringOptions): Schema<string> {
  const node: SchemaNode = { type: 'string' };
  assign(node, {
    format: options?.format,
    minLength: options?.minLength,
    maxLength: options?.maxLength,
    pattern: options?.pattern,
    default: options?.default,
  });
  common(node, options);
  return node;
}

export function integer(options?: NumberOptions & { format?: 'int32' | 'int64' }): Schema<number> {
  const node: SchemaNode = { type: 'integer' };
  assign(node, {
    format: options?.format,
    minimum: options?.minimum,
    maximum: options?.maximum,
    default: options?.default,
  });
  common(node, options);
  return node;
}

export function number(options?: NumberOptions): Schema<number> {
  const node: SchemaNode = { type: 'number' };
  assign(node, { minimum: options?.minimum, maximum: options?.maximum, default: options?.default });
  common(node, options);
  return node;
}

export function boolean(options?: Common & { default?: boolean }): Schema<boolean> {
  const node: SchemaNode = { type: 'boolean' };
  assign(node, { default: options?.default });
  common(node, options);
  return node;
}

/** A string restricted to the given values. */
export function enumOf<const V extends readonly string[]>(
  values: V,
  options?: Common & { default?: V[number] },
): Schema<V[number]> {
  const node: SchemaNode = { type: 'string', enum: values };
  assign(node, { default: options?.default });
  common(node, options);
  return node;
}

export function array<T>(items: Schema<T>, options?: ArrayOptions): Schema<T[]> {
  const node: SchemaNode = { type: 'array', items };
  assign(node, {
    minItems: options?.minItems,
    maxItems: options?.maxItems,
    'x-kubernetes-list-type': options?.listType,
    'x-kubernetes-list-map-keys': options?.listMapKeys,
    'x-kubernetes-patch-strategy': options?.patchStrategy ?? (options?.patchMergeKey ? 'merge' : undefined),
    'x-kubernetes-patch-merge-key': options?.patchMergeKey,
  });
  common(node, options);
  return node;
}

/** A map from string keys to values of one schema (additionalProperties). */
export function map<T>(values: Schema<T>, options?: MapOptions): Schema<Record<string, T>> {
  const node: SchemaNode = { type: 'object', additionalProperties: values };
  assign(node, { minProperties: options?.minProperties, maxProperties: options?.maxProperties });
  common(node, options);
  return node;
}

export function required<T>(schema: Schema<T>): Required<T> {
  return { requiredField: schema };
}

function isRequired(property: Property): property is Required<unknown> {
  return (property as Required<unknown>).requiredField !== undefined;
}

export function object<const P extends Properties>(properties: P, options?: ObjectOptions): Schema<InferProperties<P>> {
  const node: SchemaNode = { type: 'object', properties: {} };
  const requiredNames: string[] = [];
  for (const [name, property] of Object.entries(properties)) {
    if (isRequired(property)) {
      requiredNames.push(name);
      node.properties![name] = property.requiredField;
    } else {
      node.properties![name] = property;
    }
  }
  if (requiredNames.length > 0) node.required = requiredNames;
  assign(node, { minProperties: options?.minProperties, maxProperties: options?.maxProperties });
  common(node, options);
  return node as Schema<InferProperties<P>>;
}

/** Any JSON value, kept as written (x-kubernetes-preserve-unknown-fields). */
export function json(options?: Common): Schema<JsonValue> {
  const node: SchemaNode = { 'x-kubernetes-preserve-unknown-fields': true };
  common(node, options);
  return node;
}

/** A JSON object whose content is not described by the schema. */
export function jsonObject(options?: Common): Schema<Record<string, JsonValue>> {
  const node: SchemaNode = { type: 'object', 'x-kubernetes-preserve-unknown-fields': true };
  common(node, options);
  return node;
}

/** An integer or a string (x-kubernetes-int-or-string), as Kubernetes quantities are written. */
export function intOrString(options?: StringOptions): Schema<number | string> {
  const node: SchemaNode = {
    'x-kubernetes-int-or-string': true,
    anyOf: [{ type: 'integer' }, { type: 'string' }],
  };
  assign(node, {
    minLength: options?.minLength,
    maxLength: options?.maxLength,
    pattern: options?.pattern,
    default: options?.default,
  });
  common(node, options);
  return node;
}

/** Gives a schema a type name (and doc facts); the node is shared wherever the type is used. */
export function named<T>(meta: TypeMeta, schema: Schema<T>): Schema<T> {
  schema[META] = meta;
  if (meta.description !== undefined && schema.description === undefined) schema.description = meta.description;
  return schema;
}

/**
 * A field-level variant of a schema: a shallow copy with its own description, default or
 * extra rules, keeping the type name of the original for the docs.
 */
export function refine<T>(
  schema: Schema<T>,
  changes: {
    description?: string;
    default?: NoInfer<T>;
    rules?: ValidationRule[];
    minItems?: number;
    maxItems?: number;
  },
): Schema<T> {
  const copy: SchemaNode = { ...schema };
  if (schema[META]) copy[META] = schema[META];
  if (changes.description !== undefined) copy.description = changes.description;
  if (changes.default !== undefined) copy.default = changes.default;
  if (changes.minItems !== undefined) copy.minItems = changes.minItems;
  if (changes.maxItems !== undefined) copy.maxItems = changes.maxItems;
  if (changes.rules)
    copy['x-kubernetes-validations'] = [...(schema['x-kubernetes-validations'] ?? []), ...changes.rules];
  return copy as Schema<T>;
}

/** Adds rules to an object schema built by `object` (used when rules name fields built above). */
export function withRules<T>(schema: Schema<T>, rules: ValidationRule[]): Schema<T> {
  return refine(schema, { rules });
}
