// SigV4 signing of a request as it leaves gw for an AWS service (backend authentication cloudone).
// What is signed is what is sent: the method, the Host (set explicitly when the request has none),
// the path and query exactly as on the wire, the headers no proxy changes on the way (host,
// content-type, x-amz-*, x-amzn-*, as agentgateway signs) and the body's SHA-256 — or
// UNSIGNED-PAYLOAD for a body forwarded as it arrives (docs/decisions/0014-cloudone-signing.md).
//
// The signature is computed here with node:crypto, synchronously, following the SigV4
// specification as the AWS SDK's signer (@smithy/signature-v4) implements it — the same canonical
// path (segments normalised, URI-encoded once more except for S3), query, headers and payload
// hash. The SDK's signer costs about 25 µs a request (a promise per step, a generic request
// copy), most of a proxied request's CPU; this one a few. Tests hold the two to byte-identical
// headers (test/dataplane/backend-auth/cloudone-sigv4.test.ts), besides verifying with an
// independent implementation and the Bedrock client.
import { createHmac, createSecretKey, hash, type KeyObject } from 'node:crypto';
import type { Clock } from '../../../../util/clock.ts';
import { type OutgoingRequest, STREAMED_BODY } from '../kind.ts';

/** AWS credentials as the SDK's providers give them (AwsCredentialIdentity). */
export interface AwsCredentials {
  readonly accessKeyId: string;
  readonly secretAccessKey: string;
  readonly sessionToken?: string | undefined;
  /** When temporary credentials stop being valid; absent for long-term keys. */
  readonly expiration?: Date | undefined;
}

export const UNSIGNED_PAYLOAD = 'UNSIGNED-PAYLOAD';
const CONTENT_SHA256 = 'x-amz-content-sha256';

/** The headers the signature writes: a client's own are dropped before signing (they are gw's to set). */
const SIGNATURE_HEADERS = new Set(['authorization', 'x-amz-date', 'x-amz-security-token', CONTENT_SHA256]);

/**
 * Whether a header is covered by the signature. Hop-by-hop headers, content-length (re-framed on
 * the way), user-agent, and headers proxies add or change (via, x-forwarded-*, the trace id) are
 * not: a signature over them would break on the first proxy and protect nothing.
 */
function signedHeader(lower: string): boolean {
  if (lower === 'host' || lower === 'content-type') return true;
  // X-Amzn-Trace-Id is set and changed by load balancers on the way (the SDK never signs it).
  return (lower.startsWith('x-amz-') || lower.startsWith('x-amzn-')) && lower !== 'x-amzn-trace-id';
}

/** The authority (host[:port]) a client sends for `origin`: URL.host, without a default port. */
function authorityOf(origin: string): string {
  return new URL(origin).host;
}

const ALGORITHM = 'AWS4-HMAC-SHA256';
/** SHA-256 of an empty body. */
const EMPTY_SHA256 = 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855';
/** Canonical paths kept per signer: a backend is sent a handful of paths. */
const MAX_CANONICAL_PATHS = 256;

/** RFC 3986 encoding as SigV4 wants it: encodeURIComponent plus ! ' ( ) *. */
function escapeUri(value: string): string {
  return encodeURIComponent(value).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
}

/**
 * The canonical URI: for S3 the path as sent; for every other service the path with empty, "."
 * and ".." segments resolved and each segment URI-encoded once more (a ':' sent raw becomes %3A,
 * one sent as %3A becomes %253A — what the service computes from what it receives).
 */
function canonicalPath(path: string, encodeAgain: boolean): string {
  if (!encodeAgain) return path;
  const segments: string[] = [];
  for (const segment of path.split('/')) {
    if (segment === '' || segment === '.') continue;
    if (segment === '..') segments.pop();
    else segments.push(segment);
  }
  const normalized = `${path.startsWith('/') ? '/' : ''}${segments.join('/')}${segments.length > 0 && path.endsWith('/') ? '/' : ''}`;
  return escapeUri(normalized).replace(/%2F/g, '/');
}

/** The canonical query of a query string as gw writes it (URLSearchParams: '+' is a space): sorted by name, then value. */
function canonicalQuery(search: string): string {
  if (search === '') return '';
  const byName = new Map<string, string[]>();
  for (const [name, value] of new URLSearchParams(search)) {
    const key = escapeUri(name);
    const pair = `${key}=${escapeUri(value)}`;
    const pairs = byName.get(key);
    if (pairs === undefined) byName.set(key, [pair]);
    else pairs.push(pair);
  }
  const out: string[] = [];
  for (const key of [...byName.keys()].sort()) out.push(...byName.get(key)!.sort());
  return out.join('&');
}

/** A header value as SigV4 canonicalises it: line breaks and runs of blanks one space, trimmed. */
function canonicalValue(value: string): string {
  // Most values need nothing: one test instead of three replacements.
  if (!NEEDS_CANONICAL_FORM.test(value)) return value;
  return value
    .replace(/[\r\n]/g, ' ')
    .replace(/[ \t]+/g, ' ')
    .replace(/^ | $/g, '');
}

/** A line break, a tab, two blanks in a row, or a blank at either end. */
const NEEDS_CANONICAL_FORM = /[\r\n\t]| {2}|^ | $/;

