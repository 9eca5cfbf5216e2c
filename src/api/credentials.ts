// Where gw's API holds a credential written inline (rather than in a Secret), named by the schema's
// own named types, so that whatever shows objects outside gw (the web UI) can hide exactly those
// values: an inline backend key, an htpasswd line's hash, the value of a credential header (or
// environment variable, or query parameter) a spec sets or matches. test/api/credentials.test.ts
// walks every kind's schema and fails on a field that looks like a credential and is neither
// listed here nor named as not one, so a new inline credential field cannot be forgotten.
import type { SchemaNode } from './schema/schema.ts';

/** Fields whose whole value is a credential, by the named type that declares them. */
export const INLINE_CREDENTIAL_FIELDS: Readonly<Record<string, readonly string[]>> = {
  BackendAuth: ['key'],
  ModelBackendAuth: ['key'],
  AlphaModerationAuth: ['key'],
  ZetaGuardrailsAuth: ['key'],
};

/** Lists of htpasswd lines (user:hash): the user is shown, the hash is a credential (cracked offline). */
export const PASSWORD_LINE_FIELDS: Readonly<Record<string, readonly string[]>> = {
  BasicAuthentication: ['users'],
};

/**
 * Maps from a name to a value that gw sends or computes (headers and metadata for a guard or an
 * authorization service, token request parameters, transformation values; CEL, which may hold a
 * string literal): a value is a credential when its name is a credential's (isCredentialName).
 */
export const NAMED_VALUE_MAP_FIELDS: Readonly<Record<string, readonly string[]>> = {
  Webhook: ['headers'],
  AgentExtAuthHTTP: ['addRequestHeaders', 'responseMetadata'],
  AgentExtAuthGRPC: ['contextExtensions', 'requestMetadata'],
  ExtProc: ['requestAttributes', 'responseAttributes'],
  ExtProcOrConditional: ['requestAttributes', 'responseAttributes'],
  MCPGuardrailsRemote: ['metadata'],
  OAuthTokenExchange: ['additionalParams'],
  Transform: ['metadata'],
};

/**
 * Whether a schema node pairs a `name` with a string `value` (a header set by a header modifier,
 * a transformation or a direct response, a header or query parameter a route or guard matches on
 * — a match on a key is the key —, a container's environment variable, a probe's header): its
 * value is a credential when the name is a credential's. A structural rule, so that a new pair
 * type is covered without being listed.
 */
export function isNamedValuePair(node: SchemaNode): boolean {
  return node.properties?.name?.type === 'string' && node.properties?.value?.type === 'string';
}

/**
 * Whether a header (or variable, or parameter) of this name carries a credential: the standard
 * credential headers, and any name that says key, token, secret, session, password, auth or
 * credential (X-Api-Key, Api-Key, X-Goog-Api-Key, X-Auth-Token, OPENAI_API_KEY...). Deliberately
 * wide: hiding a harmless value costs a look at the file, showing a key costs the key. The CEL
 * playground's recorded requests use the same test (dataplane/telemetry/recorded-cel.ts).
 */
export function isCredentialName(name: string): boolean {
  return CREDENTIAL_NAME.test(name);
}

const CREDENTIAL_NAME =
  /^(authorization|proxy-authorization|cookie|set-cookie)$|key|token|secret|session|password|passwd|auth|credential/i;
