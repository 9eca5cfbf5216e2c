// Reads the registry against the schema. For a field at dotted path p of a place (list and map
// levels elided), the declaration is the place's own for p, else its base place's, else the
// enclosing named type's entry for the field (registry.ts); otherwise the field is undeclared.
// A refused field ends the walk (its whole subtree is refused); an enforced one is walked into
// when its values are objects with fields (one, a list or a map of them), and is a leaf otherwise.
//
// leavesOf() lists every leaf with its declaration (the registry test and docs/enforcement.md);
// refusalsIn() checks a concrete value once per configuration, against a check tree built once
// per place, in time linear in the value.
import { META, type SchemaNode } from '../../api/schema/schema.ts';
import { isPlainObject } from '../../util/values.ts';
import type { Enforcement } from './enforcement.ts';
import { type Place, type PlaceName, placeNamed } from './places.ts';
import { PLACE_DECLARATIONS, TYPE_DECLARATIONS } from './registry.ts';

/** How a field holds its values: one value, a list of them, or a map of them. */
type Shape = 'one' | 'list' | 'map';

/** A field of a place as the registry resolves it. */
interface ResolvedField {
  readonly name: string;
  /** Dotted path from the place root, list and map levels elided. */
  readonly path: string;
  readonly schema: SchemaNode;
  readonly shape: Shape;
  /** Where a type declaration of the field goes: the enclosing named type and the (dotted) key in it. */
  readonly type: string;
  readonly key: string;
  /** undefined: declared nowhere. An enforced declaration carries its resolved module. */
  readonly enforcement: Enforcement | undefined;
  /** "place traffic:ai" or "type BackendTLS", for messages. */
  readonly declaredIn: string | undefined;
  /** The fields of an enforced field whose values are objects. */
  readonly fields: readonly ResolvedField[] | undefined;
}

export interface Leaf {
  readonly path: string;
  readonly schema: SchemaNode;
  /** The declaration; an enforced one with `by` resolved (undefined only when no ancestor names a module). */
  readonly enforcement: Enforcement;
  readonly declaredIn: string;
}

export interface UndeclaredField {
  readonly path: string;
  /** The named type to declare it in, and the key there. */
  readonly type: string;
  readonly key: string;
}

export interface PlaceLeaves {
  readonly leaves: readonly Leaf[];
  readonly undeclared: readonly UndeclaredField[];
}

export interface Refusal {
  /** The field as the user wrote it, from the value's root: `groups[0].providers[1].zeta`, `ai.routes["/v1/realtime"]`. */
  readonly path: string;
  readonly reason: string;
}

/** The reason given for a field the registry does not declare: never silently accepted. */
export const UNDECLARED_REASON = 'this data plane does not know the field (it is not in the enforcement registry)';

/** Every use of a declaration the walks made, for the registry test's staleness checks. */
export interface DeclarationUse {
  /** "Type.key" of type declarations a walk looked up. */
  readonly types: Set<string>;
  /** "place|path" of place declarations a walk looked up. */
  readonly places: Set<string>;
  /** "place|path" of the excluded paths a walk met (places.ts). */
  readonly excluded: Set<string>;
}

const MAX_DEPTH = 32;

/** The two layers of declarations (registry.ts), as a walk reads them. */
export interface Declarations {
  readonly types: Readonly<Record<string, Readonly<Record<string, Enforcement>>>>;
  readonly places: Readonly<Partial<Record<PlaceName, Readonly<Record<string, Enforcement>>>>>;
}

/**
 * The registry read against the schema, place by place, each place resolved once. The module
 * functions below use the real registry; the registry test also walks deliberately broken ones.
 */
export class RegistryWalk {
  readonly #declarations: Declarations;
  readonly #resolved = new Map<PlaceName, readonly ResolvedField[]>();
  readonly #checks = new Map<PlaceName, ReadonlyMap<string, FieldCheck>>();
  /** Every declaration a resolution looked up. */
  readonly use: DeclarationUse = { types: new Set(), places: new Set(), excluded: new Set() };

  constructor(declarations: Declarations) {
    this.#declarations = declarations;
  }