/** 20261126T231045Z of an epoch time. */
function amzDate(epochMs: number): string {
  return new Date(epochMs)
    .toISOString()
    .replace(/\.\d{3}Z$/, 'Z')
    .replace(/[-:]/g, '');
}

/** Signs requests with one credential for one service and region. */
export class Sigv4Signer {
  readonly #credentials: AwsCredentials;
  readonly #service: string;
  readonly #region: string;
  readonly #clock: Clock;
  /** S3 signs the path as sent; every other service signs it URI-encoded once more (SigV4). */
  readonly #escapePath: boolean;
  /** The day's signing key (derived from the secret key, the day, region and service) and its day. */
  #day = '';
  #key: KeyObject | undefined;
  /** The second last signed, its X-Amz-Date, credential scope and the string to sign up to the request's hash. */
  #second = Number.NaN;
  #date = '';
  #scope = '';
  #toSignPrefix = '';
  readonly #paths = new Map<string, string>();
  /** The last origin signed for and its authority: a backend sends to one origin, parsed once. */
  #origin = '';
  #authority = '';

  constructor(credentials: AwsCredentials, service: string, region: string, clock: Clock) {
    this.#credentials = credentials;
    this.#service = service;
    this.#region = region;
    this.#clock = clock;
    this.#escapePath = service !== 's3';
  }

  /** Writes Host (when absent), X-Amz-Date, X-Amz-Security-Token, X-Amz-Content-SHA256 and Authorization. */
  sign(request: OutgoingRequest): void {
    const headers = request.headers;
    const signed: Record<string, string> = {};
    let host: string | undefined;
    for (const name in headers) {
      const lower = name.toLowerCase();
      if (SIGNATURE_HEADERS.has(lower)) {
        delete headers[name];
        continue;
      }
      if (!signedHeader(lower)) continue;
      const value = headers[name]!;
      const text = Array.isArray(value) ? value.join(',') : value;
      signed[lower] = signed[lower] === undefined ? text : `${signed[lower]},${text}`;
      if (lower === 'host') host = signed[lower];
    }
    if (host === undefined) {
      if (request.origin !== this.#origin) {
        this.#authority = authorityOf(request.origin);
        this.#origin = request.origin;
      }
      host = this.#authority;
      headers.host = host;
      signed.host = host;
    }

    const credentials = this.#credentials;
    const epochMs = this.#clock.epochMs();
    const second = Math.floor(epochMs / 1000);
    if (second !== this.#second) {
      this.#second = second;
      this.#date = amzDate(second * 1000);
      const day = this.#date.slice(0, 8);
      this.#scope = `${day}/${this.#region}/${this.#service}/aws4_request`;
      this.#toSignPrefix = `${ALGORITHM}\n${this.#date}\n${this.#scope}\n`;
      this.#key = this.#signingKey(day);
    }
    const date = this.#date;
    const body = request.body;
    const payloadHash =
      body === STREAMED_BODY
        ? UNSIGNED_PAYLOAD
        : body === undefined || body.length === 0
          ? EMPTY_SHA256
          : hash('sha256', body, 'hex');
    signed['x-amz-date'] = date;
    if (credentials.sessionToken) signed['x-amz-security-token'] = credentials.sessionToken;
    signed[CONTENT_SHA256] = payloadHash;

    const names = Object.keys(signed).sort();
    let canonicalHeaders = '';
    for (const name of names) canonicalHeaders += `${name}:${canonicalValue(signed[name]!)}\n`;
    const signedHeaders = names.join(';');
    const at = request.path.indexOf('?');
    const path = at === -1 ? request.path : request.path.slice(0, at);
    const canonicalRequest = `${request.method}\n${this.#canonicalPath(path)}\n${canonicalQuery(at === -1 ? '' : request.path.slice(at + 1))}\n${canonicalHeaders}\n${signedHeaders}\n${payloadHash}`;
    const stringToSign = this.#toSignPrefix + hash('sha256', canonicalRequest, 'hex');
    const signature = createHmac('sha256', this.#key!).update(stringToSign).digest('hex');

    headers['x-amz-date'] = date;
    if (credentials.sessionToken) headers['x-amz-security-token'] = credentials.sessionToken;
    headers[CONTENT_SHA256] = payloadHash;
    headers.authorization = `${ALGORITHM} Credential=${credentials.accessKeyId}/${this.#scope}, SignedHeaders=${signedHeaders}, Signature=${signature}`;
  }

  /**
   * HMAC chain of SigV4: AWS4+secret, then the day, region, service and "aws4_request"; once a day.
   * A KeyObject: an HMAC with a raw Buffer key imports the key each time (9 µs against 1).
   */
  #signingKey(day: string): KeyObject {
    if (this.#key === undefined || day !== this.#day) {
      let key: Buffer = Buffer.from(`AWS4${this.#credentials.secretAccessKey}`, 'utf8');
      for (const part of [day, this.#region, this.#service, 'aws4_request'])
        key = createHmac('sha256', key).update(part).digest();
      this.#key = createSecretKey(key);
      this.#day = day;
    }
    return this.#key;
  }

  #canonicalPath(path: string): string {
    let canonical = this.#paths.get(path);
    if (canonical === undefined) {
      canonical = canonicalPath(path, this.#escapePath);
      if (this.#paths.size >= MAX_CANONICAL_PATHS) this.#paths.clear();
      this.#paths.set(path, canonical);
    }
    return canonical;
  }
}
