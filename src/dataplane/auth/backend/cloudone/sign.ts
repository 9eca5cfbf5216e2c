// SigV4 signing of a request as it leaves gw for an AWS service (backend authentication cloudone),
// with the AWS SDK's own signer (@smithy/signature-v4). One Sigv4Signer per credential: the SDK
// caches the derived signing key per day, region and service, so a request costs the canonical
// request, two SHA-256 digests and two HMACs. What is signed is what is sent: the method, the
// Host (set explicitly when the request has none), the path and query exactly as on the wire, the
// headers no proxy changes on the way (host, content-type, x-amz-*, x-amzn-*, as agentgateway
// signs) and the body's SHA-256 — or UNSIGNED-PAYLOAD for a body forwarded as it arrives
// (docs/decisions/0014-cloudone-signing.md).
import type * as HashNode from '@smithy/hash-node';
import type * as SignatureV4Module from '@smithy/signature-v4';
import type { SignatureV4 } from '@smithy/signature-v4';
import type { Clock } from '../../../../util/clock.ts';
import { loadOnFirstUse } from '../../../../util/load-on-first-use.ts';
import { type OutgoingRequest, STREAMED_BODY } from '../kind.ts';

// The SDK's signer, loaded when a cloudone credential is first compiled: a gateway without one does
// not carry it (docs/benchmarks.md, "Memory").
const signatureV4 = loadOnFirstUse<typeof SignatureV4Module>('@smithy/signature-v4');
const hashNode = loadOnFirstUse<typeof HashNode>('@smithy/hash-node');

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
  return (
    lower === 'host' ||
    lower === 'content-type' ||
    (lower.startsWith('x-amz') && (lower.startsWith('x-amz-') || lower.startsWith('x-amzn-')))
  );
}

/** The authority (host[:port]) a client sends for `origin`: URL.host, without a default port. */
function authorityOf(origin: string): string {
  return new URL(origin).host;
}

/** A query string parsed as gw writes it (URLSearchParams: '+' is a space), for the SDK's canonical query. */
function parsedQuery(search: string): Record<string, string | string[]> {
  const query: Record<string, string | string[]> = Object.create(null);
  for (const [name, value] of new URLSearchParams(search)) {
    const previous = query[name];
    query[name] = previous === undefined ? value : Array.isArray(previous) ? [...previous, value] : [previous, value];
  }
  return query;
}

type SigningKeyOf = (credentials: unknown, region: string, shortDate: string, service?: string) => Promise<Uint8Array>;

/**
 * Keeps the day's signing key in the signer. The SDK caches derived keys too, but finds them by an
 * HMAC of the credentials on every request (a third of a signature's cost); a signer here has one
 * credential, region and service, so the day alone decides the key. getSigningKey is the SDK's
 * own (private in its types): were it renamed, this does nothing and the SDK's cache still works.
 */
function keepDailyKey(signer: SignatureV4): void {
  const target = signer as unknown as { getSigningKey?: SigningKeyOf };
  const derive = target.getSigningKey;
  if (typeof derive !== 'function') return;
  let day = '';
  let key: Promise<Uint8Array> | undefined;
  target.getSigningKey = (credentials, region, shortDate, service) => {
    if (key === undefined || shortDate !== day) {
      day = shortDate;
      key = derive.call(signer, credentials, region, shortDate, service);
    }
    return key;
  };
}

/** Signs requests with one credential for one service and region. */
export class Sigv4Signer {
  readonly #signer: SignatureV4;
  readonly #clock: Clock;
  /** The last origin signed for and its authority: a backend sends to one origin, parsed once. */
  #origin = '';
  #authority = '';

  constructor(credentials: AwsCredentials, service: string, region: string, clock: Clock) {
    const identity = {
      accessKeyId: credentials.accessKeyId,
      secretAccessKey: credentials.secretAccessKey,
      ...(credentials.sessionToken === undefined ? {} : { sessionToken: credentials.sessionToken }),
    };
    this.#signer = new (signatureV4().SignatureV4)({
      credentials: identity,
      region,
      service,
      sha256: hashNode().Hash.bind(null, 'sha256'),
      // S3 signs the path as sent; every other service signs it URI-encoded once more (SigV4).
      uriEscapePath: service !== 's3',
      // x-amz-content-sha256 is sent as the SDK's clients send it (S3 requires it, others accept it).
      applyChecksum: true,
    });
    keepDailyKey(this.#signer);
    this.#clock = clock;
  }

  /** Writes Host (when absent), X-Amz-Date, X-Amz-Security-Token, X-Amz-Content-SHA256 and Authorization. */
  async sign(request: OutgoingRequest): Promise<void> {
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
    let body: Buffer | string | undefined;
    if (request.body === STREAMED_BODY) signed[CONTENT_SHA256] = UNSIGNED_PAYLOAD;
    else body = request.body;
    const at = request.path.indexOf('?');
    const result = await this.#signer.sign(
      {
        method: request.method,
        protocol: 'https:',
        hostname: host,
        path: at === -1 ? request.path : request.path.slice(0, at),
        query: at === -1 ? {} : parsedQuery(request.path.slice(at + 1)),
        headers: signed,
        body,
      },
      { signingDate: new Date(this.#clock.epochMs()) },
    );
    const out = result.headers;
    for (const name of SIGNATURE_HEADERS) {
      const value = out[name];
      if (value !== undefined) headers[name] = value;
    }
  }
}
