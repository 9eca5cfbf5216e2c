// A SigV4 verifier written from the AWS Signature Version 4 specification with node:crypto alone
// (no AWS code): it recomputes the signature of a request as an AWS service does on receipt —
// canonical request from the method, the path and query as received, the headers the
// Authorization header lists and the body's hash; string to sign; key derived from the secret,
// date, region and service — and compares. Used by the cloudone tests and their stand-ins.
import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';

/** The secret access key of an access key id (and the session token it must come with, if any). */
export type Sigv4Secrets = (accessKeyId: string) => { secretAccessKey: string; sessionToken?: string } | undefined;

export interface ReceivedRequest {
  method: string;
  /** The request target as received: path and query, still encoded. */
  url: string;
  headers: IncomingHttpHeaders;
  body: Buffer;
}

export interface VerifyOptions {
  secrets: Sigv4Secrets;
  region?: string;
  service?: string;
  /** Whether x-amz-content-sha256: UNSIGNED-PAYLOAD is accepted (S3-style services). */
  allowUnsignedPayload?: boolean;
  /** S3 signs the path as received; every other service encodes it once more. */
  s3?: boolean;
}

export interface Verified {
  accessKeyId: string;
  region: string;
  service: string;
  date: string;
  signedHeaders: string[];
  payloadHash: string;
  sessionToken: string | undefined;
  canonicalRequest: string;
}

const sha256 = (data: string | Buffer) => createHash('sha256').update(data).digest('hex');
const hmac = (key: string | Buffer, data: string) => createHmac('sha256', key).update(data).digest();

/** RFC 3986 encoding as SigV4 wants it: every byte but A-Z a-z 0-9 - _ . ~ as %XX, upper-case hex. */
export function uriEncode(text: string): string {
  let out = '';
  for (const byte of Buffer.from(text, 'utf8')) {
    const char = String.fromCharCode(byte);
    out += /[A-Za-z0-9\-_.~]/.test(char) ? char : `%${byte.toString(16).toUpperCase().padStart(2, '0')}`;
  }
  return out;
}

function canonicalPath(path: string, s3: boolean): string {
  if (s3) return path === '' ? '/' : path;
  const segments: string[] = [];
  for (const segment of path.split('/')) {
    if (segment === '' || segment === '.') continue;
    if (segment === '..') segments.pop();
    else segments.push(uriEncode(segment));
  }
  const trailing = segments.length > 0 && path.endsWith('/') ? '/' : '';
  return `/${segments.join('/')}${trailing}`;
}

function canonicalQuery(query: string): string {
  if (query === '') return '';
  const pairs = query
    .split('&')
    .filter((pair) => pair !== '')
    .map((pair) => {
      const at = pair.indexOf('=');
      const name = decodeURIComponent(at === -1 ? pair : pair.slice(0, at));
      const value = at === -1 ? '' : decodeURIComponent(pair.slice(at + 1));
      return [uriEncode(name), uriEncode(value)] as const;
    });
  pairs.sort(([a, x], [b, y]) => (a < b ? -1 : a > b ? 1 : x < y ? -1 : x > y ? 1 : 0));
  return pairs.map(([name, value]) => `${name}=${value}`).join('&');
}

const AUTHORIZATION =
  /^AWS4-HMAC-SHA256 Credential=([^/]+)\/(\d{8})\/([^/]+)\/([^/]+)\/aws4_request, SignedHeaders=([a-z0-9;-]+), Signature=([0-9a-f]{64})$/;

/** Verifies a request's SigV4 Authorization header; throws with the reason when it does not hold. */
export function verifySigv4(request: ReceivedRequest, options: VerifyOptions): Verified {
  const header = request.headers.authorization;
  const match = typeof header === 'string' ? AUTHORIZATION.exec(header) : null;
  if (match === null) throw new Error(`no SigV4 Authorization header: ${header}`);
  const [, accessKeyId, date, region, service, signedList, signature] = match as unknown as string[];
  if (options.region !== undefined && region !== options.region) throw new Error(`region ${region}`);
  if (options.service !== undefined && service !== options.service) throw new Error(`service ${service}`);
  const amzDate = request.headers['x-amz-date'];
  if (typeof amzDate !== 'string' || !amzDate.startsWith(date!)) throw new Error(`x-amz-date ${amzDate}`);
  const signedHeaders = signedList!.split(';');
  for (const required of ['host', 'x-amz-date'])
    if (!signedHeaders.includes(required)) throw new Error(`${required} is not signed`);
  const secret = options.secrets(accessKeyId!);
  if (secret === undefined) throw new Error(`unknown access key ${accessKeyId}`);
  const sessionToken = request.headers['x-amz-security-token'] as string | undefined;
  if (secret.sessionToken !== sessionToken) throw new Error('wrong or missing session token');
  if (sessionToken !== undefined && !signedHeaders.includes('x-amz-security-token'))
    throw new Error('the session token is not signed');

  const declared = request.headers['x-amz-content-sha256'] as string | undefined;
  const bodyHash = sha256(request.body);
  let payloadHash = bodyHash;
  if (declared === 'UNSIGNED-PAYLOAD') {
    if (!options.allowUnsignedPayload) throw new Error('UNSIGNED-PAYLOAD is not accepted');
    payloadHash = declared;
  } else if (declared !== undefined && declared !== bodyHash) throw new Error('x-amz-content-sha256 is not the body');

  const at = request.url.indexOf('?');
  const path = at === -1 ? request.url : request.url.slice(0, at);
  const query = at === -1 ? '' : request.url.slice(at + 1);
  const headerLines = signedHeaders.map((name) => {
    const value = request.headers[name];
    if (value === undefined) throw new Error(`signed header ${name} is missing`);
    const text = (Array.isArray(value) ? value.join(',') : value).trim().replace(/\s+/g, ' ');
    return `${name}:${text}\n`;
  });
  const canonicalRequest = [
    request.method,
    canonicalPath(path, options.s3 ?? false),
    canonicalQuery(query),
    headerLines.join(''),
    signedHeaders.join(';'),
    payloadHash,
  ].join('\n');
  const scope = `${date}/${region}/${service}/aws4_request`;
  const stringToSign = ['AWS4-HMAC-SHA256', amzDate, scope, sha256(canonicalRequest)].join('\n');
  let key = hmac(`AWS4${secret.secretAccessKey}`, date!);
  for (const part of [region!, service!, 'aws4_request']) key = hmac(key, part);
  const expected = createHmac('sha256', key).update(stringToSign).digest();
  if (!timingSafeEqual(expected, Buffer.from(signature!, 'hex'))) throw new Error('the signature does not match');
  return {
    accessKeyId: accessKeyId!,
    region: region!,
    service: service!,
    date: amzDate,
    signedHeaders,
    payloadHash,
    sessionToken,
    canonicalRequest,
  };
}
