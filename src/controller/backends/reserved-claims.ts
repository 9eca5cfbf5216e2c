// The translation-time rule on jwtSign claims (spec: "rejected by the controller at translation
// time"), for GwBackends (acceptance.ts) and GwPolicies (policies/attachments.ts) alike.
import { isPlainObject } from '../../util/values.ts';

/** Claims a jwtSign signer sets itself on every token it signs. */
const SIGNER_CLAIMS = ['iat', 'exp', 'nbf'];

/**
 * Every backend `auth.jwtSign` under `value` (a GwBackend spec, a GwPolicy spec...) whose claims
 * name iat, exp or nbf, as messages with the field path. The spec has the controller reject these
 * at translation time: admission rejects them too, but an object stored before that rule (an
 * older CRD on a cluster) reaches the controller unchecked.
 */
export function reservedClaimProblems(value: unknown, path: string, found: string[] = []): string[] {
  if (Array.isArray(value)) {
    for (const [index, item] of value.entries()) reservedClaimProblems(item, `${path}[${index}]`, found);
    return found;
  }
  if (!isPlainObject(value)) return found;
  for (const [field, child] of Object.entries(value)) {
    const childPath = `${path}.${field}`;
    if (field === 'jwtSign' && isPlainObject(child) && isPlainObject(child.claims)) {
      const reserved = SIGNER_CLAIMS.filter((claim) => Object.hasOwn(child.claims as object, claim));
      if (reserved.length > 0) {
        found.push(
          `${childPath}.claims: ${reserved.join(', ')} may not be given: the signer sets iat, exp and nbf on every token (exp from ttl); remove ${reserved.join(', ')}`,
        );
      }
    }
    reservedClaimProblems(child, childPath, found);
  }
  return found;
}
