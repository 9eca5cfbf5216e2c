// Backend authentication jwtSign (spec document 2, JwtSignAuth): a short-lived JWT signed for
// every request with the PEM private key of a Secret. The key is parsed and checked against `alg`
// once, when the configuration is compiled; each request only signs. Signing uses node:crypto
// synchronously: an RSA or EC signature takes well under a millisecond, less than a hop to a
// thread would. The key lives only inside the returned closure.
import { constants, createPrivateKey, type KeyObject, sign } from 'node:crypto';
import type { JwtSignAuth, JwtSigningAlg } from '../../../api/types/backend-auth.ts';
import type { LocalSecretKeyRef } from '../../../api/types/references.ts';
import { type Clock, systemClock } from '../../../util/clock.ts';
import { durationMs } from '../../../util/units.ts';
import { AuthConfigError } from './errors.ts';
import type { CredentialKindCompiler } from './kind.ts';
import { BEARER_LOCATION, compileLocation } from './location.ts';
import { type SecretData, secretValue } from './secret-value.ts';

/** The Secret key the spec names for the PEM private key. */
export const SIGNING_KEY = 'signingKey';

/** Claims the signer sets on every token; the controller rejects them in `claims` at translation. */
export const SIGNER_CLAIMS = ['iat', 'exp', 'nbf'] as const;

const DEFAULT_TTL = '300s';
/** RSA keys shorter than this are refused (as JOSE libraries do for RS and PS algorithms). */
const MIN_RSA_BITS = 2048;

interface AlgorithmSpec {
  hash: 'sha256' | 'sha384' | 'sha512';
  keyType: 'rsa' | 'ec';
  /** The EC curve (Node's name) the algorithm requires. */
  curve?: string;
  pss?: true;
}

const ALGORITHMS: Record<JwtSigningAlg, AlgorithmSpec> = {
  RS256: { hash: 'sha256', keyType: 'rsa' },
  RS384: { hash: 'sha384', keyType: 'rsa' },
  RS512: { hash: 'sha512', keyType: 'rsa' },
  PS256: { hash: 'sha256', keyType: 'rsa', pss: true },
  ES256: { hash: 'sha256', keyType: 'ec', curve: 'prime256v1' },
  ES384: { hash: 'sha384', keyType: 'ec', curve: 'secp384r1' },
};

/** Signs a token for one request; the value to write at the credential's location. */
export type JwtSigner = () => string;

/** base64url of text or bytes, as JWS encodes its parts. */
export const base64url = (value: string | Buffer): string => Buffer.from(value).toString('base64url');

/** The parsed key, or undefined when `pem` is not an unencrypted PEM private key. */
function privateKey(pem: string): KeyObject | undefined {
  try {
    return createPrivateKey({ key: pem, format: 'pem' });
  } catch {
    // The parser's message may quote the input: the caller says only what is wrong.
    return undefined;
  }
}

function keyProblem(key: KeyObject, alg: JwtSigningAlg): string | undefined {
  const spec = ALGORITHMS[alg];
  const type = key.asymmetricKeyType;
  if (spec.keyType === 'rsa') {
    if (type !== 'rsa') return `is a ${type} key; ${alg} needs an RSA key`;
    const bits = key.asymmetricKeyDetails?.modulusLength ?? 0;
    if (bits < MIN_RSA_BITS) return `is a ${bits}-bit RSA key; ${alg} needs at least ${MIN_RSA_BITS} bits`;
    return undefined;
  }
  if (type !== 'ec') return `is a ${type} key; ${alg} needs an EC key on curve ${spec.curve}`;
  const curve = key.asymmetricKeyDetails?.namedCurve;
  return curve === spec.curve ? undefined : `is an EC key on curve ${curve}; ${alg} needs curve ${spec.curve}`;
}

/**
 * A PEM private key read from key `ref.key` (default signingKey) of a Secret and checked against
 * `alg`, or an AuthConfigError naming `<field>.alg` or `<field>.signingKeyRef` when the algorithm
 * is unknown, the Secret or its key is missing, the value is no PEM private key, or it does not
 * suit `alg`. Shared by jwtSign and the private_key_jwt client authentication of token exchanges.
 */
export function privateSigningKey(
  ref: LocalSecretKeyRef,
  alg: string,
  data: SecretData,
  namespace: string,
  field: string,
): KeyObject | AuthConfigError {
  if (!Object.hasOwn(ALGORITHMS, alg))
    return new AuthConfigError(`${field}.alg`, `"${alg}" is not a supported algorithm`);
  const key = ref.key ?? SIGNING_KEY;
  const pem = secretValue({ ...ref, key }, data, namespace, `${field}.signingKeyRef`, { stripBearer: false });
  if (pem instanceof AuthConfigError) return pem;
  const secret = `key "${key}" of Secret ${namespace}/${ref.name}`;
  const parsed = privateKey(pem);
  if (parsed === undefined) {
    return new AuthConfigError(`${field}.signingKeyRef`, `${secret} is not an unencrypted PEM RSA or EC private key`);
  }
  const problem = keyProblem(parsed, alg as JwtSigningAlg);
  if (problem !== undefined) return new AuthConfigError(`${field}.signingKeyRef`, `${secret} ${problem}`);
  return parsed;
}

