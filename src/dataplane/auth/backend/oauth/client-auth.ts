// How gw authenticates itself to an OAuth token endpoint (spec document 2, OAuthClientAuth):
// client_secret_basic (RFC 6749 section 2.3.1: id and secret form-urlencoded, then HTTP Basic),
// client_secret_post (both in the form; the id alone when no secret is configured), or
// private_key_jwt (RFC 7523 section 2.2: a client assertion signed with a PEM key, optionally
// carrying the certificate chain, x5c, or its thumbprint, x5t#S256). Keys, secrets and
// certificates are read and checked once, when the configuration is compiled; the functions that
// read them are the ones the controller asks (controller/secret-contents.ts).
import { createHash, createPublicKey, type KeyObject, randomUUID, X509Certificate } from 'node:crypto';
import type { JwtSigningAlg, OAuthClientAuth, OAuthPrivateKeyJWT } from '../../../../api/types/backend-auth.ts';
import type { Clock } from '../../../../util/clock.ts';
import { AuthConfigError } from '../errors.ts';
import { base64url, jwsSigner, privateSigningKey } from '../jwt-sign.ts';
import { type SecretData, secretValue } from '../secret-value.ts';

/** The Secret key of the client secret unless secretRef.key says otherwise. */
export const CLIENT_SECRET_KEY = 'clientSecret';
/** The Secret key of the PEM certificate chain unless certificateRef.key says otherwise. */
export const CERTIFICATE_KEY = 'certificate';

export const CLIENT_ASSERTION_TYPE = 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer';
/**
 * Lifetime of a client assertion: one is signed for each token request and used at once, so a
 * short one limits what a leaked assertion is worth while leaving room for clock skew.
 */
export const CLIENT_ASSERTION_LIFETIME_S = 120;

/** The client's credentials on one token request. */
export interface ClientAuthentication {
  /** Adds the credentials to the form and the headers of a token request. */
  write(form: URLSearchParams, headers: Record<string, string>): void;
  /** Everything the credentials depend on (secret values included), for a cache's identity; digested by the caller. */
  readonly identity: readonly string[];
}

export interface ClientAuthContext {
  data: SecretData;
  namespace: string;
  clock: Clock;
  warn: (message: string) => void;
}

/**
 * The client secret of `clientAuth` (key clientSecret unless set), undefined when no secretRef is
 * configured, or an AuthConfigError naming `<field>.secretRef` when the Secret, its key or its
 * value is missing.
 */
export function clientSecret(
  clientAuth: OAuthClientAuth,
  data: SecretData,
  namespace: string,
  field: string,
): string | undefined | AuthConfigError {
  const ref = clientAuth.secretRef;
  if (ref === undefined) return undefined;
  return secretValue({ ...ref, key: ref.key ?? CLIENT_SECRET_KEY }, data, namespace, `${field}.secretRef`, {
    stripBearer: false,
  });
}

/** The private key of a private_key_jwt configuration, checked against its alg (errors name `<field>.privateKeyJwt...`). */
export function assertionSigningKey(
  config: OAuthPrivateKeyJWT,
  data: SecretData,
  namespace: string,
  field: string,
): KeyObject | AuthConfigError {
  return privateSigningKey(config.signingKeyRef, config.alg ?? 'RS256', data, namespace, `${field}.privateKeyJwt`);
}

const PEM_CERTIFICATE = /-----BEGIN CERTIFICATE-----[\s\S]*?-----END CERTIFICATE-----/g;

/**
 * The certificate chain of a private_key_jwt configuration (leaf first), or an AuthConfigError
 * naming `<field>.privateKeyJwt.certificateRef` when the Secret or its key is missing or holds no
 * parseable PEM certificate.
 */
export function certificateChain(
  ref: NonNullable<OAuthPrivateKeyJWT['certificateRef']>,
  data: SecretData,
  namespace: string,
  field: string,
): X509Certificate[] | AuthConfigError {
  const path = `${field}.privateKeyJwt.certificateRef`;
  const key = ref.key ?? CERTIFICATE_KEY;
  const pem = secretValue({ ...ref, key }, data, namespace, path, { stripBearer: false });
  if (pem instanceof AuthConfigError) return pem;
  const secret = `key "${key}" of Secret ${namespace}/${ref.name}`;
  const blocks = pem.match(PEM_CERTIFICATE) ?? [];
  if (blocks.length === 0) return new AuthConfigError(path, `${secret} holds no PEM certificate`);
  const chain: X509Certificate[] = [];
  for (const [index, block] of blocks.entries()) {
    try {
      chain.push(new X509Certificate(block));
    } catch {
      return new AuthConfigError(path, `certificate ${index + 1} in ${secret} is not a valid X.509 certificate`);
    }
  }
  return chain;
}

/** RFC 6749 section 2.3.1: each of id and secret form-urlencoded (appendix B), then Basic. */
function basicCredentials(clientId: string, secret: string): string {
  const encode = (value: string) => new URLSearchParams([['', value]]).toString().slice(1);
  return `Basic ${Buffer.from(`${encode(clientId)}:${encode(secret)}`).toString('base64')}`;
}

