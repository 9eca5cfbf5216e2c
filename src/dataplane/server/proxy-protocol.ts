// The PROXY protocol (HAProxy's, versions 1 and 2): a load balancer in front of gw prepends one
// header to each TCP connection naming the client it accepted, so gw sees the client's address
// instead of the balancer's. The header is read before anything else on the connection (before
// TLS on an HTTPS port), with a bounded buffer and a deadline; the bytes after it are handed on
// untouched.
import type { Duplex } from 'node:stream';
import { formatAddress } from '../cel/network.ts';

/** Which versions a port accepts, and whether a connection without a header is refused. */
export interface ProxyProtocolOptions {
  readonly v1: boolean;
  readonly v2: boolean;
  /** Strict: every connection must start with a header; Optional: one without is served as it is. */
  readonly strict: boolean;
}

export interface PeerAddress {
  readonly address: string;
  readonly port: number;
}

export type ProxyHeaderParse =
  /** More bytes are needed to decide. */
  | { readonly kind: 'incomplete' }
  /** The connection does not start with a PROXY header. */
  | { readonly kind: 'absent' }
  | { readonly kind: 'invalid'; readonly reason: string }
  /**
   * A header of `length` bytes. `source` is the client it names; undefined for LOCAL (v2, the
   * balancer's own health check), UNKNOWN (v1) and address families without an IP (UNIX sockets).
   */
  | { readonly kind: 'header'; readonly length: number; readonly source: PeerAddress | undefined };

const V1_PREFIX = Buffer.from('PROXY ', 'latin1');
/** A v1 header is at most 107 bytes, CRLF included. */
const V1_MAX_LENGTH = 107;
const V2_SIGNATURE = Buffer.from([0x0d, 0x0a, 0x0d, 0x0a, 0x00, 0x0d, 0x0a, 0x51, 0x55, 0x49, 0x54, 0x0a]);
const V2_FIXED_LENGTH = 16;
/** The largest possible header: v2's 16 fixed bytes and a 16-bit length. */
export const PROXY_HEADER_MAX_BYTES = V2_FIXED_LENGTH + 0xffff;
/** How long a connection may take to send its header before it is closed. */
export const PROXY_HEADER_TIMEOUT_MS = 10_000;

/** Whether `data` starts with `signature`, or is a (shorter) beginning of it. */
function startsLike(data: Buffer, signature: Buffer): 'yes' | 'maybe' | 'no' {
  const length = Math.min(data.length, signature.length);
  if (data.compare(signature, 0, length, 0, length) !== 0) return 'no';
  return data.length >= signature.length ? 'yes' : 'maybe';
}

/** Parses the start of a connection for a PROXY header of the versions allowed. */
export function parseProxyHeader(data: Buffer, options: Pick<ProxyProtocolOptions, 'v1' | 'v2'>): ProxyHeaderParse {
  const v1 = startsLike(data, V1_PREFIX);
  const v2 = startsLike(data, V2_SIGNATURE);
  if (v1 === 'maybe' || v2 === 'maybe') return { kind: 'incomplete' };
  if (v1 === 'yes')
    return options.v1 ? parseV1(data) : { kind: 'invalid', reason: 'PROXY protocol v1 is not accepted' };
  if (v2 === 'yes')
    return options.v2 ? parseV2(data) : { kind: 'invalid', reason: 'PROXY protocol v2 is not accepted' };
  return { kind: 'absent' };
}