  /** Every leaf of a place with its declaration, and the fields declared nowhere. */
  leavesOf(name: PlaceName): PlaceLeaves {
    const leaves: Leaf[] = [];
    const undeclared: UndeclaredField[] = [];
    const collect = (fields: readonly ResolvedField[]) => {
      for (const field of fields) {
        if (field.enforcement === undefined) undeclared.push({ path: field.path, type: field.type, key: field.key });
        else if (field.fields) collect(field.fields);
        else
          leaves.push({
            path: field.path,
            schema: field.schema,
            enforcement: field.enforcement,
            declaredIn: field.declaredIn!,
          });
      }
    };
    collect(this.#resolve(name));
    return { leaves, undeclared };
  }

  /**
   * Every field set in `value` (a section or spec of the place's root type) that the place
   * refuses, and every refused enum value used; only the top-most refused path of a subtree. A
   * top-level field the schema does not have (a newer configuration's) is refused too; deeper,
   * fields the schema does not have are not looked at (a configuration carries resolved extras,
   * such as the objects an API key selector chose).
   */
  refusalsIn(name: PlaceName, value: unknown): Refusal[] {
    let tree = this.#checks.get(name);
    if (!tree) {
      tree = checkTree(this.#resolve(name)) ?? new Map();
      this.#checks.set(name, tree);
    }
    const out: Refusal[] = [];
    if (!isPlainObject(value)) return out;
    const place = placeNamed(name);
    for (const field in value) {
      if (value[field] !== undefined && place.root.properties?.[field] === undefined)
        out.push({ path: field, reason: UNDECLARED_REASON });
    }
    checkObject(tree, value, '', out);
    return out;
  }

  #resolve(name: PlaceName): readonly ResolvedField[] {
    let fields = this.#resolved.get(name);
    if (!fields) {
      const place = placeNamed(name);
      fields = this.#fields(place, place.root, '', place.root[META]?.name ?? place.name, '', undefined, 0);
      this.#resolved.set(name, fields);
    }
    return fields;
  }

  #fields(
    place: Place,
    node: SchemaNode,
    path: string,
    type: string,
    keyPrefix: string,
    inheritedBy: string | undefined,
    depth: number,
  ): ResolvedField[] {
    if (depth > MAX_DEPTH)
      throw new Error(`place ${place.name}: the schema is nested deeper than ${MAX_DEPTH} at ${path}`);
    const out: ResolvedField[] = [];
    for (const [name, schema] of Object.entries(node.properties ?? {})) {
      const fieldPath = path === '' ? name : `${path}.${name}`;
      if (place.excluded?.[fieldPath] !== undefined) {
        this.use.excluded.add(`${place.name}|${fieldPath}`);
        continue;
      }
      const key = keyPrefix === '' ? name : `${keyPrefix}.${name}`;
      const found = this.#declarationOf(place, fieldPath, type, key);
      const { shape, object } = valuesOf(schema);
      let enforcement = found?.enforcement;
      let fields: ResolvedField[] | undefined;
      if (enforcement?.kind === 'enforced') {
        const by = enforcement.by ?? inheritedBy;
        if (by !== enforcement.by) enforcement = { ...enforcement, by };
        if (object) {
          // A named type has its own table; an unnamed object's fields are dotted keys of this one.
          const named = object[META]?.name;
          fields = this.#fields(place, object, fieldPath, named ?? type, named ? '' : key, by, depth + 1);
        }
      }
      out.push({ name, path: fieldPath, schema, shape, type, key, enforcement, declaredIn: found?.declaredIn, fields });
    }
    return out;
  }

  /** The place's (then its bases') declaration of `path`, else the type's of `key`; every lookup is recorded. */
  #declarationOf(
    place: Place,
    path: string,
    type: string,
    key: string,
  ): { enforcement: Enforcement; declaredIn: string } | undefined {
    let found: { enforcement: Enforcement; declaredIn: string } | undefined;
    for (let at: Place | undefined = place; at; at = at.base && placeNamed(at.base)) {
      const declared = this.#declarations.places[at.name]?.[path];
      if (declared === undefined) continue;
      this.use.places.add(`${at.name}|${path}`);
      found ??= { enforcement: declared, declaredIn: `place ${at.name}` };
    }
    const typeDeclared = this.#declarations.types[type]?.[key];
    if (typeDeclared !== undefined) {
      this.use.types.add(`${type}.${key}`);
      found ??= { enforcement: typeDeclared, declaredIn: `type ${type}` };
    }
    return found;
  }
}