/** Compiles `clientAuth` (at field path `field`) into what each token request carries. */
export function compileClientAuth(
  clientAuth: OAuthClientAuth,
  context: ClientAuthContext,
  field: string,
): ClientAuthentication | AuthConfigError {
  const method = clientAuth.method ?? 'ClientSecretBasic';
  const clientId = clientAuth.clientId;
  if (typeof clientId !== 'string' || clientId === '') return new AuthConfigError(`${field}.clientId`, 'must be set');
  if (clientAuth.privateKeyJwt !== undefined && method !== 'PrivateKeyJwt')
    return new AuthConfigError(`${field}.privateKeyJwt`, 'is used only when method is PrivateKeyJwt');
  if (method === 'PrivateKeyJwt') {
    if (clientAuth.secretRef !== undefined)
      return new AuthConfigError(`${field}.secretRef`, 'is not used with method PrivateKeyJwt; remove it');
    if (clientAuth.privateKeyJwt === undefined)
      return new AuthConfigError(`${field}.privateKeyJwt`, 'must be set when method is PrivateKeyJwt');
    return compilePrivateKeyJwt(clientId, clientAuth.privateKeyJwt, context, field);
  }
  const secret = clientSecret(clientAuth, context.data, context.namespace, field);
  if (secret instanceof AuthConfigError) return secret;
  if (method === 'ClientSecretBasic') {
    if (secret === undefined)
      return new AuthConfigError(
        `${field}.secretRef`,
        'must be set when method is ClientSecretBasic (only ClientSecretPost may send the client ID alone)',
      );
    const authorization = basicCredentials(clientId, secret);
    return {
      identity: [method, clientId, secret],
      write: (_form, headers) => {
        headers.authorization = authorization;
      },
    };
  }
  return {
    identity: [method, clientId, secret ?? ''],
    write: (form) => {
      form.append('client_id', clientId);
      if (secret !== undefined) form.append('client_secret', secret);
    },
  };
}

function compilePrivateKeyJwt(
  clientId: string,
  config: OAuthPrivateKeyJWT,
  context: ClientAuthContext,
  field: string,
): ClientAuthentication | AuthConfigError {
  const path = `${field}.privateKeyJwt`;
  if (typeof config.assertionAudience !== 'string' || config.assertionAudience === '')
    return new AuthConfigError(`${path}.assertionAudience`, 'must be set');
  const alg: JwtSigningAlg = config.alg ?? 'RS256';
  const key = assertionSigningKey(config, context.data, context.namespace, field);
  if (key instanceof AuthConfigError) return key;

  const header: Record<string, unknown> = { alg, typ: 'JWT' };
  if (config.kid !== undefined) header.kid = config.kid;
  const identity: string[] = [
    'PrivateKeyJwt',
    clientId,
    JSON.stringify(config),
    key.export({ format: 'pem', type: 'pkcs8' }).toString(),
  ];
  if ((config.certificateRef === undefined) !== (config.certificateHeader === undefined)) {
    const missing = config.certificateRef === undefined ? 'certificateRef' : 'certificateHeader';
    return new AuthConfigError(`${path}.${missing}`, 'certificateRef and certificateHeader are set together');
  }
  if (config.certificateRef !== undefined) {
    const chain = certificateChain(config.certificateRef, context.data, context.namespace, field);
    if (chain instanceof AuthConfigError) return chain;
    const leaf = chain[0]!;
    if (config.certificateHeader === 'x5c') {
      // RFC 7515 section 4.1.6: standard base64 (not base64url) DER, leaf first.
      header.x5c = chain.map((certificate) => certificate.raw.toString('base64'));
    } else if (config.certificateHeader === 'x5t#S256') {
      header['x5t#S256'] = createHash('sha256').update(leaf.raw).digest('base64url');
    } else {
      return new AuthConfigError(`${path}.certificateHeader`, `"${config.certificateHeader}" is not x5c or x5t#S256`);
    }
    identity.push(...chain.map((certificate) => certificate.fingerprint256));
    if (!samePublicKey(leaf.publicKey, key)) {
      context.warn(
        `${path}.certificateRef: the leaf certificate (subject ${leaf.subject.replace(/\n/g, ', ')}) does not certify the public key of signingKeyRef; the token endpoint will likely reject the client assertion`,
      );
    }
  }

  const sign = jwsSigner(key, alg);
  const encodedHeader = base64url(JSON.stringify(header));
  const fixedClaims = JSON.stringify({ iss: clientId, sub: clientId, aud: config.assertionAudience }).slice(0, -1);
  return {
    identity,
    write: (form) => {
      const iat = Math.floor(context.clock.epochMs() / 1000);
      const payload = `${fixedClaims},"jti":"${randomUUID()}","iat":${iat},"exp":${iat + CLIENT_ASSERTION_LIFETIME_S}}`;
      // RFC 7521 section 4.2: client_id is optional beside an assertion; sent, it names the client at once.
      form.append('client_id', clientId);
      form.append('client_assertion_type', CLIENT_ASSERTION_TYPE);
      form.append('client_assertion', sign(encodedHeader, payload));
    },
  };
}

function samePublicKey(certified: KeyObject, privateKey: KeyObject): boolean {
  const der = (key: KeyObject) => key.export({ format: 'der', type: 'spki' });
  return der(certified).equals(der(createPublicKey(privateKey)));
}
