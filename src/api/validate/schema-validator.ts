// Validates a decoded value against a schema the way kube-apiserver validates a custom resource
// against its CRD: OpenAPI structural checks, then the node's `x-kubernetes-validations` CEL rules.
import { celSyntaxProblem, compileAdmissionRule, isCompileError, toCelValue } from '../../cel/environment.ts';
import { closestName } from '../../util/did-you-mean.ts';
import { firstLine, isPlainObject } from '../../util/values.ts';
import { META, type SchemaNode, type ValidationRule } from '../schema/schema.ts';
import { childPath, type FieldError, indexPath, jsonTypeOf, renderValue } from './errors.ts';

export interface ValidationOutput {
  errors: FieldError[];
  /** Unknown fields where the kind tolerates them (Gateway API and core kinds): not fatal. */
  warnings: FieldError[];
}

export interface ValidationOptions {
  /** 'error' as `kubectl --validate=strict`; 'warn' for kinds gw reads only part of. */
  unknownFields: 'error' | 'warn';
}

const patternCache = new Map<string, RegExp>();

function compiledPattern(pattern: string): RegExp {
  let regex = patternCache.get(pattern);
  if (!regex) {
    regex = new RegExp(pattern, 'u');
    patternCache.set(pattern, regex);
  }
  return regex;
}

/** Number of Unicode code points, which is what OpenAPI length bounds count. */
function codePointLength(text: string, limit: number): number {
  if (text.length <= limit) return text.length;
  let count = 0;
  for (const _ of text) count++;
  return count;
}

class Validator {
  readonly output: ValidationOutput = { errors: [], warnings: [] };
  private readonly options: ValidationOptions;
  /** The CEL view of each object/array, built once per validation even when several rules read it. */
  private readonly celValues = new WeakMap<object, unknown>();

  constructor(options: ValidationOptions) {
    this.options = options;
  }

  validate(schema: SchemaNode, value: unknown, path: string): void {
    const errorsBefore = this.output.errors.length;
    if (!this.checkType(schema, value, path)) return;
    if (schema.enum && !schema.enum.includes(value as string)) {
      this.output.errors.push({
        type: 'Unsupported',
        field: path,
        value: renderValue(value),
        detail: `supported values: ${schema.enum.map((v) => JSON.stringify(v)).join(', ')}`,
      });
    }
    if (typeof value === 'string') this.checkString(schema, value, path);
    else if (typeof value === 'number') this.checkNumber(schema, value, path);
    else if (Array.isArray(value)) this.checkArray(schema, value, path);
    else if (isPlainObject(value)) this.checkObject(schema, value, path);
    const rules = schema['x-kubernetes-validations'];
    if (rules && this.output.errors.length === errorsBefore) this.checkRules(rules, value, path);
  }

  /** Returns false when the value's type is wrong (nothing more is checked below it). */
  private checkType(schema: SchemaNode, value: unknown, path: string): boolean {
    const given = jsonTypeOf(value);
    let ok: boolean;
    let expected: string;
    if (schema['x-kubernetes-int-or-string']) {
      ok = given === 'string' || given === 'integer';
      expected = 'integer,string';
    } else if (schema.type === undefined) {
      return true;
    } else {
      expected = schema.type;
      ok =
        given === schema.type ||
        (schema.type === 'number' && given === 'integer') ||
        (schema.type === 'object' && given === 'object');
    }
    if (!ok) {
      this.output.errors.push({
        type: 'Invalid',
        field: path,
        value: JSON.stringify(given),
        detail: `${path} in body must be of type ${expected}: ${JSON.stringify(given)}`,
      });
    }
    return ok;
  }

  private checkString(schema: SchemaNode, value: string, path: string): void {
    if (schema.maxLength !== undefined && codePointLength(value, schema.maxLength) > schema.maxLength) {
      this.output.errors.push({
        type: 'TooLong',
        field: path,
        detail: `may not be more than ${schema.maxLength} bytes`,
      });
    }
    if (schema.minLength !== undefined && codePointLength(value, schema.minLength) < schema.minLength) {
      this.invalid(path, value, `should be at least ${schema.minLength} chars long`);
    }
    if (schema.pattern !== undefined && !compiledPattern(schema.pattern).test(value)) {
      this.invalid(path, value, `should match '${schema.pattern}'`);
    }
    // A cluster cannot check CEL syntax at admission, so neither does gw: a broken expression is
    // a warning here and a condition on the object when the controller translates it.
    if (schema[META]?.name === 'CELExpression') {
      const problem = celSyntaxProblem(value);
      if (problem) {
        this.output.warnings.push({
          type: 'Invalid',
          field: path,
          value: renderValue(value),
          detail: `not a valid CEL expression: ${problem}`,
        });
      }
    }
  }

  private checkNumber(schema: SchemaNode, value: number, path: string): void {
    if (schema.minimum !== undefined && value < schema.minimum) {
      this.invalid(path, value, `should be greater than or equal to ${schema.minimum}`);
    }
    if (schema.maximum !== undefined && value > schema.maximum) {
      this.invalid(path, value, `should be less than or equal to ${schema.maximum}`);
    }
  }

