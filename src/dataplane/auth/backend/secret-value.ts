// Credentials read from Secrets. The controller hands the data plane every Secret it names, by
// "Secret ns/name"; a value is trimmed (Secrets made from files often end in a newline), and the
// "Bearer " prefix is stripped only when the value came from the default key Authorization.
import type { LocalSecretKeyRef } from '../../../api/types/references.ts';
import { AuthConfigError } from './errors.ts';

/** The decoded data of a Secret, by "Secret ns/name" (DataPlaneConfig.data). */
export type SecretData = (ref: string) => Record<string, string> | undefined;

export const DEFAULT_SECRET_KEY = 'Authorization';

// "Bearer" alone (a value of "Bearer " once trimmed) leaves nothing.
const BEARER_PREFIX = /^bearer(?:\s+|$)/i;

export function secretValue(
  ref: LocalSecretKeyRef,
  data: SecretData,
  namespace: string,
  field: string,
  options: { stripBearer: boolean },
): string | AuthConfigError {
  if ((ref.group ?? '') !== '' || (ref.kind ?? 'Secret') !== 'Secret') {
    return new AuthConfigError(`${field}.kind`, `only a core Secret can hold a credential (got ${ref.kind})`);
  }
  const secret = `Secret ${namespace}/${ref.name}`;
  const values = data(secret);
  if (values === undefined) return new AuthConfigError(`${field}.name`, `${secret} was not found`);
  const key = ref.key ?? DEFAULT_SECRET_KEY;
  const raw = Object.hasOwn(values, key) ? values[key] : undefined;
  if (raw === undefined) return new AuthConfigError(`${field}.key`, `${secret} has no key "${key}"`);
  let value = raw.trim();
  if (options.stripBearer && ref.key === undefined) value = value.replace(BEARER_PREFIX, '');
  if (value === '') return new AuthConfigError(`${field}.key`, `key "${key}" of ${secret} is empty`);
  return value;
}
