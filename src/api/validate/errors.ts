// Field errors in the form the Kubernetes API server reports them (k8s.io/apimachinery field.Error),
// so that `gw validate`, the embedded API server and a real cluster print the same lines.

export type FieldErrorType =
  | 'Required'
  | 'Invalid'
  | 'Unsupported'
  | 'TooLong'
  | 'TooMany'
  | 'Forbidden'
  | 'Duplicate'
  | 'UnknownField'
  | 'Internal';

export interface FieldError {
  type: FieldErrorType;
  /** Kubernetes field path: spec.targets[0].port, spec.labels[key]. */
  field: string;
  /** What the error shows as the value, already rendered ("object", 70000, "\"abc\""). */
  value?: string;
  detail?: string;
  /** An unknown field's closest declared name at its path (already in `detail`), for other wordings. */
  suggestion?: string;
}

const TYPE_TEXT: Record<FieldErrorType, string> = {
  Required: 'Required value',
  Invalid: 'Invalid value',
  Unsupported: 'Unsupported value',
  TooLong: 'Too long',
  TooMany: 'Too many',
  Forbidden: 'Forbidden',
  Duplicate: 'Duplicate value',
  UnknownField: 'Unknown field',
  Internal: 'Internal error',
};

/** Renders a value as Kubernetes does in errors: strings quoted, numbers and booleans bare. */
export function renderValue(value: unknown): string {
  if (typeof value === 'string') return JSON.stringify(value);
  if (typeof value === 'number' || typeof value === 'boolean' || typeof value === 'bigint') return String(value);
  if (value === null) return 'null';
  return JSON.stringify(jsonTypeOf(value));
}

/** The JSON type name of a decoded value, as the OpenAPI validator names it. */
export function jsonTypeOf(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  if (typeof value === 'number') return Number.isInteger(value) ? 'integer' : 'number';
  return typeof value;
}

export function formatFieldError(error: FieldError): string {
  let text = `${error.field}: ${TYPE_TEXT[error.type]}`;
  if (error.value !== undefined) text += `: ${error.value}`;
  if (error.detail) text += `: ${error.detail}`;
  return text;
}

/**
 * One admission finding of an object as gw validate and gw run's reload print it: where it is
 * (file, document), the object, and the field.
 */
export function admissionLine(where: string, object: string, error: FieldError, severity: 'error' | 'warning'): string {
  return `${where}: ${object}: ${severity === 'warning' ? 'warning: ' : ''}${formatFieldError(error)}`;
}

export function childPath(parent: string, name: string): string {
  return parent === '' ? name : `${parent}.${name}`;
}

export function indexPath(parent: string, index: number | string): string {
  return `${parent}[${index}]`;
}
