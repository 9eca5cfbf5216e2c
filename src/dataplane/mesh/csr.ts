// The certificate signing request a workload sends the mesh CA (decision 0035): a new ECDSA P-256
// key, and a PKCS#10 request (RFC 2986) whose only name is the URI SAN of the workload's SPIFFE ID
// — an empty subject, so the SAN extension is critical (RFC 5280 4.2.1.6) — signed with
// ecdsa-with-SHA256. The private key never leaves the process.
import { generateKeyPairSync, type KeyObject, sign } from 'node:crypto';
import {
  bitString,
  booleanTrue,
  contextConstructed,
  contextPrimitive,
  objectIdentifier,
  octetString,
  sequence,
  set,
  smallInteger,
} from './der.ts';

const OID_EXTENSION_REQUEST = '1.2.840.113549.1.9.14';
const OID_SUBJECT_ALT_NAME = '2.5.29.17';
const OID_ECDSA_WITH_SHA256 = '1.2.840.10045.4.3.2';
/** GeneralName uniformResourceIdentifier is [6] IMPLICIT IA5String. */
const GENERAL_NAME_URI = 6;

export interface SigningRequest {
  /** The CSR, PEM. */
  pem: string;
  privateKey: KeyObject;
}

function pem(label: string, der: Uint8Array): string {
  const lines =
    Buffer.from(der)
      .toString('base64')
      .match(/.{1,64}/g) ?? [];
  return `-----BEGIN ${label}-----\n${lines.join('\n')}\n-----END ${label}-----\n`;
}

/** A new key and a CSR for the URI `uri` (a SPIFFE ID). */
export function signingRequest(uri: string): SigningRequest {
  if (!/^[\x21-\x7e]+$/.test(uri)) throw new RangeError(`not a URI of printable ASCII: ${JSON.stringify(uri)}`);
  const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const subjectAltName = sequence(contextPrimitive(GENERAL_NAME_URI, Buffer.from(uri, 'ascii')));
  const info = sequence(
    smallInteger(0),
    sequence(), // the empty subject
    publicKey.export({ type: 'spki', format: 'der' }),
    contextConstructed(
      0,
      sequence(
        objectIdentifier(OID_EXTENSION_REQUEST),
        set(sequence(sequence(objectIdentifier(OID_SUBJECT_ALT_NAME), booleanTrue(), octetString(subjectAltName)))),
      ),
    ),
  );
  const signature = sign('sha256', info, { key: privateKey, dsaEncoding: 'der' });
  const request = sequence(info, sequence(objectIdentifier(OID_ECDSA_WITH_SHA256)), bitString(signature));
  return { pem: pem('CERTIFICATE REQUEST', request), privateKey };
}
