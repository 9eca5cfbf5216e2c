// Strategic merge patch of a JSON object, as Kubernetes applies it: maps merge recursively,
// lists with a merge key merge element by element, other lists and scalars are replaced, null
// removes a field, and the `$patch` directive (delete, replace, merge) changes that per map or
// list. Pure: neither input is modified (the result shares unchanged parts with the original).
// A patch that cannot apply is reported, never guessed at.
import type { JsonValue } from '../api/schema/schema.ts';
import { isPlainObject } from '../util/values.ts';
import type { MergeShape } from './merge-keys.ts';

type JsonObject = { [key: string]: JsonValue };

/** Why part of a patch cannot apply; path is the field in the patch, e.g. `template.spec.containers[0].$patch`. */
export interface PatchProblem {
  path: string;
  message: string;
}

const DIRECTIVE = '$patch';
const DIRECTIVES = ['delete', 'replace', 'merge'] as const;
type Directive = (typeof DIRECTIVES)[number];

/** Marks a map whose patch says `$patch: delete`: its parent drops the field. */
const DELETED = Symbol('deleted');

/**
 * Applies `patch` to `original` with the merge keys of `shape`. The result is a new object;
 * problems are every part of the patch that cannot apply (the result is then not to be used).
 */
export function strategicMerge(
  original: JsonObject | undefined,
  patch: JsonObject,
  shape: MergeShape | undefined,
  path: string,
): { value: JsonObject | undefined; problems: PatchProblem[] } {
  const problems: PatchProblem[] = [];
  const merged = mergeMap(original, patch, shape, path, problems);
  return { value: merged === DELETED ? undefined : merged, problems };
}

function mergeMap(
  original: JsonObject | undefined,
  patch: JsonObject,
  shape: MergeShape | undefined,
  path: string,
  problems: PatchProblem[],
): JsonObject | typeof DELETED {
  const directive = readDirective(patch, path, problems);
  if (directive === 'delete') return DELETED;
  // replace: the patch's own fields (with their directives applied) are the whole map.
  const result: JsonObject = directive === 'replace' || original === undefined ? {} : { ...original };
  for (const [key, value] of Object.entries(patch)) {
    if (key === DIRECTIVE) continue;
    const fieldPath = join(path, key);
    if (key.startsWith('$')) {
      problems.push({ path: fieldPath, message: `unsupported patch directive ${key}; gw supports $patch only` });
      continue;
    }
    const fieldShape = shape?.fields?.[key];
    if (value === null) {
      delete result[key];
    } else if (isPlainObject(value)) {
      const before = result[key];
      const merged = mergeMap(
        isPlainObject(before) ? (before as JsonObject) : undefined,
        value as JsonObject,
        fieldShape,
        fieldPath,
        problems,
      );
      if (merged === DELETED) delete result[key];
      else result[key] = merged;
    } else if (Array.isArray(value)) {
      const before = result[key];
      result[key] = mergeList(Array.isArray(before) ? before : [], value, fieldShape, fieldPath, problems);
    } else {
      result[key] = value;
    }
  }
  return result;
}

function mergeList(
  original: JsonValue[],
  patch: JsonValue[],
  shape: MergeShape | undefined,
  path: string,
  problems: PatchProblem[],
): JsonValue[] {
  // A lone `{$patch: replace}` element makes the rest of the patch the whole list; a lone
  // `{$patch: merge}` states the default. Both are markers, not elements.
  let replace = false;
  const elements: Array<{ value: JsonValue; index: number }> = [];
  patch.forEach((value, index) => {
    if (isPlainObject(value) && Object.keys(value).length === 1 && DIRECTIVE in value) {
      const directive = readDirective(value as JsonObject, `${path}[${index}]`, problems);
      if (directive === 'replace') replace = true;
      else if (directive === 'delete')
        problems.push({
          path: `${path}[${index}].${DIRECTIVE}`,
          message: shape?.mergeKey
            ? `an element with $patch: delete needs its merge key ${shape.mergeKey} to say which element to remove`
            : 'this list has no merge key, so single elements cannot be deleted; write the whole list instead',
        });
      return;
    }
    elements.push({ value, index });
  });

  const mergeKey = shape?.mergeKey;
  if (replace || mergeKey === undefined) {
    return elements.flatMap(({ value, index }) => {
      const elementPath = `${path}[${index}]`;
      if (isPlainObject(value) && DIRECTIVE in value) {
        problems.push({
          path: `${elementPath}.${DIRECTIVE}`,
          message:
            mergeKey === undefined
              ? 'this list has no merge key, so $patch cannot target one element; the list is replaced whole'
              : 'the list is replaced ($patch: replace), so its elements take no $patch of their own',
        });
        return [];
      }
      return [fresh(value, shape?.items, elementPath, problems)];
    });
  }

  const result = [...original];
  for (const { value, index } of elements) {
    const elementPath = `${path}[${index}]`;
    if (!isPlainObject(value)) {
      problems.push({ path: elementPath, message: `elements of this list are objects merged by ${mergeKey}` });
      continue;
    }
    const element = value as JsonObject;
    const key = element[mergeKey];
    if (key === undefined || key === null) {
      problems.push({
        path: elementPath,
        message: `the element has no ${mergeKey}, the key this list merges on; add ${mergeKey} to say which element to change or add`,
      });
      continue;
    }
    const position = result.findIndex((existing) => isPlainObject(existing) && sameKey(existing[mergeKey], key));
    const directive = readDirective(element, elementPath, problems);
    if (directive === null) continue; // reported
    if (directive === 'delete') {
      for (let i = result.length - 1; i >= 0; i--) {
        const existing = result[i];
        if (isPlainObject(existing) && sameKey(existing[mergeKey], key)) result.splice(i, 1);
      }
      continue;
    }
    const base = directive === 'replace' || position < 0 ? undefined : (result[position] as JsonObject);
    const merged = mergeMap(base, element, shape?.items, elementPath, problems);
    if (merged === DELETED) continue; // unreachable: delete is handled above
    if (position < 0) result.push(merged);
    else result[position] = merged;
  }
  return result;
}

/** A patch value with nothing under it: its directives and nulls applied to an empty original. */
function fresh(value: JsonValue, shape: MergeShape | undefined, path: string, problems: PatchProblem[]): JsonValue {
  if (isPlainObject(value)) {
    // An element with a $patch never gets here (reported by mergeList), so the map is not DELETED.
    const merged = mergeMap(undefined, value as JsonObject, shape, path, problems);
    return merged === DELETED ? {} : merged;
  }
  if (Array.isArray(value)) return mergeList([], value, shape, path, problems);
  return value;
}

/** The `$patch` of a map: undefined when absent, null (and a problem) when not a known directive. */
function readDirective(patch: JsonObject, path: string, problems: PatchProblem[]): Directive | undefined | null {
  if (!(DIRECTIVE in patch)) return undefined;
  const value = patch[DIRECTIVE];
  if (typeof value === 'string' && (DIRECTIVES as readonly string[]).includes(value)) return value as Directive;
  problems.push({
    path: join(path, DIRECTIVE),
    message: `unknown $patch value ${JSON.stringify(value)}; use one of ${DIRECTIVES.join(', ')}`,
  });
  return null;
}

/** Merge keys compare as JSON values: `80` and `"80"` are different ports, as in Kubernetes. */
function sameKey(a: JsonValue | undefined, b: JsonValue): boolean {
  return a !== undefined && JSON.stringify(a) === JSON.stringify(b);
}

function join(path: string, key: string): string {
  return path === '' ? key : `${path}.${key}`;
}
