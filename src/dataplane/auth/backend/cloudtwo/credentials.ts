// The Google credentials JSON of a cloudtwo secretRef (spec document 2, CloudtwoAuth), read and
// judged once per configuration: the same function answers the data plane (which refuses the
// backend) and the controller (ResolvedRefs False, controller/secret-contents.ts). Accepted are the
// two types whose JSON holds the whole credential: service account keys (`service_account`) and
// user credentials (`authorized_user`). The other types google-auth-library reads make gw use what
// its own environment holds (a file, a URL, AWS credentials) or chain to another credential; a
// Secret of a namespace must not reach those, so they are refused here and served as ambient
// credentials instead (docs/decisions/0016-cloudtwo-credentials.md). Errors name the Secret and
// the JSON field, never a value: JSON.parse's own message quotes the input and is not used.
import { createPrivateKey } from 'node:crypto';
import type { LocalSecretKeyRef } from '../../../../api/types/references.ts';
import { isLoopbackName } from '../../../mcp/origin-check.ts';
import { AuthConfigError } from '../errors.ts';
import { type SecretData, secretValue } from '../secret-value.ts';

/** The Secret key the spec names for the credentials JSON. */
export const CREDENTIALS_KEY = 'credentials.json';

/** Google's OAuth 2.0 token endpoint, where google-auth-library sends every token request. */
export const GOOGLE_TOKEN_URL = 'https://oauth2.googleapis.com/token';

const FIELD = 'cloudtwo.secretRef';

/** Types google-auth-library reads that a Secret may not hold, and why. */
const REFUSED_TYPES: Record<string, string> = {
  external_account:
    'takes its subject token from the gateway’s own environment (a file, a URL, AWS credentials); use ambient credentials (GOOGLE_APPLICATION_CREDENTIALS) for workload identity federation',
  impersonated_service_account:
    'is not accepted in a Secret; impersonate through ambient credentials, or give the target service account’s key',
  external_account_authorized_user:
    'is not accepted in a Secret; give a service account key or authorized_user credentials',
  gdch_service_account: 'is not accepted: gw has no field for the API audience it needs',
};

export type CloudtwoCredentialType = 'service_account' | 'authorized_user';

/**
 * Credentials read from a Secret. The JSON (with its private key or refresh token) stays in a
 * private field: util.inspect, JSON.stringify and error messages never show it.
 */
export class CloudtwoCredentials {
  readonly type: CloudtwoCredentialType;
  /** Who the credentials are, for logs: the service account's email or the OAuth client ID. */
  readonly principal: string;
  /** Where token requests go: the JSON's token_uri, else Google's token endpoint. */
  readonly tokenUri: string;
  readonly #json: Readonly<Record<string, unknown>>;

  constructor(type: CloudtwoCredentialType, principal: string, tokenUri: string, json: Record<string, unknown>) {
    this.type = type;
    this.principal = principal;
    this.tokenUri = tokenUri;
    this.#json = json;
  }

  /** The JSON as google-auth-library's clients read it (fromJSON). */
  json(): Record<string, unknown> {
    return { ...this.#json };
  }
}

function nonEmptyString(value: unknown): value is string {
  return typeof value === 'string' && value.trim() !== '';
}

/** The token_uri as a URL gw may send credentials to, or why not. */
function tokenEndpoint(value: unknown): string | { problem: string } {
  if (value === undefined) return GOOGLE_TOKEN_URL;
  if (typeof value !== 'string') return { problem: 'token_uri is not a string' };
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return { problem: 'token_uri is not a URL' };
  }
  // A signed assertion or a refresh token is a credential: plain HTTP only on the same machine.
  if (url.protocol === 'https:' || (url.protocol === 'http:' && isLoopbackName(url.hostname))) return url.href;
  return { problem: 'token_uri must be an https URL (http only to a loopback address)' };
}

/**
 * The credentials of a cloudtwo secretRef, or an AuthConfigError naming `cloudtwo.secretRef`
 * when the Secret or its key is missing, the value is not JSON, or not credentials gw accepts.
 */
export function cloudtwoCredentials(
  ref: LocalSecretKeyRef,
  data: SecretData,
  namespace: string,
): CloudtwoCredentials | AuthConfigError {
  const key = ref.key ?? CREDENTIALS_KEY;
  const text = secretValue({ ...ref, key }, data, namespace, FIELD, { stripBearer: false });
  if (text instanceof AuthConfigError) return text;
  const where = `key "${key}" of Secret ${namespace}/${ref.name}`;
  const refuse = (problem: string) => new AuthConfigError(FIELD, `${where} ${problem}`);
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    return refuse('is not JSON: give the credentials JSON file Google issued');
  }
  if (typeof json !== 'object' || json === null || Array.isArray(json)) {
    return refuse('is not a JSON object of Google credentials');
  }
  const fields = json as Record<string, unknown>;
  const type = fields.type;
  if (typeof type !== 'string') return refuse('has no "type": it is not Google credentials JSON');
  if (Object.hasOwn(REFUSED_TYPES, type)) return refuse(`holds ${type} credentials, which ${REFUSED_TYPES[type]}`);
  if (type !== 'service_account' && type !== 'authorized_user') {
    return refuse(`has type "${type.slice(0, 64)}"; gw accepts service_account and authorized_user`);
  }
  const endpoint = tokenEndpoint(fields.token_uri);
  if (typeof endpoint !== 'string') return refuse(endpoint.problem);
  if (type === 'service_account') {
    if (!nonEmptyString(fields.client_email)) return refuse('has no client_email');
    if (!nonEmptyString(fields.private_key)) return refuse('has no private_key');
    let keyType: string | undefined;
    try {
      keyType = createPrivateKey({ key: fields.private_key, format: 'pem' }).asymmetricKeyType;
    } catch {
      // The parser's message may quote the key.
      return refuse('has a private_key that is not an unencrypted PEM private key');
    }
    if (keyType !== 'rsa') return refuse(`has a ${keyType} private_key; Google service account keys are RSA`);
    return new CloudtwoCredentials(type, fields.client_email, endpoint, fields);
  }
  for (const name of ['client_id', 'client_secret', 'refresh_token']) {
    if (!nonEmptyString(fields[name])) return refuse(`has no ${name}`);
  }
  return new CloudtwoCredentials(type, fields.client_id as string, endpoint, fields);
}
