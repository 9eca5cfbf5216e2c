// HTTP basic authentication (traffic.basicAuthentication; spec document 1, "Authentication"
// rule 2). Users are htpasswd lines, inline or a whole file in a Secret (key .htaccess unless
// secretRef.key says otherwise); their hashes are checked by htpasswd.ts. A rejection is 401 with
// a Basic challenge naming the realm. The user name becomes `basicAuth.username` in CEL for the
// policies after this one, and the credentials are removed before the request goes upstream.
//
// bcrypt (and, less so, SHA-crypt) is slow on purpose, so a successful check is remembered: a
// small LRU of SHA-256(user, password) digests, owned by this compiled policy. A changed user
// list is a new configuration, a new compiled policy and so an empty cache; a failed password is
// never remembered, so a wrong guess always pays the full hash.
import { createHash } from 'node:crypto';
import type { BasicAuthentication } from '../../../api/types/inbound-auth.ts';
import { secretValue } from '../../auth/backend/secret-value.ts';
import type { LocalResponse, PolicyCompileContext, PolicyCompiler, PolicyProblem } from '../types.ts';
import { compileCredentialLocation } from './credential-location.ts';
import { type PasswordVerifier, parseHtpasswd } from './htpasswd.ts';

const DEFAULT_SECRET_KEY = '.htaccess';
const DEFAULT_REALM = 'Restricted';
/** Successful checks remembered per compiled policy (a user with a few clients needs a few). */
const VERIFIED_CACHE_SIZE = 1024;

interface HtpasswdSource {
  lines: string[];
  /** The field the lines came from. */
  field: string;
  /** Where line `index` is, for a problem: users[index], or the line number in the Secret's file. */
  problem(index: number, message: string): PolicyProblem;
}

/** The htpasswd lines, inline or from the Secret. */
function htpasswdSource(
  value: BasicAuthentication,
  context: PolicyCompileContext,
  field: string,
): HtpasswdSource | PolicyProblem {
  if (value.users)
    return {
      lines: value.users,
      field: `${field}.users`,
      problem: (index, message) => ({ field: `${field}.users[${index}]`, message }),
    };
  const ref = { ...value.secretRef!, key: value.secretRef!.key ?? DEFAULT_SECRET_KEY };
  const secretField = `${field}.secretRef`;
  const text = secretValue(ref, context.data, context.namespace, secretField, { stripBearer: false });
  if (typeof text !== 'string') return { field: text.field, message: text.message.slice(text.field.length + 2) };
  const where = `Secret ${context.namespace}/${ref.name} key "${ref.key}"`;
  return {
    lines: text.split(/\r?\n/),
    field: secretField,
    problem: (index, message) => ({ field: secretField, message: `line ${index + 1} of ${where} ${message}` }),
  };
}

/** user:password from the credential (base64), split at the first colon; undefined when malformed. */
function decodeCredentials(credential: string): { user: string; password: Buffer } | undefined {
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(credential)) return undefined;
  const decoded = Buffer.from(credential, 'base64');
  const colon = decoded.indexOf(0x3a);
  if (colon <= 0) return undefined;
  return { user: decoded.subarray(0, colon).toString('utf8'), password: decoded.subarray(colon + 1) };
}

/** Remembers (user, password) pairs that verified, least recently used dropped first. */
class VerifiedCache {
  private readonly entries = new Set<string>();

  /** The user's length goes first, so no (user, password) pair hashes the same bytes as another. */
  static key(user: string, password: Buffer): string {
    return createHash('sha256')
      .update(`${Buffer.byteLength(user)}:${user}`)
      .update(password)
      .digest('base64');
  }

  has(key: string): boolean {
    if (!this.entries.has(key)) return false;
    this.entries.delete(key);
    this.entries.add(key);
    return true;
  }

  add(key: string): void {
    this.entries.delete(key);
    this.entries.add(key);
    if (this.entries.size > VERIFIED_CACHE_SIZE) this.entries.delete(this.entries.values().next().value!);
  }
}

/** The Basic challenge for `realm`, quoted as RFC 9110 quoted-strings are. */
function challenge(realm: string): string {
  return `Basic realm="${realm.replace(/["\\]/g, '\\$&')}"`;
}

export const compileBasicAuthentication: PolicyCompiler<BasicAuthentication> = (value, context) => {
  const field = `${context.path}.basicAuthentication`;
  const location = compileCredentialLocation(value.location, 'Basic', `${field}.location`);
  if ('message' in location) return location;
  const source = htpasswdSource(value, context, field);
  if ('message' in source) return source;
  const users = parseHtpasswd(source.lines);
  if (!(users instanceof Map)) return source.problem(users.line, users.message);
  if (users.size === 0) return { field: source.field, message: 'holds no users (only comments)' };
  // An unknown user is checked against a real hash all the same, so the answer takes as long
  // as a wrong password does and does not tell which user names exist.
  const decoy: PasswordVerifier = users.values().next().value!;
  const mode = value.mode ?? 'Strict';
  const headers = { 'www-authenticate': challenge(value.realm ?? DEFAULT_REALM) };
  const missing: LocalResponse = { status: 401, headers, body: 'credentials are required' };
  const invalid: LocalResponse = { status: 401, headers, body: 'the credentials are not valid' };
  const verified = new VerifiedCache();

  const check = async (user: string, password: Buffer): Promise<boolean> => {
    const key = VerifiedCache.key(user, password);
    if (verified.has(key)) return true;
    const verifier = users.get(user);
    if (!verifier) {
      await decoy.verify(password);
      return false;
    }
    if (!(await verifier.verify(password))) return false;
    verified.add(key);
    return true;
  };

  return {
    request: async (exchange) => {
      const credential = location.read(exchange);
      if (credential === undefined) return mode === 'Strict' ? missing : undefined;
      // Credentials that are sent are checked in both modes: Optional only lets a request without any pass.
      const credentials = decodeCredentials(credential);
      if (!credentials || !(await check(credentials.user, credentials.password))) return invalid;
      location.remove(exchange);
      exchange.setVariable('basicAuth', { username: credentials.user });
      return undefined;
    },
  };
};