  private checkArray(schema: SchemaNode, value: unknown[], path: string): void {
    if (schema.maxItems !== undefined && value.length > schema.maxItems) {
      this.output.errors.push({
        type: 'TooMany',
        field: path,
        value: String(value.length),
        detail: `must have at most ${schema.maxItems} items`,
      });
    }
    if (schema.minItems !== undefined && value.length < schema.minItems) {
      this.invalid(path, value.length, `should have at least ${schema.minItems} items`);
    }
    if (schema.items) {
      for (let i = 0; i < value.length; i++) this.validate(schema.items, value[i], indexPath(path, i));
    }
    const listType = schema['x-kubernetes-list-type'];
    if (listType === 'set') this.checkUniqueItems(value, path, (item) => JSON.stringify(item));
    else if (listType === 'map') {
      const keys = schema['x-kubernetes-list-map-keys'] ?? [];
      // Reported as the item's key fields, e.g. {"type":"Accepted"}, as Kubernetes does.
      this.checkUniqueItems(value, path, (item) =>
        JSON.stringify(Object.fromEntries(keys.map((k) => [k, isPlainObject(item) ? item[k] : undefined]))),
      );
    }
  }

  private checkUniqueItems(value: unknown[], path: string, keyOf: (item: unknown) => string): void {
    const seen = new Set<string>();
    for (let i = 0; i < value.length; i++) {
      const key = keyOf(value[i]);
      if (seen.has(key)) this.output.errors.push({ type: 'Duplicate', field: indexPath(path, i), value: key });
      seen.add(key);
    }
  }

  private checkObject(schema: SchemaNode, value: Record<string, unknown>, path: string): void {
    const properties = schema.properties;
    const keys = Object.keys(value);
    if (schema.maxProperties !== undefined && keys.length > schema.maxProperties) {
      this.output.errors.push({
        type: 'TooMany',
        field: path,
        value: String(keys.length),
        detail: `must have at most ${schema.maxProperties} items`,
      });
    }
    if (schema.minProperties !== undefined && keys.length < schema.minProperties) {
      this.invalid(path, keys.length, `should have at least ${schema.minProperties} properties`);
    }
    for (const name of schema.required ?? []) {
      if (value[name] === undefined) this.output.errors.push({ type: 'Required', field: childPath(path, name) });
    }
    for (const key of keys) {
      const child = value[key];
      if (child === undefined) continue;
      const propertySchema = properties?.[key];
      if (propertySchema) this.validate(propertySchema, child, childPath(path, key));
      else if (schema.additionalProperties) this.validate(schema.additionalProperties, child, indexPath(path, key));
      else if (!schema['x-kubernetes-preserve-unknown-fields']) {
        // A misspelt field is the usual cause: the closest declared name at this path is named.
        const suggestion = properties ? closestName(key, Object.keys(properties)) : undefined;
        const error: FieldError = {
          type: 'UnknownField',
          field: childPath(path, key),
          detail: `field not declared in schema${suggestion ? `; did you mean ${suggestion}?` : ''}`,
          ...(suggestion && { suggestion }),
        };
        if (this.options.unknownFields === 'error') this.output.errors.push(error);
        else this.output.warnings.push(error);
      }
    }
  }

  private checkRules(rules: ValidationRule[], value: unknown, path: string): void {
    const self = this.celValueOf(value);
    for (const rule of rules) {
      const program = compileAdmissionRule(rule.rule);
      const field = rule.fieldPath ? (path === '' ? rule.fieldPath.slice(1) : path + rule.fieldPath) : path;
      if (isCompileError(program)) {
        this.output.errors.push({
          type: 'Internal',
          field: path,
          detail: `rule does not compile: ${program.message}: ${rule.rule}`,
        });
        continue;
      }
      let result: unknown;
      try {
        result = program({ self });
      } catch (error) {
        this.output.errors.push({
          type: 'Invalid',
          field,
          value: JSON.stringify(jsonTypeOf(value)),
          detail: `${firstLine((error as Error).message)} evaluating rule: ${rule.rule}`,
        });
        continue;
      }
      if (result === true) continue;
      switch (rule.reason) {
        case 'FieldValueRequired':
          this.output.errors.push({ type: 'Required', field, detail: rule.message });
          break;
        case 'FieldValueForbidden':
          this.output.errors.push({ type: 'Forbidden', field, detail: rule.message });
          break;
        case 'FieldValueDuplicate':
          this.output.errors.push({ type: 'Duplicate', field, value: JSON.stringify(rule.message) });
          break;
        default:
          this.output.errors.push({
            type: 'Invalid',
            field,
            value: JSON.stringify(jsonTypeOf(value)),
            detail: rule.message,
          });
      }
    }
  }

  private celValueOf(value: unknown): unknown {
    if (value === null || typeof value !== 'object') return toCelValue(value);
    let converted = this.celValues.get(value);
    if (converted === undefined) {
      converted = toCelValue(value);
      this.celValues.set(value, converted);
    }
    return converted;
  }

  private invalid(path: string, value: unknown, should: string): void {
    this.output.errors.push({
      type: 'Invalid',
      field: path,
      value: renderValue(value),
      detail: `${path} in body ${should}`,
    });
  }
}

/** Validates `value` (already defaulted) against `schema`; `path` prefixes every field path. */
export function validateValue(
  schema: SchemaNode,
  value: unknown,
  path: string,
  options: ValidationOptions = { unknownFields: 'error' },
): ValidationOutput {
  const validator = new Validator(options);
  validator.validate(schema, value, path);
  return validator.output;
}