/**
 * The private key of a jwtSign configuration, read from its Secret, or an AuthConfigError naming
 * `jwtSign.signingKeyRef` when the Secret or its key is missing, is no PEM private key, or does
 * not suit `alg`. The controller asks the same question to report it in the object's status
 * (controller/secret-contents.ts), so the two cannot disagree.
 */
export function jwtSigningKey(
  config: Pick<JwtSignAuth, 'alg' | 'signingKeyRef'>,
  data: SecretData,
  namespace: string,
): KeyObject | AuthConfigError {
  // jwtSign's reference names a Secret, not a key: always key signingKey.
  return privateSigningKey(
    { ...config.signingKeyRef, key: SIGNING_KEY },
    config.alg ?? 'RS256',
    data,
    namespace,
    'jwtSign',
  );
}

/**
 * Signs JWS compact serialisations with `key` (checked against `alg` by privateSigningKey): given
 * the encoded protected header and the payload's JSON text, the whole token.
 */
export function jwsSigner(key: KeyObject, alg: JwtSigningAlg): (encodedHeader: string, payload: string) => string {
  const spec = ALGORITHMS[alg];
  const signingKey = spec.pss
    ? { key, padding: constants.RSA_PKCS1_PSS_PADDING, saltLength: constants.RSA_PSS_SALTLEN_DIGEST }
    : spec.keyType === 'ec'
      ? { key, dsaEncoding: 'ieee-p1363' as const }
      : key;
  return (encodedHeader, payload) => {
    const input = `${encodedHeader}.${base64url(payload)}`;
    return `${input}.${sign(spec.hash, Buffer.from(input), signingKey).toString('base64url')}`;
  };
}

/**
 * The signer of a jwtSign configuration, or an AuthConfigError naming the field (under `jwtSign`)
 * when the Secret is missing, its key cannot be parsed or does not suit `alg`, or a claim is one
 * the signer sets.
 */
export function compileJwtSigner(
  config: JwtSignAuth,
  data: SecretData,
  namespace: string,
  clock: Clock = systemClock,
): JwtSigner | AuthConfigError {
  const alg = config.alg ?? 'RS256';
  if (!Object.hasOwn(ALGORITHMS, alg))
    return new AuthConfigError('jwtSign.alg', `"${alg}" is not a supported algorithm`);
  const claims = config.claims ?? {};
  const reserved = SIGNER_CLAIMS.find((claim) => Object.hasOwn(claims, claim));
  if (reserved !== undefined) {
    return new AuthConfigError(`jwtSign.claims.${reserved}`, `${SIGNER_CLAIMS.join(', ')} are set by the signer`);
  }
  const ttlSeconds = Math.floor(durationMs(config.ttl ?? DEFAULT_TTL) / 1000);
  if (ttlSeconds < 1) return new AuthConfigError('jwtSign.ttl', 'must be at least 1s');

  const key = jwtSigningKey(config, data, namespace);
  if (key instanceof AuthConfigError) return key;

  const signJws = jwsSigner(key, alg);
  const header = base64url(
    JSON.stringify(config.kid === undefined ? { alg, typ: 'JWT' } : { alg, typ: 'JWT', kid: config.kid }),
  );
  // The configured claims, serialised once; the signer's three are appended per request.
  const fixed = JSON.stringify(claims).slice(1, -1);
  const prefix = fixed === '' ? '{' : `{${fixed},`;

  return () => {
    const iat = Math.floor(clock.epochMs() / 1000);
    return signJws(header, `${prefix}"iat":${iat},"nbf":${iat},"exp":${iat + ttlSeconds}}`);
  };
}

/** The jwtSign kind: the token is written at jwtSign.location, else BackendAuth.location, else as a Bearer token. */
export const compileJwtSign: CredentialKindCompiler<JwtSignAuth> = (config, context) => {
  // Both set would leave one unused.
  if (config.location !== undefined && context.location !== undefined)
    return new AuthConfigError('jwtSign.location', 'set either location or jwtSign.location, not both');
  let location = context.location ?? BEARER_LOCATION;
  if (config.location !== undefined) {
    const own = compileLocation(config.location, 'jwtSign.location');
    if (own instanceof AuthConfigError) return own;
    location = own;
  }
  const signer = compileJwtSigner(config, context.data, context.namespace, context.clock);
  if (signer instanceof AuthConfigError) return signer;
  // A JWT is base64url text: every location can carry it.
  return { step: (target) => location.write(target, signer()), writesQuery: location.inQuery };
};
