// The contents of the Secrets a backend authentication reads (`auth.secretRef`,
// `auth.credentials[i].secretRef`, `auth.jwtSign.signingKeyRef`, `auth.cloudone.secretRef`,
// `auth.beta.secretRef`, `auth.cloudtwo.secretRef`, and the client authentication of `auth.oauthTokenExchange` and of both
// `auth.crossAppAccess` endpoints: the client secret, the private_key_jwt signing key and
// certificate chain), judged where the controller resolves references: a Secret that exists but
// lacks the data key, holds an empty value, a signing key that does not parse or suit `alg`, a
// tenant that is no tenant ID, or Google credentials JSON gw does not accept is a bad reference
// (ResolvedRefs False), since the data plane refuses the same configuration and answers its traffic
// with 500. The questions are asked with the data plane's own functions (secretValue,
// jwtSigningKey, secretCredentials, betaClientSecret, cloudtwoCredentials, clientSecret, assertionSigningKey,
// certificateChain) so the two cannot disagree. A Secret that does not exist is left to
// missingReferences. Messages name the field path, the Secret and the data key — never a value.
import type { OAuthClientAuth } from '../api/types/backend-auth.ts';
import type { LocalSecretKeyRef, LocalSecretObjectRef } from '../api/types/references.ts';
import { betaClientSecret } from '../dataplane/auth/backend/beta.ts';
import { secretCredentials } from '../dataplane/auth/backend/cloudone/secret.ts';
import { cloudtwoCredentials } from '../dataplane/auth/backend/cloudtwo/credentials.ts';
import { AuthConfigError } from '../dataplane/auth/backend/errors.ts';
import { jwtSigningKey } from '../dataplane/auth/backend/jwt-sign.ts';
import { assertionSigningKey, certificateChain, clientSecret } from '../dataplane/auth/backend/oauth/client-auth.ts';
import { type SecretData, secretValue } from '../dataplane/auth/backend/secret-value.ts';
import { isPlainObject } from '../util/values.ts';
import { objectData } from './object-data.ts';
import type { Snapshot } from './snapshot.ts';

/** The ResolvedRefs reason for a Secret that exists but cannot give what a field needs. */
export const INVALID_CREDENTIAL_REF = 'InvalidCredentialRef';

/** A core Secret reference by name (the other kinds are refused elsewhere). */
function secretName(ref: unknown): string | undefined {
  if (!isPlainObject(ref) || typeof ref.name !== 'string') return undefined;
  return (ref.kind ?? 'Secret') === 'Secret' && (ref.group ?? '') === '' ? ref.name : undefined;
}

/** The problems of one backend auth object found at `path`. */
function authProblems(auth: Record<string, unknown>, path: string, namespace: string, data: SecretData): string[] {
  const exists = (name: string | undefined) => name !== undefined && data(`Secret ${namespace}/${name}`) !== undefined;
  const errors: AuthConfigError[] = [];
  const read = (ref: unknown, field: string, stripBearer: boolean) => {
    if (!exists(secretName(ref))) return;
    const value = secretValue(ref as LocalSecretKeyRef, data, namespace, field, { stripBearer });
    if (value instanceof AuthConfigError) errors.push(value);
  };
  read(auth.secretRef, 'secretRef', true);
  if (Array.isArray(auth.credentials)) {
    for (const [index, entry] of auth.credentials.entries()) {
      if (isPlainObject(entry)) read(entry.secretRef, `credentials[${index}].secretRef`, false);
    }
  }
  const jwtSign = auth.jwtSign;
  if (isPlainObject(jwtSign) && exists(secretName(jwtSign.signingKeyRef))) {
    const key = jwtSigningKey(jwtSign as Parameters<typeof jwtSigningKey>[0], data, namespace);
    if (key instanceof AuthConfigError && key.field.startsWith('jwtSign.signingKeyRef')) errors.push(key);
  }
  const beta = auth.beta;
  if (isPlainObject(beta) && exists(secretName(beta.secretRef))) {
    const principal = betaClientSecret(beta.secretRef as LocalSecretObjectRef, data, namespace);
    if (principal instanceof AuthConfigError) errors.push(principal);
  }
  const cloudtwo = auth.cloudtwo;
  if (isPlainObject(cloudtwo) && exists(secretName(cloudtwo.secretRef))) {
    const credentials = cloudtwoCredentials(cloudtwo.secretRef as LocalSecretKeyRef, data, namespace);
    if (credentials instanceof AuthConfigError) errors.push(credentials);
  }
  const oauth = auth.oauthTokenExchange;
  if (isPlainObject(oauth))
    errors.push(...clientAuthProblems(oauth.clientAuth, 'oauthTokenExchange.clientAuth', exists, namespace, data));
  const crossApp = auth.crossAppAccess;
  if (isPlainObject(crossApp)) {
    for (const endpoint of ['identityProvider', 'resourceAuthorizationServer']) {
      const spec = crossApp[endpoint];
      if (isPlainObject(spec))
        errors.push(
          ...clientAuthProblems(spec.clientAuth, `crossAppAccess.${endpoint}.clientAuth`, exists, namespace, data),
        );
    }
  }
  const cloudone = auth.cloudone;
  if (isPlainObject(cloudone) && exists(secretName(cloudone.secretRef))) {
    const credentials = secretCredentials(cloudone.secretRef as LocalSecretObjectRef, data, namespace);
    if (credentials instanceof AuthConfigError) errors.push(credentials);
  }
  return errors.map((error) => `${path}.${error.message}`);
}

