// HTTP basic authentication (traffic.basicAuthentication; spec document 1, "Authentication"
// rule 2). Users are htpasswd lines, inline or a whole file in a Secret (key .htaccess unless
// secretRef.key says otherwise); their hashes are checked by htpasswd.ts. A rejection is 401 with
// a Basic challenge naming the realm. The user name becomes `basicAuth.username` in CEL for the
// policies after this one, and the credentials are removed before the request goes upstream.
//
// Password hashes are slow on purpose, so a check is built to withstand a flood of guesses:
// - a successful check is remembered (verified-cache.ts): a client pays the hash once per few minutes;
// - every hash but {SHA} is checked on the hashing pool's threads (hashing-pool.ts), never on the
//   event loop; when the pool is full or a check waits too long, the answer is 503;
// - a failed check costs the same whoever the user: one hash of every cost class in the policy
//   (the user's own, then a decoy of each other class), so the time taken does not tell which
//   user names exist, nor their hash format.
import type { BasicAuthentication } from '../../../api/types/inbound-auth.ts';
import { secretValue } from '../../auth/backend/secret-value.ts';
import type { LocalResponse, PolicyCompileContext, PolicyCompiler, PolicyProblem } from '../types.ts';
import { compileCredentialLocation } from './credential-location.ts';
import { type HashingPool, HashingUnavailable, hashingPool } from './hashing-pool.ts';
import { checkWithDecoys, type PasswordVerifier, parseHtpasswd } from './htpasswd.ts';
import { VerifiedCache } from './verified-cache.ts';

const DEFAULT_SECRET_KEY = '.htaccess';
const DEFAULT_REALM = 'Restricted';
/**
 * The longest password checked. MD5-crypt and SHA-crypt cost grows with the password's length
 * (SHA-crypt's with its square), so a longer one is refused (401) without hashing: no real
 * password is this long, and an attacker could otherwise make each guess cost seconds.
 */
const MAX_PASSWORD_BYTES = 1024;
/** How long a client refused for want of a free hashing thread is asked to wait. */
const RETRY_AFTER_SECONDS = 1;

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

/** user:password from the credential (base64), split at the first colon; undefined when malformed or too long. */
function decodeCredentials(credential: string): { user: string; password: Buffer } | undefined {
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(credential)) return undefined;
  const decoded = Buffer.from(credential, 'base64');
  const colon = decoded.indexOf(0x3a);
  if (colon <= 0 || decoded.length - colon - 1 > MAX_PASSWORD_BYTES) return undefined;
  return { user: decoded.subarray(0, colon).toString('utf8'), password: decoded.subarray(colon + 1) };
}

/** What a failed check pays on top of the user's own hash: a decoy of each other cost class. */
interface Decoys {
  /** Checked on the event loop. */
  inline: PasswordVerifier[];
  /** Sent to the hashing pool, as their hashes. */
  pooled: string[];
}

/**
 * The decoys for a user of each cost class in the policy, by that class; under '' those of an
 * unknown user, one of every class. A decoy is the first user's hash of its class; its answer is ignored.
 */
function decoysByClass(users: ReadonlyMap<string, PasswordVerifier>): Map<string, Decoys> {
  const representatives = new Map<string, PasswordVerifier>();
  for (const verifier of users.values())
    if (!representatives.has(verifier.costClass)) representatives.set(verifier.costClass, verifier);
  const byClass = new Map<string, Decoys>();
  for (const ownClass of ['', ...representatives.keys()]) {
    const others = [...representatives.values()].filter((verifier) => verifier.costClass !== ownClass);
    byClass.set(ownClass, {
      inline: others.filter((verifier) => verifier.inline),
      pooled: others.filter((verifier) => !verifier.inline).map((verifier) => verifier.hash),
    });
  }
  return byClass;
}

/**
 * Whether `password` is the user's: inline formats on the event loop, the others on the hashing
 * pool (which may refuse with HashingUnavailable). Whatever the user, a failure has checked
 * every cost class once.
 */
async function checkPassword(
  user: PasswordVerifier | undefined,
  password: Buffer,
  decoys: Decoys,
  pool: HashingPool | undefined,
): Promise<boolean> {
  if (checkWithDecoys(password, user?.inline ? user : undefined, decoys.inline)) return true;
  const pooledOwn = user && !user.inline ? user.hash : undefined;
  if (pooledOwn === undefined && decoys.pooled.length === 0) return false;
  // There is a pool whenever a hash needs one (compile asks for it then).
  return pool!.check({ password, own: pooledOwn, decoys: decoys.pooled });
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
  const decoys = decoysByClass(users);
  const mode = value.mode ?? 'Strict';
  const headers = { 'www-authenticate': challenge(value.realm ?? DEFAULT_REALM) };
  const missing: LocalResponse = { status: 401, headers, body: 'credentials are required', own: 'refusal' };
  const invalid: LocalResponse = { status: 401, headers, body: 'the credentials are not valid', own: 'refusal' };
  const busy: LocalResponse = {
    status: 503,
    headers: { 'retry-after': String(RETRY_AFTER_SECONDS) },
    body: 'too many password checks are in progress; retry in a moment',
    own: 'overloaded',
  };
  const verified = new VerifiedCache(context.runtime.clock.monotonicMs);
  // Asked for at compile time when some hash needs it, so that the runtime keeps it for this
  // configuration; its threads start with the first check.
  const needsPool = [...users.values()].some((verifier) => !verifier.inline);
  const pool = needsPool ? hashingPool(context.runtime) : undefined;

  const check = async (user: string, password: Buffer): Promise<boolean> => {
    const key = verified.key(user, password);
    if (verified.has(key)) return true;
    const verifier = users.get(user);
    const matched = await checkPassword(verifier, password, decoys.get(verifier?.costClass ?? '')!, pool);
    if (matched) verified.add(key);
    return matched;
  };

  return {
    request: async (exchange) => {
      const credential = location.read(exchange);
      if (credential === undefined) return mode === 'Strict' ? missing : undefined;
      // Credentials that are sent are checked in both modes: Optional only lets a request without any pass.
      const credentials = decodeCredentials(credential);
      if (!credentials) return invalid;
      try {
        if (!(await check(credentials.user, credentials.password))) return invalid;
      } catch (error) {
        if (!(error instanceof HashingUnavailable)) throw error;
        // The access log says why (full, waited too long, stopped, failed); the client gets the 503.
        exchange.record.error = `basicAuthentication: ${error.message}`;
        return busy;
      }
      location.remove(exchange);
      exchange.setVariable('basicAuth', { username: credentials.user });
      return undefined;
    },
  };
};
