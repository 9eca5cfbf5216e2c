// Admission of a write through the api module (the same validation and defaults as `gw validate`
// and the CRDs), adapted to an API request: unknown fields follow the request's fieldValidation,
// errors become a 422 Invalid Status with one cause per field, warnings become Warning headers,
// and what kube-apiserver does on write besides is done here (a Secret's stringData merged into
// data, a Namespace's name label).
import type { SchemaNode } from '../api/schema/schema.ts';
import { admit, type KubeObject } from '../api/validate/admission.ts';
import { applyDefaults } from '../api/validate/defaults.ts';
import { type FieldError, formatFieldError } from '../api/validate/errors.ts';
import { validateValue } from '../api/validate/schema-validator.ts';
import { isPlainObject } from '../util/values.ts';
import { type ApiError, badRequest, invalid } from './errors.ts';
import type { ApiResource } from './resources.ts';
import { type FieldValidation, type PrunedField, pruneUnknownFields, unknownFieldText } from './unknown-fields.ts';

export interface Admitted {
  object: KubeObject;
  warnings: string[];
}

/** The label every Namespace carries with its own name (kube-apiserver sets it; selectors use it). */
export const NAMESPACE_NAME_LABEL = 'kubernetes.io/metadata.name';

function strictDecodingError(resource: ApiResource, fields: PrunedField[]): ApiError {
  return badRequest(
    `${resource.kind} in version "${resource.version}" cannot be handled as a ${resource.kind}: strict decoding error: ${fields.map(unknownFieldText).join(', ')}`,
  );
}

/**
 * Unknown fields of kinds gw defines (gw.dev) are pruned as a CRD prunes them: refused under
 * Strict, warned about under Warn. The Gateway API and core kinds keep fields gw does not model
 * (a real cluster accepts them; gw does not act on them) with a warning unless Ignore.
 */
function handleUnknownFields(
  resource: ApiResource,
  schema: SchemaNode | undefined,
  value: unknown,
  path: string,
  fieldValidation: FieldValidation,
  warnings: string[],
): void {
  if (resource.definition.unknownFields !== 'error') return;
  const pruned = pruneUnknownFields(schema, value, path);
  if (pruned.length === 0) return;
  if (fieldValidation === 'Strict') throw strictDecodingError(resource, pruned);
  if (fieldValidation === 'Warn') warnings.push(...pruned.map(unknownFieldText));
}

function warningTexts(errors: readonly FieldError[], fieldValidation: FieldValidation): string[] {
  return errors
    .filter((error) => error.type !== 'UnknownField' || fieldValidation !== 'Ignore')
    .map((error) =>
      error.type === 'UnknownField'
        ? unknownFieldText({ path: error.field, suggestion: error.suggestion })
        : formatFieldError(error),
    );
}

/**
 * Judges (and prunes) the unknown fields of an applied configuration before it merges with the
 * live object; returns the warnings. Admission of the merged object follows.
 */
export function judgeUnknownFields(
  resource: ApiResource,
  config: KubeObject,
  fieldValidation: FieldValidation,
): string[] {
  const warnings: string[] = [];
  handleUnknownFields(resource, resource.definition.schema, config, '', fieldValidation, warnings);
  return warnings;
}

/** Validates and defaults a whole object (create, update, patch, apply of the main resource). */
export function admitObject(resource: ApiResource, input: KubeObject, fieldValidation: FieldValidation): Admitted {
  const warnings: string[] = [];
  const value = structuredClone(input);
  handleUnknownFields(resource, resource.definition.schema, value, '', fieldValidation, warnings);
  const result = admit(value);
  const name = typeof value.metadata?.name === 'string' ? value.metadata.name : '';
  if (result.errors.length > 0) throw invalid(resource, name, result.errors);
  const object = result.object!;
  warnings.push(...warningTexts(result.warnings, fieldValidation));
  if (resource.kindKey === '/Secret') mergeStringData(object);
  if (resource.kindKey === '/Namespace') {
    object.metadata.labels = { ...object.metadata.labels, [NAMESPACE_NAME_LABEL]: object.metadata.name! };
  }
  return { object, warnings };
}

/** Validates and defaults a status written through the status subresource. */
export function admitStatus(
  resource: ApiResource,
  name: string,
  status: unknown,
  fieldValidation: FieldValidation,
): { status: unknown; warnings: string[] } {
  const warnings: string[] = [];
  const schema = resource.definition.schema.properties?.status;
  if (status === undefined || status === null || !schema) return { status: undefined, warnings };
  const value = structuredClone(status);
  handleUnknownFields(resource, schema, value, 'status', fieldValidation, warnings);
  applyDefaults(schema, value);
  const output = validateValue(schema, value, 'status', { unknownFields: resource.definition.unknownFields });
  if (output.errors.length > 0) throw invalid(resource, name, output.errors);
  warnings.push(...warningTexts(output.warnings, fieldValidation));
  return { status: value, warnings };
}

/** As kube-apiserver stores a Secret: stringData is write-only, merged (base64) into data. */
function mergeStringData(object: KubeObject): void {
  const stringData = object.stringData;
  if (!isPlainObject(stringData)) return;
  const data: Record<string, unknown> = isPlainObject(object.data) ? { ...object.data } : {};
  for (const [key, value] of Object.entries(stringData)) {
    if (typeof value === 'string') data[key] = Buffer.from(value).toString('base64');
  }
  object.data = data;
  delete object.stringData;
}

/** Parses the fieldValidation query parameter (default Warn, as kube-apiserver). */
export function parseFieldValidation(value: string | null): FieldValidation {
  if (value === null || value === '') return 'Warn';
  if (value === 'Strict' || value === 'Warn' || value === 'Ignore') return value;
  throw badRequest(`fieldValidation must be one of Strict, Warn or Ignore, not "${value}"`);
}
