// The API's TLS key exchange groups (KeyExchangeGroup) as OpenSSL's group names, for node's
// `ecdhCurve` — one mapping for the TLS gw terminates (Frontend.tls) and the TLS it originates
// (BackendTLS). Whether this runtime's OpenSSL has a group is asked once per group (OpenSSL 3.5,
// bundled with node 24, has all four; a node built against an older OpenSSL may lack the ML-KEM
// hybrid): a group it lacks is refused when the configuration is compiled, never left out.
import { createSecureContext } from 'node:tls';
import type { KeyExchangeGroup } from '../../api/types/backend-connection.ts';

const OPENSSL_GROUPS: Record<KeyExchangeGroup, string> = {
  X25519: 'X25519',
  'P-256': 'P-256',
  'P-384': 'P-384',
  X25519_MLKEM768: 'X25519MLKEM768',
};

/** Whether this runtime's OpenSSL takes each group, by OpenSSL name (asked on first use). */
const supported = new Map<string, boolean>();

/** A group gw cannot offer: its index in the list and why. */
export interface GroupProblem {
  readonly index: number;
  readonly message: string;
}

/**
 * The `ecdhCurve` string of a preference-ordered list of groups ("X25519MLKEM768:P-256"), or the
 * first group this runtime cannot use.
 */
export function opensslGroups(groups: readonly string[]): string | GroupProblem {
  const names: string[] = [];
  for (const [index, group] of groups.entries()) {
    const name = OPENSSL_GROUPS[group as KeyExchangeGroup];
    if (name === undefined)
      return { index, message: `${group} is not a key exchange group (${Object.keys(OPENSSL_GROUPS).join(', ')})` };
    if (!isSupported(name))
      return {
        index,
        message: `${group} is not available in this runtime's OpenSSL ${process.versions.openssl}`,
      };
    names.push(name);
  }
  return names.join(':');
}

function isSupported(name: string): boolean {
  let known = supported.get(name);
  if (known === undefined) {
    try {
      createSecureContext({ ecdhCurve: name });
      known = true;
    } catch {
      known = false;
    }
    supported.set(name, known);
  }
  return known;
}
