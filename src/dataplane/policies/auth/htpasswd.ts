// htpasswd password hashes (traffic.basicAuthentication): each `user:hash` line becomes a
// verifier for its hash format. The formats are those Apache's htpasswd and `openssl passwd`
// write: apr1 MD5-crypt ($apr1$, and the original $1$), bcrypt ($2a$/$2b$/$2y$, through
// bcryptjs), SHA-crypt ($5$ SHA-256, $6$ SHA-512, with an optional rounds=) and {SHA} (base64
// SHA-1). DES crypt and plain-text passwords are refused: they are not hashes worth trusting.
// MD5-crypt and SHA-crypt are written here from their published descriptions (Kamp's MD5-crypt,
// Drepper's "Unix crypt using SHA-256 and SHA-512"). Every comparison is constant-time.
// Verification is synchronous: every format but {SHA} costs a millisecond or more of CPU, so
// basic.ts runs those on the hashing pool's threads (hashing-pool.ts), never on the event loop.
import { isUtf8 } from 'node:buffer';
import { createHash, timingSafeEqual } from 'node:crypto';
import bcrypt from 'bcryptjs';

export type PasswordFormat = 'apr1' | 'md5-crypt' | 'bcrypt' | 'sha256-crypt' | 'sha512-crypt' | 'sha1';

export interface PasswordVerifier {
  readonly format: PasswordFormat;
  /** The stored hash, as the htpasswd line has it (what a hashing thread is given). */
  readonly hash: string;
  /**
   * Hashes of one cost class take the same time to check a given password: the format and its
   * work factor ("bcrypt cost 10", "sha512-crypt 5000 rounds"). What a decoy must match.
   */
  readonly costClass: string;
  /** Cheap enough (microseconds) to check on the event loop; the others go to the hashing pool. */
  readonly inline: boolean;
  /** True when `password` (the bytes the client sent) hashes to the stored hash. */
  verify(password: Buffer): boolean;
}

/** The crypt(3) alphabet: 6 bits per character, least significant first. */
const CRYPT_ALPHABET = './0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

/** `count` characters for the 24-bit group b2 b1 b0 (crypt's b64_from_24bit). */
function cryptBase64(b2: number, b1: number, b0: number, count: number): string {
  let value = (b2 << 16) | (b1 << 8) | b0;
  let out = '';
  for (let i = 0; i < count; i++) {
    out += CRYPT_ALPHABET[value & 0x3f];
    value >>>= 6;
  }
  return out;
}

function sameText(computed: string, stored: string): boolean {
  const a = Buffer.from(computed);
  const b = Buffer.from(stored);
  return a.length === b.length && timingSafeEqual(a, b);
}

// ---------------------------------------------------------------------------------------------
// MD5-crypt: 1000 rounds of MD5 over password, salt and the previous digest.

/** The 22-character MD5-crypt hash of `password` with `salt` (at most 8 characters) and `magic`. */
function md5Crypt(password: Buffer, salt: string, magic: '$1$' | '$apr1$'): string {
  const saltBytes = Buffer.from(salt.slice(0, 8));
  const alternate = createHash('md5').update(password).update(saltBytes).update(password).digest();
  const context = createHash('md5').update(password).update(magic).update(saltBytes);
  for (let left = password.length; left > 0; left -= 16) context.update(alternate.subarray(0, Math.min(left, 16)));
  // For each bit of the length: a zero byte when it is set, the password's first byte when not.
  for (let bits = password.length; bits > 0; bits >>>= 1)
    context.update(bits & 1 ? Buffer.of(0) : password.subarray(0, 1));
  let digest: Buffer = context.digest();
  for (let round = 0; round < 1000; round++) digest = cryptRound('md5', round, digest, password, saltBytes);
  const d = digest;
  return (
    cryptBase64(d[0]!, d[6]!, d[12]!, 4) +
    cryptBase64(d[1]!, d[7]!, d[13]!, 4) +
    cryptBase64(d[2]!, d[8]!, d[14]!, 4) +
    cryptBase64(d[3]!, d[9]!, d[15]!, 4) +
    cryptBase64(d[4]!, d[10]!, d[5]!, 4) +
    cryptBase64(0, 0, d[11]!, 2)
  );
}

const MD5_CRYPT = /^(\$apr1\$|\$1\$)([^$]{0,8})\$([./0-9A-Za-z]{22})$/;

function md5CryptVerifier(hash: string): PasswordVerifier | undefined {
  const match = MD5_CRYPT.exec(hash);
  if (!match) return undefined;
  const magic = match[1] as '$1$' | '$apr1$';
  const salt = match[2]!;
  const stored = match[3]!;
  return {
    format: magic === '$apr1$' ? 'apr1' : 'md5-crypt',
    hash,
    // apr1 and $1$ differ only in the magic string: the same 1000 rounds.
    costClass: 'md5-crypt',
    inline: false,
    verify: (password) => sameText(md5Crypt(password, salt, magic), stored),
  };
}

