// SPIFFE IDs of Istio workloads (spiffe://<trust domain>/ns/<namespace>/sa/<service account>) and
// the check of a peer's: the peer must be one of the identities expected, where a trust domain
// among the mesh's trusted ones (trustDomain and additionalTrustDomains, Istio's trust domain
// aliases) stands for any other of them — a workload keeps its identity across a trust domain
// migration (decision 0035).
import type { X509Certificate } from 'node:crypto';
import { spiffeId } from './settings.ts';

export interface SpiffeId {
  trustDomain: string;
  namespace: string;
  serviceAccount: string;
}

/** The URI names of a certificate's subjectAltName. */
export function uriNames(certificate: X509Certificate): string[] {
  const names = certificate.subjectAltName;
  if (names === undefined) return [];
  // Node lists "TYPE:value" joined by ", "; a value with a comma or quote is JSON-quoted.
  return (names.match(/(?:[^",]|"(?:\\.|[^"\\])*")+/g) ?? [])
    .map((entry) => entry.trim())
    .filter((entry) => entry.startsWith('URI:'))
    .map((entry) => {
      const value = entry.slice(4);
      return value.startsWith('"') ? (JSON.parse(value) as string) : value;
    });
}

const ISTIO_SPIFFE_ID = /^spiffe:\/\/([^/]+)\/ns\/([^/]+)\/sa\/([^/]+)$/;

/** An Istio workload's SPIFFE ID, or undefined for any other URI. */
export function parseSpiffeId(uri: string): SpiffeId | undefined {
  const match = ISTIO_SPIFFE_ID.exec(uri);
  if (match === null) return undefined;
  return { trustDomain: match[1]!, namespace: match[2]!, serviceAccount: match[3]! };
}

/** Whether `peer` is `expected`, its trust domain possibly another of `trustDomains`. */
export function sameWorkload(peer: SpiffeId, expected: SpiffeId, trustDomains: readonly string[]): boolean {
  if (peer.namespace !== expected.namespace || peer.serviceAccount !== expected.serviceAccount) return false;
  if (peer.trustDomain === expected.trustDomain) return true;
  return trustDomains.includes(peer.trustDomain) && trustDomains.includes(expected.trustDomain);
}

/**
 * Why a peer's certificate does not show one of the `expected` identities, or undefined when it
 * does. With no identity expected, any workload of a trusted trust domain is accepted.
 */
export function peerIdentityProblem(
  certificate: X509Certificate,
  expected: readonly string[],
  trustDomains: readonly string[],
): string | undefined {
  const peers = uriNames(certificate)
    .map(parseSpiffeId)
    .filter((id) => id !== undefined);
  if (peers.length === 0) return 'the peer certificate names no SPIFFE ID';
  const wanted = expected.map(parseSpiffeId).filter((id) => id !== undefined);
  const accepted =
    wanted.length === 0
      ? peers.some((peer) => trustDomains.includes(peer.trustDomain))
      : peers.some((peer) => wanted.some((id) => sameWorkload(peer, id, trustDomains)));
  if (accepted) return undefined;
  const names = peers.map((peer) => spiffeId(peer.trustDomain, peer.namespace, peer.serviceAccount));
  return wanted.length === 0
    ? `the peer ${names.join(', ')} is not of a trusted trust domain (${trustDomains.join(', ')})`
    : `the peer ${names.join(', ')} is not ${expected.join(' or ')}`;
}
