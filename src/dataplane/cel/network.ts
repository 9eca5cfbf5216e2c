// CEL functions on IP addresses and CIDR ranges, for rules on where a connection comes from:
// `cidr('10.0.0.0/8').containsIP(source.address)`. Names follow the Kubernetes CEL ip/cidr
// libraries (ip(), cidr(), isIP(), isCIDR(), containsIP(), containsCIDR(), prefixLength()...).
// Addresses are parsed into one BigInt so a containment test is two shifts and a compare.
import { isIP as nodeIsIP } from 'node:net';
import type { Environment } from '@marcbachmann/cel-js';

/** An IPv4 (32-bit) or IPv6 (128-bit) address. */
export class IPAddress {
  readonly family: 4 | 6;
  readonly value: bigint;
  constructor(family: 4 | 6, value: bigint) {
    this.family = family;
    this.value = value;
  }

  /** The address as IPv4 when it is an IPv4-mapped IPv6 address (::ffff:a.b.c.d), else itself. */
  unmapped(): IPAddress {
    if (this.family === 6 && this.value >> 32n === 0xffffn) return new IPAddress(4, this.value & 0xffffffffn);
    return this;
  }

  toString(): string {
    return formatAddress(this.family, this.value);
  }
}

/** An address with a prefix length; the address may have host bits set (masked() clears them). */
export class CIDRRange {
  readonly address: IPAddress;
  readonly prefixLength: number;
  constructor(address: IPAddress, prefixLength: number) {
    this.address = address;
    this.prefixLength = prefixLength;
  }

  containsAddress(candidate: IPAddress): boolean {
    const ip = this.address.family === 4 ? candidate.unmapped() : candidate;
    if (ip.family !== this.address.family) return false;
    const hostBits = BigInt(bits(ip.family) - this.prefixLength);
    return ip.value >> hostBits === this.address.value >> hostBits;
  }

  containsRange(other: CIDRRange): boolean {
    return other.prefixLength >= this.prefixLength && this.containsAddress(other.address);
  }

  masked(): CIDRRange {
    const hostBits = BigInt(bits(this.address.family) - this.prefixLength);
    return new CIDRRange(
      new IPAddress(this.address.family, (this.address.value >> hostBits) << hostBits),
      this.prefixLength,
    );
  }

  toString(): string {
    return `${this.address}/${this.prefixLength}`;
  }
}

function bits(family: 4 | 6): number {
  return family === 4 ? 32 : 128;
}

/** Parses a textual IPv4 or IPv6 address (an IPv6 zone such as %eth0 is ignored), or undefined. */
export function parseIPAddress(text: string): IPAddress | undefined {
  const family = nodeIsIP(text);
  if (family === 4) return new IPAddress(4, ipv4Value(text));
  if (family !== 6) return undefined;
  const zone = text.indexOf('%');
  return new IPAddress(6, ipv6Value(zone === -1 ? text : text.slice(0, zone)));
}

/** Parses "address/prefixLength", or undefined. */
export function parseCIDR(text: string): CIDRRange | undefined {
  const slash = text.indexOf('/');
  if (slash === -1) return undefined;
  const address = parseIPAddress(text.slice(0, slash));
  const length = text.slice(slash + 1);
  if (!address || !/^\d{1,3}$/.test(length)) return undefined;
  const prefixLength = Number(length);
  if (prefixLength > bits(address.family)) return undefined;
  return new CIDRRange(address, prefixLength);
}

function ipv4Value(text: string): bigint {
  let value = 0n;
  for (const part of text.split('.')) value = (value << 8n) | BigInt(Number(part));
  return value;
}

/** An IPv6 address node has validated: "::" expanded, a trailing dotted IPv4 part folded in. */
function ipv6Value(text: string): bigint {
  let groups: string[];
  const lastColon = text.lastIndexOf(':');
  let tail: bigint | undefined;
  let body = text;
  if (text.includes('.', lastColon)) {
    tail = ipv4Value(text.slice(lastColon + 1));
    body = `${text.slice(0, lastColon + 1)}0:0`;
  }
  const gap = body.indexOf('::');
  if (gap === -1) groups = body.split(':');
  else {
    const head = body.slice(0, gap) === '' ? [] : body.slice(0, gap).split(':');
    const rest = body.slice(gap + 2) === '' ? [] : body.slice(gap + 2).split(':');
    groups = [...head, ...new Array<string>(8 - head.length - rest.length).fill('0'), ...rest];
  }
  let value = 0n;
  for (const group of groups) value = (value << 16n) | BigInt(Number.parseInt(group, 16));
  if (tail !== undefined) value = (value & ~0xffffffffn) | tail;
  return value;
}

