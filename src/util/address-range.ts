// An address range in CIDR notation (a.b.c.d/n, x:y::z/n), parsed: the network address in
// canonical form (an IPv4-mapped IPv6 address as its IPv4 address) and the prefix length. Shared
// by the data plane (a forward proxy's destination rules) and the controller (which refuses a
// range that does not parse in the GwBackend's status).
import { isIP, isIPv4 } from 'node:net';

/** An address in canonical form: an IPv4-mapped IPv6 address (::ffff:a.b.c.d) as its IPv4 address. */
export function canonicalAddress(address: string): string {
  const mapped = /^::ffff:([0-9.]+)$/i.exec(address);
  return mapped && isIPv4(mapped[1]!) ? mapped[1]! : address.toLowerCase();
}

/** A range as written, or why it is not one. */
export function parseAddressRange(text: string): { network: string; prefix: number } | string {
  const slash = text.lastIndexOf('/');
  const network = canonicalAddress(text.slice(0, slash));
  const prefix = Number(text.slice(slash + 1));
  const kind = isIP(network);
  if (slash < 0 || kind === 0) return `"${text}" is not an address range (a.b.c.d/n or x:y::z/n)`;
  if (!Number.isInteger(prefix) || prefix < 0 || prefix > (kind === 4 ? 32 : 128))
    return `"${text}" has a prefix length out of range`;
  return { network, prefix };
}