// ---------------------------------------------------------------------------------------------
// SHA-crypt ($5$ and $6$).

const SHA_CRYPT_DEFAULT_ROUNDS = 5000;
const SHA_CRYPT_MIN_ROUNDS = 1000;
const SHA_CRYPT_MAX_ROUNDS = 999_999_999;
/**
 * The most rounds gw accepts: every uncached check pays them, and a million rounds is already
 * about a second of CPU. Larger values are refused rather than left to tie up the hashing threads.
 */
const SHA_CRYPT_ACCEPTED_ROUNDS = 1_000_000;

/** Byte triples of the final digest in output order (the spec's permutation), then the tail. */
const SHA256_ORDER = [
  [0, 10, 20],
  [21, 1, 11],
  [12, 22, 2],
  [3, 13, 23],
  [24, 4, 14],
  [15, 25, 5],
  [6, 16, 26],
  [27, 7, 17],
  [18, 28, 8],
  [9, 19, 29],
] as const;
const SHA512_ORDER = [
  [0, 21, 42],
  [22, 43, 1],
  [44, 2, 23],
  [3, 24, 45],
  [25, 46, 4],
  [47, 5, 26],
  [6, 27, 48],
  [28, 49, 7],
  [50, 8, 29],
  [9, 30, 51],
  [31, 52, 10],
  [53, 11, 32],
  [12, 33, 54],
  [34, 55, 13],
  [56, 14, 35],
  [15, 36, 57],
  [37, 58, 16],
  [59, 17, 38],
  [18, 39, 60],
  [40, 61, 19],
  [62, 20, 41],
] as const;

/** `length` bytes of `block` repeated (the spec's P and S sequences). */
function repeated(block: Buffer, length: number): Buffer {
  const out = Buffer.alloc(length);
  for (let offset = 0; offset < length; offset += block.length) block.copy(out, offset, 0, length - offset);
  return out;
}

/** The encoded SHA-crypt hash (43 or 86 characters) of `password` with `salt` (at most 16 characters). */
function shaCrypt(algorithm: 'sha256' | 'sha512', password: Buffer, salt: string, rounds: number): string {
  const size = algorithm === 'sha256' ? 32 : 64;
  const saltBytes = Buffer.from(salt.slice(0, 16));
  const alternate = createHash(algorithm).update(password).update(saltBytes).update(password).digest();
  const context = createHash(algorithm).update(password).update(saltBytes);
  let left = password.length;
  for (; left > size; left -= size) context.update(alternate);
  context.update(alternate.subarray(0, left));
  // For each bit of the length: the alternate digest when it is set, the password when not.
  for (let bits = password.length; bits > 0; bits >>>= 1) context.update(bits & 1 ? alternate : password);
  let digest: Buffer = context.digest();

  const passwordDigest = createHash(algorithm);
  for (let i = 0; i < password.length; i++) passwordDigest.update(password);
  const p = repeated(passwordDigest.digest(), password.length);
  const saltDigest = createHash(algorithm);
  for (let i = 0; i < 16 + digest[0]!; i++) saltDigest.update(saltBytes);
  const s = repeated(saltDigest.digest(), saltBytes.length);

  for (let round = 0; round < rounds; round++) digest = cryptRound(algorithm, round, digest, p, s);

  const d = digest;
  let out = '';
  for (const [a, b, c] of algorithm === 'sha256' ? SHA256_ORDER : SHA512_ORDER)
    out += cryptBase64(d[a]!, d[b]!, d[c]!, 4);
  return algorithm === 'sha256' ? out + cryptBase64(0, d[31]!, d[30]!, 3) : out + cryptBase64(0, 0, d[63]!, 2);
}

/**
 * One round of MD5-crypt and SHA-crypt (the same in both specifications): the previous digest,
 * the password and the salt hashed in an order the round number decides.
 */
function cryptRound(algorithm: string, round: number, previous: Buffer, password: Buffer, salt: Buffer): Buffer {
  const step = createHash(algorithm);
  step.update(round & 1 ? password : previous);
  if (round % 3 !== 0) step.update(salt);
  if (round % 7 !== 0) step.update(password);
  step.update(round & 1 ? previous : password);
  return step.digest();
}

const SHA_CRYPT = /^\$([56])\$(?:rounds=(\d{1,10})\$)?([^$]{0,16})\$([./0-9A-Za-z]+)$/;

function shaCryptVerifier(hash: string): PasswordVerifier | undefined {
  const match = SHA_CRYPT.exec(hash);
  if (!match) return undefined;
  const algorithm = match[1] === '5' ? 'sha256' : 'sha512';
  const stored = match[4]!;
  if (stored.length !== (algorithm === 'sha256' ? 43 : 86)) return undefined;
  // Out-of-range rounds are clamped, as the specification says.
  const asked = match[2] === undefined ? SHA_CRYPT_DEFAULT_ROUNDS : Number(match[2]);
  const rounds = Math.min(Math.max(asked, SHA_CRYPT_MIN_ROUNDS), SHA_CRYPT_MAX_ROUNDS);
  if (rounds > SHA_CRYPT_ACCEPTED_ROUNDS) return undefined;
  const salt = match[3]!;
  const format = algorithm === 'sha256' ? 'sha256-crypt' : 'sha512-crypt';
  return {
    format,
    hash,
    costClass: `${format} ${rounds} rounds`,
    inline: false,
    verify: (password) => sameText(shaCrypt(algorithm, password, salt, rounds), stored),
  };
}