function parseV1(data: Buffer): ProxyHeaderParse {
  const end = data.indexOf('\r\n', 0, 'latin1');
  if (end === -1) {
    return data.length >= V1_MAX_LENGTH
      ? { kind: 'invalid', reason: 'PROXY v1 header longer than 107 bytes' }
      : { kind: 'incomplete' };
  }
  if (end + 2 > V1_MAX_LENGTH) return { kind: 'invalid', reason: 'PROXY v1 header longer than 107 bytes' };
  const fields = data.toString('latin1', V1_PREFIX.length, end).split(' ');
  const length = end + 2;
  if (fields[0] === 'UNKNOWN') return { kind: 'header', length, source: undefined };
  if ((fields[0] !== 'TCP4' && fields[0] !== 'TCP6') || fields.length !== 5)
    return { kind: 'invalid', reason: 'malformed PROXY v1 header' };
  const family = fields[0] === 'TCP4' ? 4 : 6;
  const [, source, destination, sourcePort, destinationPort] = fields as [string, string, string, string, string];
  const address = canonicalAddress(source, family);
  if (address === undefined || canonicalAddress(destination, family) === undefined)
    return { kind: 'invalid', reason: `PROXY v1 header with an invalid ${fields[0]} address` };
  const port = portNumber(sourcePort);
  if (port === undefined || portNumber(destinationPort) === undefined)
    return { kind: 'invalid', reason: 'PROXY v1 header with an invalid port' };
  return { kind: 'header', length, source: { address, port } };
}

/** The address in its canonical text when it is a valid address of the family. */
function canonicalAddress(text: string, family: 4 | 6): string | undefined {
  if (family === 4) {
    const parts = text.split('.');
    if (parts.length !== 4 || parts.some((part) => !/^(0|[1-9]\d{0,2})$/.test(part) || Number(part) > 255))
      return undefined;
    return text;
  }
  if (!/^[0-9A-Fa-f:.]+$/.test(text) || !text.includes(':')) return undefined;
  const bytes = ipv6Bytes(text);
  return bytes ? formatAddress(6, bytes) : undefined;
}

/** Parses IPv6 text into its 128-bit value (node's isIP has validated nothing yet: do it here). */
function ipv6Bytes(text: string): bigint | undefined {
  const halves = text.split('::');
  if (halves.length > 2) return undefined;
  const parse = (part: string): number[] | undefined => {
    if (part === '') return [];
    const groups: number[] = [];
    const pieces = part.split(':');
    for (let index = 0; index < pieces.length; index++) {
      const piece = pieces[index]!;
      if (index === pieces.length - 1 && piece.includes('.')) {
        const v4 = canonicalAddress(piece, 4);
        if (!v4) return undefined;
        const octets = v4.split('.').map(Number) as [number, number, number, number];
        groups.push((octets[0] << 8) | octets[1], (octets[2] << 8) | octets[3]);
      } else if (/^[0-9A-Fa-f]{1,4}$/.test(piece)) groups.push(Number.parseInt(piece, 16));
      else return undefined;
    }
    return groups;
  };
  const head = parse(halves[0]!);
  const tail = halves.length === 2 ? parse(halves[1]!) : [];
  if (!head || !tail) return undefined;
  const missing = 8 - head.length - tail.length;
  if (halves.length === 2 ? missing < 1 : missing !== 0) return undefined;
  let value = 0n;
  for (const group of [...head, ...new Array<number>(missing).fill(0), ...tail]) value = (value << 16n) | BigInt(group);
  return value;
}

function portNumber(text: string): number | undefined {
  if (!/^(0|[1-9]\d{0,4})$/.test(text)) return undefined;
  const port = Number(text);
  return port <= 65535 ? port : undefined;
}