/** How a field holds values, and the object schema of each value when values are objects with fields. */
function valuesOf(schema: SchemaNode): { shape: Shape; object: SchemaNode | undefined } {
  const hasFields = (node: SchemaNode | undefined) =>
    node !== undefined && node.properties !== undefined && Object.keys(node.properties).length > 0;
  if (schema.type === 'array') return { shape: 'list', object: hasFields(schema.items) ? schema.items : undefined };
  if (schema.additionalProperties)
    return {
      shape: 'map',
      object: hasFields(schema.additionalProperties) ? schema.additionalProperties : undefined,
    };
  return { shape: 'one', object: hasFields(schema) ? schema : undefined };
}

/** The enum values a field's values take (its own, its items' or its map values'), if it is an enum. */
export function enumValues(schema: SchemaNode): readonly (string | number)[] | undefined {
  return schema.enum ?? schema.items?.enum ?? schema.additionalProperties?.enum;
}

// ---------------------------------------------------------------------------------------------
// Checking a value.

/** How the values under one field are checked; only fields that can refuse something are kept. */
interface FieldCheck {
  readonly shape: Shape;
  /** The field is refused: its reason. */
  readonly refused: string | undefined;
  readonly refusedValues: ReadonlyMap<string, string> | undefined;
  /** The checks of the fields of each value, when some of them can refuse. */
  readonly fields: ReadonlyMap<string, FieldCheck> | undefined;
}

function checkTree(fields: readonly ResolvedField[]): ReadonlyMap<string, FieldCheck> | undefined {
  const out = new Map<string, FieldCheck>();
  for (const field of fields) {
    const enforcement = field.enforcement;
    if (enforcement === undefined || enforcement.kind === 'refused') {
      const reason = enforcement?.kind === 'refused' ? enforcement.reason : UNDECLARED_REASON;
      out.set(field.name, { shape: field.shape, refused: reason, refusedValues: undefined, fields: undefined });
      continue;
    }
    const refusedValues = enforcement.refusedValues && new Map(Object.entries(enforcement.refusedValues));
    const nested = field.fields && checkTree(field.fields);
    if (refusedValues || nested)
      out.set(field.name, { shape: field.shape, refused: undefined, refusedValues, fields: nested });
  }
  return out.size > 0 ? out : undefined;
}

function checkObject(fields: ReadonlyMap<string, FieldCheck>, value: unknown, path: string, out: Refusal[]): void {
  if (!isPlainObject(value)) return;
  for (const name in value) {
    const child = value[name];
    if (child === undefined || child === null) continue;
    const check = fields.get(name);
    if (!check) continue;
    const childPath = path === '' ? name : `${path}.${name}`;
    if (check.refused !== undefined) {
      out.push({ path: childPath, reason: check.refused });
      continue;
    }
    if (check.shape === 'list' && Array.isArray(child)) {
      for (let i = 0; i < child.length; i++) checkValue(check, child[i], `${childPath}[${i}]`, out);
    } else if (check.shape === 'map' && isPlainObject(child)) {
      for (const key in child) checkValue(check, child[key], `${childPath}[${JSON.stringify(key)}]`, out);
    } else if (check.shape === 'one') checkValue(check, child, childPath, out);
  }
}

function checkValue(check: FieldCheck, value: unknown, path: string, out: Refusal[]): void {
  if (check.refusedValues !== undefined && typeof value === 'string') {
    const reason = check.refusedValues.get(value);
    if (reason !== undefined) out.push({ path, reason });
  }
  if (check.fields !== undefined) checkObject(check.fields, value, path, out);
}

// ---------------------------------------------------------------------------------------------
// The real registry.

const registry = new RegistryWalk({ types: TYPE_DECLARATIONS, places: PLACE_DECLARATIONS });

/** Every leaf of a place with its declaration, and the fields declared nowhere. */
export function leavesOf(name: PlaceName): PlaceLeaves {
  return registry.leavesOf(name);
}

/**
 * Every field set in `value` (an effective section, a spec) that place `name` refuses, and every
 * refused enum value used, with the user's path; only the top-most refused path of a subtree.
 * Run it once per configuration and consumer: it is linear in the value's size.
 */
export function refusalsIn(name: PlaceName, value: unknown): Refusal[] {
  return registry.refusalsIn(name, value);
}