// ---------------------------------------------------------------------------------------------
// bcrypt and {SHA}.

const BCRYPT = /^\$2[aby]\$(\d\d)\$[./A-Za-z0-9]{53}$/;
const BCRYPT_MIN_COST = 4;
/**
 * The highest bcrypt cost gw accepts: each step doubles the work, and cost 14 already takes
 * bcryptjs about a second (cost 31 would take days). Higher costs are refused, as SHA-crypt's
 * rounds are.
 */
const BCRYPT_ACCEPTED_COST = 14;

function bcryptVerifier(hash: string): PasswordVerifier | undefined {
  const match = BCRYPT.exec(hash);
  if (!match) return undefined;
  const cost = Number(match[1]);
  if (cost < BCRYPT_MIN_COST || cost > BCRYPT_ACCEPTED_COST) return undefined;
  return {
    format: 'bcrypt',
    hash,
    costClass: `bcrypt cost ${cost}`,
    inline: false,
    verify: (password) => {
      // bcryptjs takes text: bytes that are not UTF-8 would become U+FFFD and match a password
      // holding that character. Such a password is hashed all the same (the time taken must not
      // depend on it) and never matches.
      const matched = bcrypt.compareSync(password.toString('utf8'), hash);
      return matched && isUtf8(password);
    },
  };
}

const SHA1 = /^\{SHA\}([A-Za-z0-9+/]{27}=)$/;

function sha1Verifier(hash: string): PasswordVerifier | undefined {
  const match = SHA1.exec(hash);
  if (!match) return undefined;
  const stored = Buffer.from(match[1]!, 'base64');
  return {
    format: 'sha1',
    hash,
    costClass: 'sha1',
    inline: true,
    verify: (password) => timingSafeEqual(createHash('sha1').update(password).digest(), stored),
  };
}

/** The verifier of one htpasswd hash, or undefined when its format is not one of those above. */
export function passwordVerifier(hash: string): PasswordVerifier | undefined {
  if (hash.startsWith('$apr1$') || hash.startsWith('$1$')) return md5CryptVerifier(hash);
  if (hash.startsWith('$5$') || hash.startsWith('$6$')) return shaCryptVerifier(hash);
  if (hash.startsWith('$2')) return bcryptVerifier(hash);
  if (hash.startsWith('{SHA}')) return sha1Verifier(hash);
  return undefined;
}

// ---------------------------------------------------------------------------------------------
// Files.

export interface HtpasswdProblem {
  /** Index of the offending line among the lines given (0-based). */
  line: number;
  message: string;
}

/**
 * The users of htpasswd `lines` by name. Blank lines and `#` comments are skipped. A line that
 * is not `user:hash`, a hash format gw cannot verify and a user named twice are problems; their
 * messages name the line and the user, never the hash.
 */
export function parseHtpasswd(lines: readonly string[]): Map<string, PasswordVerifier> | HtpasswdProblem {
  const users = new Map<string, PasswordVerifier>();
  for (let index = 0; index < lines.length; index++) {
    const line = lines[index]!.trim();
    if (line === '' || line.startsWith('#')) continue;
    const colon = line.indexOf(':');
    if (colon <= 0 || colon === line.length - 1) return { line: index, message: 'is not a user:hash line' };
    const user = line.slice(0, colon);
    const hash = line.slice(colon + 1);
    if (users.has(user)) return { line: index, message: `names user ${user} again; keep one line per user` };
    const verifier = passwordVerifier(hash);
    if (!verifier)
      return {
        line: index,
        message: `(user ${user}) has a hash format gw cannot verify; use bcrypt (htpasswd -B, cost ${BCRYPT_MIN_COST} to ${BCRYPT_ACCEPTED_COST}), apr1 MD5 (htpasswd -m), SHA-crypt ($5$/$6$, at most ${SHA_CRYPT_ACCEPTED_ROUNDS} rounds) or {SHA}`,
      };
    users.set(user, verifier);
  }
  return users;
}

// ---------------------------------------------------------------------------------------------
// Checks.

/**
 * Checks `password` against the user's own hash (none for an unknown user); when that fails,
 * against each of `decoys` as well, whose answers are ignored. Given one decoy of each cost class
 * the user's hash is not of, every failed check costs one hash of every class, whoever the user.
 */
export function checkWithDecoys(
  password: Buffer,
  own: PasswordVerifier | undefined,
  decoys: readonly PasswordVerifier[],
): boolean {
  if (own?.verify(password)) return true;
  for (const decoy of decoys) decoy.verify(password);
  return false;
}
