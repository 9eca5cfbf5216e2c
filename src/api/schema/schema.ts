// The schema language of the API. A schema node is, field for field, the OpenAPI v3 node a
// Kubernetes CustomResourceDefinition carries (so the CRD generator mostly copies it), plus
// a phantom TypeScript type so that `Infer<typeof X>` yields the type of the values it accepts,
// plus documentation metadata kept under a symbol (never serialised into a CRD).

/** A CEL rule as Kubernetes' `x-kubernetes-validations` entry. */
export interface ValidationRule {
  rule: string;
  message: string;
  /** Relative JSONPath-ish path (".spec.x") the error is reported on, as Kubernetes allows. */
  fieldPath?: string;
  reason?: 'FieldValueInvalid' | 'FieldValueRequired' | 'FieldValueForbidden' | 'FieldValueDuplicate';
}

export type SchemaType = 'object' | 'array' | 'string' | 'integer' | 'number' | 'boolean';

export const META: unique symbol = Symbol('gw.schema.meta');

/** Documentation facts about a named type; the reference docs and the coverage table read them. */
export interface TypeMeta {
  /** The type's name as the spec writes it (ShortString, BackendTLS, ...). */
  name: string;
  /** Where the spec defines it: "1" or "2" (document number), or "gw" when it is gw's design. */
  source: '1' | '2' | 'gateway-api' | 'inference-extension' | 'core' | 'gw';
  /** Notes for the reference docs: why a "not shown" type looks the way it does, runtime defaults. */
  notes?: string;
  /**
   * What the type is, in a sentence: becomes the node's `description` (so every field of this type
   * shows it in the CRD, `kubectl explain` and the reference docs unless the field refines its own).
   */
  description?: string;
}

export interface SchemaNode {
  type?: SchemaType;
  description?: string;
  format?: string;
  enum?: readonly (string | number)[];
  default?: unknown;
  minimum?: number;
  maximum?: number;
  minLength?: number;
  maxLength?: number;
  pattern?: string;
  minItems?: number;
  maxItems?: number;
  minProperties?: number;
  maxProperties?: number;
  required?: string[];
  properties?: Record<string, SchemaNode>;
  additionalProperties?: SchemaNode;
  items?: SchemaNode;
  anyOf?: SchemaNode[];
  'x-kubernetes-preserve-unknown-fields'?: boolean;
  'x-kubernetes-int-or-string'?: boolean;
  'x-kubernetes-list-type'?: 'atomic' | 'set' | 'map';
  'x-kubernetes-list-map-keys'?: string[];
  'x-kubernetes-map-type'?: 'atomic' | 'granular';
  /** Strategic merge patch of a built-in kind's list (never in a CRD: the generator drops it). */
  'x-kubernetes-patch-strategy'?: 'merge';
  'x-kubernetes-patch-merge-key'?: string;
  'x-kubernetes-validations'?: ValidationRule[];
  [META]?: TypeMeta;
}

declare const TYPE: unique symbol;

/** A schema node that accepts values of type T. */
export interface Schema<T> extends SchemaNode {
  readonly [TYPE]?: T;
}

export type Infer<S> = S extends Schema<infer T> ? T : never;

/** A required object property. */
export interface Required<T> {
  readonly requiredField: Schema<T>;
}

export type Property = Schema<unknown> | Required<unknown>;
export type Properties = Record<string, Property>;

type RequiredKeys<P> = { [K in keyof P]: P[K] extends Required<unknown> ? K : never }[keyof P];
type OptionalKeys<P> = Exclude<keyof P, RequiredKeys<P>>;
type PropertyType<F> = F extends Required<infer T> ? T : F extends Schema<infer T> ? T : never;
type Simplify<T> = { [K in keyof T]: T[K] } & {};

export type InferProperties<P> = Simplify<
  { -readonly [K in RequiredKeys<P>]: PropertyType<P[K]> } & { -readonly [K in OptionalKeys<P>]?: PropertyType<P[K]> }
>;

export type JsonValue = null | boolean | number | string | JsonValue[] | { [key: string]: JsonValue };
