// API key authentication (traffic.apiKeyAuthentication; spec document 1, "Authentication" rule 1).
// The keys come from one Secret (secretRef) or every Secret or ConfigMap a label selector chose
// (the controller lists those in `selected`); their entries are parsed by the same code that
// writes the policy's status, and an entry that does not parse (a raw key in a ConfigMap, broken
// JSON, a bad keyHash) is left out: the status names it. Keys are held only as SHA-256 digests
// in a map keyed by digest, so a lookup never compares key text, and the match is confirmed with
// a constant-time comparison of the digests. The key presented is removed from the request
// before it goes upstream.
import { createHash, timingSafeEqual } from 'node:crypto';
import { parseApiKeyObject } from '../../../api/references/api-key-entries.ts';
import type { ApiKeyAuthenticationConfig } from '../../../contract/dataplane-config.ts';
import type { LocalResponse, PolicyCompileContext, PolicyCompiler, PolicyProblem } from '../types.ts';
import { compileCredentialLocation } from './credential-location.ts';

interface KnownKey {
  digest: Buffer;
  metadata: Record<string, unknown>;
}

/** Keys by the hex of their SHA-256 digest. */
type KeyTable = Map<string, KnownKey>;

function sha256(text: string): Buffer {
  return createHash('sha256').update(text).digest();
}

/** The metadata of the key `presented`, or undefined when no entry holds it. */
function lookup(keys: KeyTable, presented: string): Record<string, unknown> | undefined {
  const digest = sha256(presented);
  const known = keys.get(digest.toString('hex'));
  if (!known || !timingSafeEqual(known.digest, digest)) return undefined;
  return known.metadata;
}

/** The objects ("Kind ns/name") the keys are read from, or why they cannot be. */
function keySources(value: ApiKeyAuthenticationConfig, context: PolicyCompileContext): string[] | PolicyProblem {
  const field = `${context.path}.apiKeyAuthentication`;
  if (value.secretRef) {
    const ref = value.secretRef;
    if ((ref.group ?? '') !== '' || (ref.kind ?? 'Secret') !== 'Secret')
      return { field: `${field}.secretRef.kind`, message: `only a core Secret can hold API keys (got ${ref.kind})` };
    const key = `Secret ${context.namespace}/${ref.name}`;
    if (context.data(key) === undefined) return { field: `${field}.secretRef.name`, message: `${key} was not found` };
    return [key];
  }
  // A selector that chose nothing leaves no keys: Strict then rejects every request (the status
  // says the selector matched nothing).
  if (value.selected === undefined)
    return {
      field: value.secretSelector ? `${field}.secretSelector` : `${field}.configMapSelector`,
      message: 'the configuration does not list the objects the selector chose; the controller must resolve it',
    };
  return value.selected;
}

/**
 * Every usable entry of `sources`. The same key in two entries is undefined behaviour in the
 * spec; gw keeps the first, in object-name then entry-name order, so the choice is stable.
 */
function keyTable(sources: readonly string[], context: PolicyCompileContext): KeyTable {
  const keys: KeyTable = new Map();
  for (const source of sources) {
    const data = context.data(source);
    if (data === undefined) continue;
    // The data is decoded text already; a Secret's stringData and a ConfigMap's data are text too.
    const parsed = source.startsWith('Secret ')
      ? parseApiKeyObject({ kind: 'Secret', stringData: data })
      : parseApiKeyObject({ kind: 'ConfigMap', data });
    for (const entry of parsed.entries) {
      const digest = entry.keyHash ?? sha256(entry.key!);
      const id = digest.toString('hex');
      if (!keys.has(id)) keys.set(id, { digest, metadata: entry.metadata });
    }
  }
  return keys;
}

function unauthorized(message: string, challenge: string | undefined): LocalResponse {
  return challenge === undefined
    ? { status: 401, body: message, own: 'refusal' }
    : { status: 401, headers: { 'www-authenticate': challenge }, body: message, own: 'refusal' };
}

/** Where the policy reads the key, in the words of a 401's message. */
function whereRead(location: ApiKeyAuthenticationConfig['location']): string {
  if (location === undefined) return 'the Authorization header as "Bearer <key>"';
  if (location.header)
    return `the ${location.header.name} header${location.header.prefix ? ` after "${location.header.prefix}"` : ''}`;
  if (location.queryParameter) return `the query parameter ${location.queryParameter.name}`;
  if (location.cookie) return `the cookie ${location.cookie.name}`;
  return "the policy's location expression";
}

/**
 * The 401s of a request without a key where the policy reads it. Each says where gw looks; one
 * that sent x-api-key (as Anthropic's API documents it, and clients written for it send) to a
 * policy reading elsewhere is told so, since its key was not wrong, only unread.
 */
function missingKeyAnswers(
  location: ApiKeyAuthenticationConfig['location'],
  challenge: string | undefined,
): { missing: LocalResponse; unreadXApiKey: LocalResponse } {
  const where = whereRead(location);
  const readsXApiKey = location?.header?.name.toLowerCase() === 'x-api-key';
  const missing = unauthorized(`an API key is required; gw reads it from ${where}`, challenge);
  const unreadXApiKey = readsXApiKey
    ? missing
    : unauthorized(
        `an API key is required; gw reads it from ${where}, not from the x-api-key header this request sent ` +
          `(send the key there, or set the policy's location to the x-api-key header)`,
        challenge,
      );
  return { missing, unreadXApiKey };
}

export const compileApiKeyAuthentication: PolicyCompiler<ApiKeyAuthenticationConfig> = (value, context) => {
  const location = compileCredentialLocation(value.location, 'Bearer', `${context.path}.apiKeyAuthentication.location`);
  if ('message' in location) return location;
  const sources = keySources(value, context);
  if (!Array.isArray(sources)) return sources;
  const keys = keyTable(sources, context);
  const mode = value.mode ?? 'Strict';
  // HTTP defines a challenge for the Authorization header only (RFC 6750's Bearer).
  const bearer = value.location === undefined;
  const { missing, unreadXApiKey } = missingKeyAnswers(value.location, bearer ? 'Bearer' : undefined);
  const invalid = unauthorized('the API key is not valid', bearer ? 'Bearer error="invalid_token"' : undefined);
  return {
    request: (exchange) => {
      const presented = location.read(exchange);
      if (presented === undefined) {
        if (mode !== 'Strict') return undefined;
        return exchange.forward.headers['x-api-key'] === undefined ? missing : unreadXApiKey;
      }
      // The key is the gateway's credential, valid or not: it never goes upstream.
      location.remove(exchange);
      const metadata = lookup(keys, presented);
      if (metadata) {
        exchange.setApiKey(metadata);
        return undefined;
      }
      return mode === 'Permissive' ? undefined : invalid;
    },
  };
};
