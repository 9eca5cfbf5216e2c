// Which addresses a dynamic forward proxy may connect to (decision 0044). By default it refuses
// loopback, link-local, unspecified and cloud metadata addresses, and the gateway's own listeners;
// a GwBackend's allowedAddresses and allowedHosts lift the first three (a metadata address only by
// its own single-address range), deniedAddresses refuses more. Private ranges (RFC 1918, ULA) are
// reached by default, as agentgateway reaches any destination. Addresses are checked after the
// name is resolved, and the address checked is the one connected to.
import { BlockList, isIPv4 } from 'node:net';
import { networkInterfaces } from 'node:os';
import type { DynamicForwardProxyBackend } from '../../../api/types/backends.ts';
import { canonicalAddress, parseAddressRange } from '../../../util/address-range.ts';

/** Why an address is refused: the rule, as the client's answer names it. */
export type RefusalRule =
  | 'loopback'
  | 'link-local'
  | 'unspecified'
  | 'cloud metadata'
  | 'gateway listener'
  | 'deniedAddresses';

/** Cloud metadata services: AWS, GCP, Azure, Oracle (169.254.169.254), AWS ECS, Alibaba; AWS and GCP over IPv6. */
const METADATA_ADDRESSES: readonly string[] = [
  '169.254.169.254',
  '169.254.170.2',
  '100.100.100.200',
  'fd00:ec2::254',
  'fd20:ce::254',
];

function rangeList(ranges: readonly [string, number][]): BlockList {
  const list = new BlockList();
  for (const [network, prefix] of ranges) list.addSubnet(network, prefix, isIPv4(network) ? 'ipv4' : 'ipv6');
  return list;
}

const METADATA = rangeList(METADATA_ADDRESSES.map((address) => [address, isIPv4(address) ? 32 : 128]));
const LOOPBACK = rangeList([
  ['127.0.0.0', 8],
  ['::1', 128],
]);
const LINK_LOCAL = rangeList([
  ['169.254.0.0', 16],
  ['fe80::', 10],
]);
const UNSPECIFIED = rangeList([
  ['0.0.0.0', 8],
  ['::', 128],
]);

function family(address: string): 'ipv4' | 'ipv6' {
  return isIPv4(address) ? 'ipv4' : 'ipv6';
}

/** A field of the rules that cannot be used: its path under dynamicForwardProxy and why. */
export class DestinationRulesError extends Error {
  readonly field: string;
  constructor(field: string, message: string) {
    super(message);
    this.field = field;
  }
}

/** This host's own addresses (a destination on a listener's port there is the gateway itself). */
function localAddresses(): Set<string> {
  const addresses = new Set<string>();
  for (const entries of Object.values(networkInterfaces()))
    for (const entry of entries ?? []) addresses.add(canonicalAddress(entry.address.replace(/%.*$/, '')));
  return addresses;
}

export class DestinationRules {
  readonly #allowed: BlockList;
  /** Metadata addresses allowed by a single-address range of allowedAddresses. */
  readonly #allowedMetadata = new Set<string>();
  readonly #allowedHosts: readonly string[];
  readonly #denied: BlockList;
  readonly #servesPort: (port: number) => boolean;
  #local: { at: number; addresses: Set<string> } | undefined;

  /** Throws DestinationRulesError naming the field of a range that cannot be parsed. */
  constructor(spec: DynamicForwardProxyBackend, servesPort: (port: number) => boolean) {
    this.#allowed = this.#ranges(spec.allowedAddresses, 'allowedAddresses', (network, prefix) => {
      if (prefix === (isIPv4(network) ? 32 : 128) && METADATA.check(network, family(network)))
        this.#allowedMetadata.add(network);
    });
    this.#denied = this.#ranges(spec.deniedAddresses, 'deniedAddresses');
    this.#allowedHosts = (spec.allowedHosts ?? []).map((host) => host.toLowerCase());
    this.#servesPort = servesPort;
  }

  #ranges(
    texts: readonly string[] | undefined,
    field: string,
    each?: (network: string, prefix: number) => void,
  ): BlockList {
    const list = new BlockList();
    (texts ?? []).forEach((text, index) => {
      const range = parseAddressRange(text);
      if (typeof range === 'string') throw new DestinationRulesError(`${field}[${index}]`, range);
      list.addSubnet(range.network, range.prefix, family(range.network));
      each?.(range.network, range.prefix);
    });
    return list;
  }

  /**
   * The rule that refuses connecting to `address` (resolved from `host`, the name the client
   * sent) on `port`, or undefined when the connection is allowed.
   */
  refusal(host: string, address: string, port: number): RefusalRule | undefined {
    const ip = canonicalAddress(address);
    const type = family(ip);
    if (this.#denied.check(ip, type)) return 'deniedAddresses';
    if (this.#servesPort(port) && this.#isLocal(ip, type)) return 'gateway listener';
    if (METADATA.check(ip, type)) return this.#allowedMetadata.has(ip) ? undefined : 'cloud metadata';
    const rule: RefusalRule | undefined = LOOPBACK.check(ip, type)
      ? 'loopback'
      : LINK_LOCAL.check(ip, type)
        ? 'link-local'
        : UNSPECIFIED.check(ip, type)
          ? 'unspecified'
          : undefined;
    if (rule === undefined) return undefined;
    return this.#allowed.check(ip, type) || this.#hostAllowed(host) ? undefined : rule;
  }

  #hostAllowed(host: string): boolean {
    const name = host.toLowerCase().replace(/\.$/, '');
    return this.#allowedHosts.some((pattern) =>
      pattern.startsWith('*.') ? name.endsWith(pattern.slice(1)) : name === pattern,
    );
  }

  /** Loopback, unspecified (which reaches every local address) or one of this host's addresses. */
  #isLocal(ip: string, type: 'ipv4' | 'ipv6'): boolean {
    if (LOOPBACK.check(ip, type) || UNSPECIFIED.check(ip, type)) return true;
    // Interfaces change rarely: read them at most once a minute.
    const now = Date.now();
    if (this.#local === undefined || now - this.#local.at > 60_000)
      this.#local = { at: now, addresses: localAddresses() };
    return this.#local.addresses.has(ip);
  }
}
