// Builders for the CEL rules the spec's tables state again and again ("exactly one of",
// "at most one of", "required together"...), so that each is written one way everywhere.
import type { ValidationRule } from './schema.ts';

function hasList(fields: readonly string[]): string {
  return `[${fields.map((f) => `has(self.${f})`).join(', ')}]`;
}

/** How a field is named in a message; `label` adds what a neutral name stands for (`cloudone (AWS)`). */
type FieldLabel = (field: string) => string;

function listWords(fields: readonly string[], label: FieldLabel = (field) => field): string {
  return fields.map(label).join(', ');
}

export function exactlyOneOf(fields: readonly string[], label?: FieldLabel): ValidationRule {
  return {
    rule: `${hasList(fields)}.exists_one(x, x)`,
    message: `exactly one of ${listWords(fields, label)} must be set`,
  };
}

export function atMostOneOf(fields: readonly string[], label?: FieldLabel): ValidationRule {
  return {
    rule: `${hasList(fields)}.filter(x, x).size() <= 1`,
    message: `at most one of ${listWords(fields, label)} may be set`,
  };
}

export function atLeastOneOf(fields: readonly string[]): ValidationRule {
  return {
    rule: `${hasList(fields)}.exists(x, x)`,
    message: `at least one of ${listWords(fields)} must be set`,
  };
}

/** Both or neither. */
export function requiredTogether(a: string, b: string): ValidationRule {
  return {
    rule: `has(self.${a}) == has(self.${b})`,
    message: `${a} and ${b} must be set together`,
  };
}

/** `field` must be set when `condition` (CEL over self) holds; `when` says it in words. */
export function requiredWhen(field: string, condition: string, when: string): ValidationRule {
  return {
    rule: `!(${condition}) || has(self.${field})`,
    message: `${field} is required ${when}`,
    fieldPath: `.${field}`,
    reason: 'FieldValueRequired',
  };
}

/** `field` may be set only when `condition` (CEL over self) holds. */
export function onlyWhen(field: string, condition: string, when: string): ValidationRule {
  return {
    rule: `!has(self.${field}) || (${condition})`,
    message: `${field} may be set only ${when}`,
    fieldPath: `.${field}`,
    reason: 'FieldValueForbidden',
  };
}

/** The items of a list field have unique values of `key`. */
export function uniqueKey(list: string, key: string): ValidationRule {
  return {
    rule: `self.${list}.all(a, self.${list}.exists_one(b, b.${key} == a.${key}))`,
    message: `${list} entries must have unique ${key} values`,
  };
}