/**
 * What the existing Secrets of an OAuth client authentication (at `field`) cannot give: the
 * client secret (key clientSecret unless set), the private_key_jwt signing key (parsed, suiting
 * alg) and certificate chain (key certificate unless set; PEM certificates).
 */
function clientAuthProblems(
  clientAuth: unknown,
  field: string,
  exists: (name: string | undefined) => boolean,
  namespace: string,
  data: SecretData,
): AuthConfigError[] {
  if (!isPlainObject(clientAuth)) return [];
  const spec = clientAuth as unknown as OAuthClientAuth;
  const problems: AuthConfigError[] = [];
  const add = (result: unknown) => {
    if (result instanceof AuthConfigError) problems.push(result);
  };
  if (exists(secretName(spec.secretRef))) add(clientSecret(spec, data, namespace, field));
  const privateKeyJwt = spec.privateKeyJwt;
  if (isPlainObject(privateKeyJwt)) {
    if (exists(secretName(privateKeyJwt.signingKeyRef))) {
      const key = assertionSigningKey(privateKeyJwt, data, namespace, field);
      // A bad alg is the schema's to report; the Secret's contents are ours.
      if (key instanceof AuthConfigError && key.field.startsWith(`${field}.privateKeyJwt.signingKeyRef`)) add(key);
    }
    if (privateKeyJwt.certificateRef !== undefined && exists(secretName(privateKeyJwt.certificateRef)))
      add(certificateChain(privateKeyJwt.certificateRef, data, namespace, field));
  }
  return problems;
}

/** The decoded data of the Secrets of `namespace` in the snapshot, as the data plane reads them. */
function secretDataIn(namespace: string, snapshot: Snapshot): SecretData {
  const prefix = `Secret ${namespace}/`;
  return (ref) => {
    const object = ref.startsWith(prefix)
      ? snapshot.secrets.get(`${namespace}/${ref.slice(prefix.length)}`)
      : undefined;
    return object ? objectData(object) : undefined;
  };
}

/**
 * The problems of one backend authentication (`auth`, found at field path `path`) whose Secrets
 * are in `namespace`: what its existing Secrets cannot give, as messages with the field path.
 */
export function backendAuthSecretProblems(
  auth: unknown,
  path: string,
  namespace: string,
  snapshot: Snapshot,
): string[] {
  return isPlainObject(auth) ? authProblems(auth, path, namespace, secretDataIn(namespace, snapshot)) : [];
}

/**
 * Every backend authentication under `spec` (an `auth` field anywhere: a GwBackend's policies and
 * providers, a GwPolicy's backend section, a GwModel) whose existing Secret cannot give what it
 * needs, as messages with the field path.
 */
export function secretContentProblems(spec: unknown, namespace: string, snapshot: Snapshot): string[] {
  const data = secretDataIn(namespace, snapshot);
  const found: string[] = [];
  const walk = (value: unknown, path: string) => {
    if (Array.isArray(value)) {
      for (const [index, item] of value.entries()) walk(item, `${path}[${index}]`);
      return;
    }
    if (!isPlainObject(value)) return;
    for (const [field, child] of Object.entries(value)) {
      const childPath = `${path}.${field}`;
      if (field === 'auth' && isPlainObject(child)) found.push(...authProblems(child, childPath, namespace, data));
      else walk(child, childPath);
    }
  };
  walk(spec, 'spec');
  return found;
}
