// Errors as kube-apiserver reports them: a meta/v1 Status with a reason, an HTTP code, a message
// in Kubernetes' words (kubectl and client libraries match on reason and code, users read the
// message) and details — the object and, for invalid objects, one cause per field.
import { type FieldError, type FieldErrorType, formatFieldError } from '../api/validate/errors.ts';

export interface StatusCause {
  reason?: string;
  message?: string;
  field?: string;
}

export interface StatusDetails {
  name?: string;
  group?: string;
  kind?: string;
  uid?: string;
  causes?: StatusCause[];
  retryAfterSeconds?: number;
}

export interface Status {
  kind: 'Status';
  apiVersion: 'v1';
  metadata: Record<string, never>;
  status: 'Success' | 'Failure';
  message?: string;
  reason?: string;
  details?: StatusDetails;
  code: number;
}

/** What an error names: the resource ("gwbackends.gw.dev") or kind ("GwBackend.gw.dev"). */
export interface ErrorSubject {
  group: string;
  /** The plural resource name. */
  plural: string;
  kind: string;
}

export class ApiError extends Error {
  readonly code: number;
  readonly reason: string;
  readonly details: StatusDetails | undefined;
  constructor(code: number, reason: string, message: string, details?: StatusDetails) {
    super(message);
    this.code = code;
    this.reason = reason;
    this.details = details;
  }

  toStatus(): Status {
    const status: Status = {
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message: this.message,
      reason: this.reason,
      code: this.code,
    };
    if (this.details) status.details = this.details;
    return status;
  }
}

export function qualifiedResource(subject: ErrorSubject): string {
  return subject.group === '' ? subject.plural : `${subject.plural}.${subject.group}`;
}

export function qualifiedKind(subject: ErrorSubject): string {
  return subject.group === '' ? subject.kind : `${subject.kind}.${subject.group}`;
}

function resourceDetails(subject: ErrorSubject, name: string): StatusDetails {
  return { name, group: subject.group, kind: subject.plural };
}

export function notFound(subject: ErrorSubject, name: string): ApiError {
  return new ApiError(
    404,
    'NotFound',
    `${qualifiedResource(subject)} "${name}" not found`,
    resourceDetails(subject, name),
  );
}

export function alreadyExists(subject: ErrorSubject, name: string): ApiError {
  return new ApiError(
    409,
    'AlreadyExists',
    `${qualifiedResource(subject)} "${name}" already exists`,
    resourceDetails(subject, name),
  );
}

export function conflict(subject: ErrorSubject, name: string, why: string): ApiError {
  return new ApiError(
    409,
    'Conflict',
    `Operation cannot be fulfilled on ${qualifiedResource(subject)} "${name}": ${why}`,
    resourceDetails(subject, name),
  );
}

export const MODIFIED_CONFLICT =
  'the object has been modified; please apply your changes to the latest version and try again';

const CAUSE_REASONS: Record<FieldErrorType, string> = {
  Required: 'FieldValueRequired',
  Invalid: 'FieldValueInvalid',
  Unsupported: 'FieldValueNotSupported',
  TooLong: 'FieldValueTooLong',
  TooMany: 'FieldValueTooMany',
  Forbidden: 'FieldValueForbidden',
  Duplicate: 'FieldValueDuplicate',
  UnknownField: 'FieldValueInvalid',
  Internal: 'InternalError',
};

/** 422 Invalid: `GwBackend.gw.dev "x" is invalid: [a: Required value, b: ...]`, one cause per error. */
export function invalid(subject: ErrorSubject, name: string, errors: readonly FieldError[]): ApiError {
  const texts = errors.map(formatFieldError);
  const summary = texts.length === 1 ? texts[0] : `[${texts.join(', ')}]`;
  return new ApiError(422, 'Invalid', `${qualifiedKind(subject)} "${name}" is invalid: ${summary}`, {
    name,
    group: subject.group,
    kind: subject.kind,
    causes: errors.map((error) => ({
      reason: CAUSE_REASONS[error.type],
      // The cause message is the error without its field, which kubectl prints after the field.
      message: formatFieldError(error).slice(error.field.length + 2),
      field: error.field,
    })),
  });
}

export function badRequest(message: string): ApiError {
  return new ApiError(400, 'BadRequest', message);
}

/** A watch or list at a revision that has been compacted away (kube-apiserver: 410 Expired). */
export function expired(message: string): ApiError {
  return new ApiError(410, 'Expired', message);
}

export function methodNotAllowed(): ApiError {
  return new ApiError(405, 'MethodNotAllowed', 'the server does not allow this method on the requested resource');
}

export function pathNotFound(): ApiError {
  return new ApiError(404, 'NotFound', 'the server could not find the requested resource', {});
}

export function unsupportedMediaType(contentType: string, accepted: readonly string[]): ApiError {
  return new ApiError(
    415,
    'UnsupportedMediaType',
    `the body of the request was in an unknown format (${contentType || 'no Content-Type'}) - accepted media types include: ${accepted.join(', ')}`,
  );
}

export function unauthorized(): ApiError {
  return new ApiError(401, 'Unauthorized', 'Unauthorized');
}

export function tooLarge(limit: number): ApiError {
  return new ApiError(413, 'RequestEntityTooLarge', `the request body is larger than ${limit} bytes`);
}

export function internalError(error: Error): ApiError {
  return new ApiError(500, 'InternalError', `Internal error occurred: ${error.message}`, {
    causes: [{ message: error.message }],
  });
}

/** The body of a successful delete that removed the object. */
export function deletedStatus(subject: ErrorSubject, name: string, uid: string | undefined): Status {
  const details: StatusDetails = { name, group: subject.group, kind: subject.plural };
  if (uid) details.uid = uid;
  return { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success', details, code: 200 };
}
