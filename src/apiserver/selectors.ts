// Label and field selectors of list and watch requests, in Kubernetes' syntax:
//   labelSelector: app=web,tier!=db,env in (a,b),zone notin (x),canary,!legacy,replicas>2
//   fieldSelector: metadata.name=x,metadata.namespace!=y (the fields every custom resource supports)

import { labelValueProblem, qualifiedNameProblem } from '../api/kinds/object-meta.ts';
import type { KubeObject } from '../api/validate/admission.ts';
import { isPlainObject } from '../util/values.ts';
import { badRequest } from './errors.ts';

type Operator = 'exists' | '!exists' | '=' | '!=' | 'in' | 'notin' | 'gt' | 'lt';

interface Requirement {
  key: string;
  operator: Operator;
  values: string[];
}

export type Selector = (object: KubeObject) => boolean;

export const EVERYTHING: Selector = () => true;

function parseError(selector: string, detail: string) {
  return badRequest(`unable to parse requirement: ${detail} (in label selector "${selector}")`);
}

/** Splits on commas outside parentheses. */
function splitRequirements(text: string): string[] {
  const parts: string[] = [];
  let depth = 0;
  let start = 0;
  for (let i = 0; i < text.length; i++) {
    const char = text[i];
    if (char === '(') depth++;
    else if (char === ')') depth--;
    else if (char === ',' && depth === 0) {
      parts.push(text.slice(start, i));
      start = i + 1;
    }
  }
  parts.push(text.slice(start));
  return parts.map((part) => part.trim());
}

function checkKey(selector: string, key: string): void {
  const problem = qualifiedNameProblem(key);
  if (problem) throw parseError(selector, `key: Invalid value: ${JSON.stringify(key)}: ${problem}`);
}

function checkValue(selector: string, key: string, value: string): void {
  const problem = labelValueProblem(value);
  if (problem) throw parseError(selector, `values[0][${key}]: Invalid value: ${JSON.stringify(value)}: ${problem}`);
}

const SET_REQUIREMENT = /^(\S+)\s+(in|notin)\s*\((.*)\)$/;
const COMPARISON = /^([^=!<>\s]+)\s*(==|=|!=|>|<)\s*(.*)$/;

function parseRequirement(selector: string, text: string): Requirement {
  if (text === '')
    throw parseError(selector, 'found an empty requirement, expected: !, identifier, or "end of string"');
  const set = SET_REQUIREMENT.exec(text);
  if (set) {
    const [, key, operator, list] = set as unknown as [string, string, 'in' | 'notin', string];
    checkKey(selector, key);
    const values = list.split(',').map((value) => value.trim());
    for (const value of values) checkValue(selector, key, value);
    return { key, operator, values };
  }
  if (text.startsWith('!')) {
    const key = text.slice(1).trim();
    checkKey(selector, key);
    return { key, operator: '!exists', values: [] };
  }
  const comparison = COMPARISON.exec(text);
  if (comparison) {
    const [, key, symbol, rawValue] = comparison as unknown as [string, string, string, string];
    const value = rawValue.trim();
    checkKey(selector, key);
    if (symbol === '>' || symbol === '<') {
      if (!/^-?\d+$/.test(value)) {
        throw parseError(
          selector,
          `for 'Gt', 'Lt' operators, the value must be an integer, not ${JSON.stringify(value)}`,
        );
      }
      return { key, operator: symbol === '>' ? 'gt' : 'lt', values: [value] };
    }
    checkValue(selector, key, value);
    return { key, operator: symbol === '!=' ? '!=' : '=', values: [value] };
  }
  if (/\s/.test(text)) throw parseError(selector, `found '${text}', expected: in, notin, =, ==, !=, gt, lt`);
  checkKey(selector, text);
  return { key: text, operator: 'exists', values: [] };
}

function matches(requirement: Requirement, labels: Readonly<Record<string, string>>): boolean {
  const has = Object.hasOwn(labels, requirement.key);
  const value = labels[requirement.key];
  switch (requirement.operator) {
    case 'exists':
      return has;
    case '!exists':
      return !has;
    case '=':
      return has && value === requirement.values[0];
    case '!=':
      return !has || value !== requirement.values[0];
    case 'in':
      return has && requirement.values.includes(value!);
    case 'notin':
      return !has || !requirement.values.includes(value!);
    case 'gt':
    case 'lt': {
      if (!has || !/^-?\d+$/.test(value!)) return false;
      const number = Number(value);
      const bound = Number(requirement.values[0]);
      return requirement.operator === 'gt' ? number > bound : number < bound;
    }
  }
}

/** Parses a labelSelector; every requirement must hold. Throws a 400 ApiError when malformed. */
export function parseLabelSelector(text: string | null): Selector {
  if (text === null || text.trim() === '') return EVERYTHING;
  const requirements = splitRequirements(text).map((part) => parseRequirement(text, part));
  return (object) => {
    const labels = object.metadata.labels ?? {};
    return requirements.every((requirement) => matches(requirement, labels));
  };
}

const FIELD_SELECTOR_FIELDS = ['metadata.name', 'metadata.namespace'];

/** Parses a fieldSelector on metadata.name and metadata.namespace (=, ==, !=). */
export function parseFieldSelector(text: string | null): Selector {
  if (text === null || text.trim() === '') return EVERYTHING;
  const terms = text.split(',').map((term) => {
    const match = /^\s*([^=!\s]+)\s*(==|=|!=)\s*(.*?)\s*$/.exec(term);
    if (!match) throw badRequest(`invalid selector: '${text}'; can't understand '${term}'`);
    const [, field, operator, value] = match as unknown as [string, string, string, string];
    if (!FIELD_SELECTOR_FIELDS.includes(field)) {
      throw badRequest(
        `"${field}" is not a known field selector: only ${FIELD_SELECTOR_FIELDS.map((f) => `"${f}"`).join(', ')}`,
      );
    }
    return { field, negated: operator === '!=', value };
  });
  return (object) =>
    terms.every(({ field, negated, value }) => {
      const actual = field === 'metadata.name' ? (object.metadata.name ?? '') : (object.metadata.namespace ?? '');
      return (actual === value) !== negated;
    });
}

/** Both selectors of a request. */
export function parseSelectors(labelSelector: string | null, fieldSelector: string | null): Selector {
  const labels = parseLabelSelector(labelSelector);
  const fields = parseFieldSelector(fieldSelector);
  if (labels === EVERYTHING) return fields;
  if (fields === EVERYTHING) return labels;
  return (object) => labels(object) && fields(object);
}

/**
 * A metav1.LabelSelector in the syntax above, as kubectl prints it and a Scale's status carries it:
 * matchLabels as k=v, matchExpressions as `k in (a,b)`, `k`, `!k`; empty when it selects everything.
 */
export function formatLabelSelector(selector: unknown): string {
  const { matchLabels, matchExpressions } = isPlainObject(selector) ? selector : {};
  const parts = isPlainObject(matchLabels) ? Object.entries(matchLabels).map(([key, value]) => `${key}=${value}`) : [];
  for (const expression of Array.isArray(matchExpressions) ? matchExpressions.filter(isPlainObject) : []) {
    const values = Array.isArray(expression.values) ? expression.values.join(',') : '';
    if (expression.operator === 'In') parts.push(`${expression.key} in (${values})`);
    else if (expression.operator === 'NotIn') parts.push(`${expression.key} notin (${values})`);
    else if (expression.operator === 'Exists') parts.push(String(expression.key));
    else if (expression.operator === 'DoesNotExist') parts.push(`!${expression.key}`);
  }
  return parts.join(',');
}