function parseV2(data: Buffer): ProxyHeaderParse {
  if (data.length < V2_FIXED_LENGTH) return { kind: 'incomplete' };
  const versionCommand = data[12]!;
  if (versionCommand >> 4 !== 2) return { kind: 'invalid', reason: 'PROXY v2 header with an unknown version' };
  const command = versionCommand & 0x0f;
  if (command > 1) return { kind: 'invalid', reason: 'PROXY v2 header with an unknown command' };
  const familyTransport = data[13]!;
  const length = V2_FIXED_LENGTH + data.readUInt16BE(14);
  if (data.length < length) return { kind: 'incomplete' };
  // LOCAL: the balancer speaking for itself; the connection's own address stands.
  if (command === 0) return { kind: 'header', length, source: undefined };
  const family = familyTransport >> 4;
  const addresses = length - V2_FIXED_LENGTH;
  if (family === 1) {
    if (addresses < 12) return { kind: 'invalid', reason: 'PROXY v2 header too short for IPv4 addresses' };
    const address = formatAddress(4, BigInt(data.readUInt32BE(16)));
    return { kind: 'header', length, source: { address, port: data.readUInt16BE(24) } };
  }
  if (family === 2) {
    if (addresses < 36) return { kind: 'invalid', reason: 'PROXY v2 header too short for IPv6 addresses' };
    const value = (data.readBigUInt64BE(16) << 64n) | data.readBigUInt64BE(24);
    return { kind: 'header', length, source: { address: formatAddress(6, value), port: data.readUInt16BE(48) } };
  }
  // UNSPEC and UNIX carry no IP address to use.
  if (family === 0 || family === 3) return { kind: 'header', length, source: undefined };
  return { kind: 'invalid', reason: 'PROXY v2 header with an unknown address family' };
}

export type ProxyHeaderOutcome =
  | { readonly kind: 'header'; readonly source: PeerAddress | undefined }
  | { readonly kind: 'absent' }
  | { readonly kind: 'refused'; readonly reason: string };

/**
 * Reads a PROXY header from the start of `stream`. The bytes after the header (or, when there is
 * none, all bytes read) are put back, so whoever reads the stream next sees it from there.
 * Resolves 'refused' (the caller closes the connection) for a malformed header, a version not
 * accepted, a missing header in Strict mode, or a connection that ended or timed out first; in
 * Optional mode a connection that sends nothing before the deadline is 'absent'.
 */
export function readProxyHeader(
  stream: Duplex,
  options: ProxyProtocolOptions,
  timeoutMs = PROXY_HEADER_TIMEOUT_MS,
): Promise<ProxyHeaderOutcome> {
  return new Promise((resolve) => {
    let buffered: Buffer = Buffer.alloc(0);
    const finish = (outcome: ProxyHeaderOutcome, rest: Buffer | undefined) => {
      clearTimeout(timer);
      stream.off('readable', onReadable);
      stream.off('end', onEnd);
      stream.off('error', onEnd);
      stream.off('close', onEnd);
      if (rest && rest.length > 0) stream.unshift(rest);
      resolve(outcome);
    };
    const onReadable = () => {
      let chunk: Buffer | null;
      // biome-ignore lint/suspicious/noAssignInExpressions: the usual stream read loop
      while ((chunk = stream.read() as Buffer | null) !== null) {
        buffered = buffered.length === 0 ? chunk : Buffer.concat([buffered, chunk]);
        const parsed = parseProxyHeader(buffered, options);
        if (parsed.kind === 'incomplete') {
          if (buffered.length >= PROXY_HEADER_MAX_BYTES)
            return finish({ kind: 'refused', reason: 'PROXY header too long' }, undefined);
          continue;
        }
        if (parsed.kind === 'invalid') return finish({ kind: 'refused', reason: parsed.reason }, undefined);
        if (parsed.kind === 'absent') {
          if (options.strict) return finish({ kind: 'refused', reason: 'no PROXY header' }, undefined);
          return finish({ kind: 'absent' }, buffered);
        }
        return finish({ kind: 'header', source: parsed.source }, buffered.subarray(parsed.length));
      }
    };
    const onEnd = () => finish({ kind: 'refused', reason: 'the connection closed before its PROXY header' }, undefined);
    const timer = setTimeout(() => {
      if (!options.strict && buffered.length === 0) finish({ kind: 'absent' }, undefined);
      else finish({ kind: 'refused', reason: 'no complete PROXY header in time' }, undefined);
    }, timeoutMs);
    stream.on('readable', onReadable);
    stream.once('end', onEnd);
    stream.once('error', onEnd);
    stream.once('close', onEnd);
  });
}