/** RFC 5952 text: lowercase hex, the longest run of zero groups as "::", IPv4-mapped as ::ffff:a.b.c.d. */
export function formatAddress(family: 4 | 6, value: bigint): string {
  if (family === 4) return [24n, 16n, 8n, 0n].map((shift) => Number((value >> shift) & 0xffn)).join('.');
  if (value >> 32n === 0xffffn) return `::ffff:${formatAddress(4, value & 0xffffffffn)}`;
  const groups: number[] = [];
  for (let shift = 112n; shift >= 0n; shift -= 16n) groups.push(Number((value >> shift) & 0xffffn));
  let bestStart = -1;
  let bestLength = 1; // a single zero group is not shortened
  for (let start = 0; start < 8; ) {
    if (groups[start] !== 0) {
      start++;
      continue;
    }
    let end = start;
    while (end < 8 && groups[end] === 0) end++;
    if (end - start > bestLength) {
      bestStart = start;
      bestLength = end - start;
    }
    start = end;
  }
  const hex = groups.map((group) => group.toString(16));
  if (bestStart === -1) return hex.join(':');
  return `${hex.slice(0, bestStart).join(':')}::${hex.slice(bestStart + bestLength).join(':')}`;
}

function ipArgument(text: string): IPAddress {
  const ip = parseIPAddress(text);
  if (!ip) throw new Error(`"${text}" is not an IP address`);
  return ip;
}

function cidrArgument(text: string): CIDRRange {
  const range = parseCIDR(text);
  if (!range) throw new Error(`"${text}" is not a CIDR range`);
  return range;
}

/** Adds the net.IP and net.CIDR types and their functions to a CEL environment. */
export function registerNetworkFunctions(environment: Environment): void {
  environment
    .registerType('net.IP', IPAddress)
    .registerType('net.CIDR', CIDRRange)
    .registerFunction('ip(string): net.IP', ipArgument)
    .registerFunction('cidr(string): net.CIDR', cidrArgument)
    .registerFunction('isIP(string): bool', (text: string) => parseIPAddress(text) !== undefined)
    .registerFunction('isCIDR(string): bool', (text: string) => parseCIDR(text) !== undefined)
    .registerFunction('net.CIDR.containsIP(string): bool', (range: CIDRRange, text: string) =>
      range.containsAddress(ipArgument(text)),
    )
    .registerFunction('net.CIDR.containsIP(net.IP): bool', (range: CIDRRange, ip: IPAddress) =>
      range.containsAddress(ip),
    )
    .registerFunction('net.CIDR.containsCIDR(string): bool', (range: CIDRRange, text: string) =>
      range.containsRange(cidrArgument(text)),
    )
    .registerFunction('net.CIDR.containsCIDR(net.CIDR): bool', (range: CIDRRange, other: CIDRRange) =>
      range.containsRange(other),
    )
    .registerFunction('net.CIDR.ip(): net.IP', (range: CIDRRange) => range.address)
    .registerFunction('net.CIDR.masked(): net.CIDR', (range: CIDRRange) => range.masked())
    .registerFunction('net.CIDR.prefixLength(): int', (range: CIDRRange) => BigInt(range.prefixLength))
    .registerFunction('net.IP.family(): int', (ip: IPAddress) => BigInt(ip.family))
    .registerFunction('net.IP.isLoopback(): bool', (ip: IPAddress) => {
      const address = ip.unmapped();
      return address.family === 4 ? address.value >> 24n === 127n : address.value === 1n;
    })
    .registerFunction('net.IP.isUnspecified(): bool', (ip: IPAddress) => ip.value === 0n)
    .registerFunction('string(net.IP): string', (ip: IPAddress) => ip.toString())
    .registerFunction('string(net.CIDR): string', (range: CIDRRange) => range.toString());
}
