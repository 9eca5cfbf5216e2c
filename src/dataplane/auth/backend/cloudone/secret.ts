// The credentials of a cloudone secretRef (spec document 2, CloudoneAuth): a Secret with keys
// accessKey and secretKey, and optionally sessionToken. The data plane compiles them and the
// controller judges the Secret with the same function (controller/secret-contents.ts); this file
// imports no AWS SDK, so the controller does not load it.
import type { LocalSecretObjectRef } from '../../../../api/types/references.ts';
import { AuthConfigError } from '../errors.ts';
import { isHeaderText } from '../headers.ts';
import { type SecretData, secretValue } from '../secret-value.ts';
import type { AwsCredentials } from './sign.ts';

/** The Secret keys of a cloudone secretRef (spec document 2, CloudoneAuth). */
export const ACCESS_KEY = 'accessKey';
export const SECRET_KEY = 'secretKey';
export const SESSION_TOKEN = 'sessionToken';

/**
 * The credentials of a cloudone secretRef, or an AuthConfigError naming `cloudone.secretRef` when
 * the Secret or a required key is missing or empty, or a value cannot go in a header. The
 * controller asks the same question for the object's status (controller/secret-contents.ts).
 */
export function secretCredentials(
  ref: LocalSecretObjectRef,
  data: SecretData,
  namespace: string,
): AwsCredentials | AuthConfigError {
  const field = 'cloudone.secretRef';
  const read = (key: string) => {
    const value = secretValue({ ...ref, key }, data, namespace, field, { stripBearer: false });
    if (value instanceof AuthConfigError || isHeaderText(value)) return value;
    return new AuthConfigError(
      `${field}.key`,
      `key "${key}" of Secret ${namespace}/${ref.name} holds characters a header cannot carry`,
    );
  };
  const accessKeyId = read(ACCESS_KEY);
  if (accessKeyId instanceof AuthConfigError) return accessKeyId;
  const secretAccessKey = read(SECRET_KEY);
  if (secretAccessKey instanceof AuthConfigError) return secretAccessKey;
  const values = data(`Secret ${namespace}/${ref.name}`);
  if (values === undefined || !Object.hasOwn(values, SESSION_TOKEN)) return { accessKeyId, secretAccessKey };
  const sessionToken = read(SESSION_TOKEN);
  if (sessionToken instanceof AuthConfigError) return sessionToken;
  return { accessKeyId, secretAccessKey, sessionToken };
}
