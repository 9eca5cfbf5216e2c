// The proxy's workload certificate in the mesh (decision 0035): asked of the mesh CA for the
// proxy's SPIFFE ID, checked before use, renewed at half its lifetime and never handed out once
// expired. Time is read from an injected clock (src/util/clock.ts), so renewal and expiry are
// tested at their bounds; `tick()` does whatever is due, and `start()` calls it every second.
import { createPublicKey, type KeyObject, X509Certificate } from 'node:crypto';
import { type Clock, systemClock } from '../../util/clock.ts';
import { CaRequestError, createCertificate } from './ca-client.ts';
import { signingRequest } from './csr.ts';
import { type MeshSettings, ownIdentity } from './settings.ts';
import { uriNames } from './spiffe.ts';

/** The lifetime asked of the CA (Istio's default workload certificate lifetime); it may give less. */
export const REQUESTED_VALIDITY_SECONDS = 24 * 3600;
/** Waits between failed requests: doubling from the first to the last. */
export const RETRY_FIRST_MS = 1_000;
export const RETRY_MAX_MS = 30_000;
const TICK_MS = 1_000;

export interface WorkloadCertificate {
  /** The SPIFFE ID the certificate names. */
  identity: string;
  privateKey: KeyObject;
  /** PEM certificates to present: the workload's, then any intermediates. */
  chain: string[];
  /** PEM mesh roots, to verify peers with. */
  roots: string[];
  notBeforeMs: number;
  notAfterMs: number;
}

const PEM_CERTIFICATE = /-----BEGIN CERTIFICATE-----[A-Za-z0-9+/=\s]+-----END CERTIFICATE-----/g;

/** Every PEM certificate in `text` (Istio may concatenate several roots in the chain's last element). */
export function pemCertificates(text: string): string[] {
  return [...text.matchAll(PEM_CERTIFICATE)].map((match) => `${match[0]}\n`);
}

function issuedBy(certificate: X509Certificate, issuer: X509Certificate): boolean {
  return certificate.checkIssued(issuer) && certificate.verify(issuer.publicKey);
}

/**
 * The certificate the CA answered, or why it cannot be used: the chain must be the workload's
 * certificate for `identity` over the key gw made, its intermediates, and last the roots it
 * verifies up to, and it must not have expired at `nowMs`.
 */
export function acceptCertificate(
  chainPems: readonly string[],
  privateKey: KeyObject,
  identity: string,
  nowMs: number,
): WorkloadCertificate | string {
  if (chainPems.length < 2)
    return `the CA answered ${chainPems.length} certificate(s): the workload's and the root are needed`;
  let parsed: X509Certificate[];
  let roots: X509Certificate[];
  const rootPems = pemCertificates(chainPems[chainPems.length - 1]!);
  try {
    parsed = chainPems.slice(0, -1).map((pem) => new X509Certificate(pem));
    roots = rootPems.map((pem) => new X509Certificate(pem));
  } catch (error) {
    return `the CA answered a certificate that does not parse: ${(error as Error).message}`;
  }
  if (roots.length === 0) return "the CA's answer ends without a root certificate";
  const [leaf, ...intermediates] = parsed as [X509Certificate, ...X509Certificate[]];
  if (leaf.ca) return "the CA answered a CA certificate as the workload's";
  const ours = createPublicKey(privateKey).export({ type: 'spki', format: 'der' });
  if (!leaf.publicKey.export({ type: 'spki', format: 'der' }).equals(ours))
    return 'the certificate is not for the key of the request';
  const uris = uriNames(leaf);
  if (!uris.includes(identity)) return `the certificate names ${uris.join(', ') || 'no URI'}, not ${identity}`;
  let current = leaf;
  for (const intermediate of intermediates) {
    if (!intermediate.ca || !issuedBy(current, intermediate))
      return `the chain is broken: ${current.subject || 'the workload certificate'} is not issued by the next certificate`;
    current = intermediate;
  }
  if (!roots.some((root) => root.ca && issuedBy(current, root))) return "the chain does not verify up to the CA's root";
  const notBeforeMs = Date.parse(leaf.validFrom);
  const notAfterMs = Date.parse(leaf.validTo);
  if (!(nowMs < notAfterMs)) return `the certificate expired at ${leaf.validTo}`;
  return {
    identity,
    privateKey,
    chain: chainPems.slice(0, -1).map((pem) => (pem.endsWith('\n') ? pem : `${pem}\n`)),
    roots: rootPems,
    notBeforeMs,
    notAfterMs,
  };
}

/** When a certificate is renewed: at half its lifetime. */
export function renewAtMs(certificate: Pick<WorkloadCertificate, 'notBeforeMs' | 'notAfterMs'>): number {
  return certificate.notBeforeMs + (certificate.notAfterMs - certificate.notBeforeMs) / 2;
}

export type RequestCertificate = (csrPem: string, validitySeconds: number) => Promise<string[]>;

export interface WorkloadCertificateOptions {
  clock?: Clock;
  /** The CA call (default: CreateCertificate at the settings' CA). */
  request?: RequestCertificate;
  /** Where renewals and failures are reported (no secrets are passed). */
  log?: (level: 'info' | 'warn', message: string) => void;
}

export interface WorkloadCertificateStatus {
  identity: string;
  state: 'pending' | 'ready' | 'failing';
  /** The last failure, while failing (the current certificate may still be in use). */
  error?: string;
  notAfterMs?: number;
}

export class WorkloadCertificateSource {
  readonly identity: string;
  readonly #clock: Clock;
  readonly #request: RequestCertificate;
  readonly #log: NonNullable<WorkloadCertificateOptions['log']>;
  #certificate: WorkloadCertificate | undefined;
  #error: string | undefined;
  #retryMs = RETRY_FIRST_MS;
  #nextAttemptMs = Number.NEGATIVE_INFINITY;
  #inFlight: Promise<void> | undefined;
  #timer: NodeJS.Timeout | undefined;

  constructor(settings: MeshSettings, options: WorkloadCertificateOptions = {}) {
    this.identity = ownIdentity(settings);
    this.#clock = options.clock ?? systemClock;
    this.#request = options.request ?? ((csr, validity) => createCertificate(settings, csr, validity));
    this.#log = options.log ?? (() => {});
  }

  /** The certificate to use now, or undefined: none yet, or the last one expired. */
  current(): WorkloadCertificate | undefined {
    const certificate = this.#certificate;
    return certificate !== undefined && this.#clock.epochMs() < certificate.notAfterMs ? certificate : undefined;
  }

  status(): WorkloadCertificateStatus {
    const current = this.current();
    const status: WorkloadCertificateStatus = {
      identity: this.identity,
      state: this.#error !== undefined ? 'failing' : current !== undefined ? 'ready' : 'pending',
    };
    if (this.#error !== undefined) status.error = this.#error;
    if (current !== undefined) status.notAfterMs = current.notAfterMs;
    return status;
  }

  /** Asks the CA when a certificate is due (none, or past its renewal time) and no retry is waited for. */
  tick(): Promise<void> {
    if (this.#inFlight !== undefined) return this.#inFlight;
    const now = this.#clock.epochMs();
    const due = this.#certificate === undefined || now >= renewAtMs(this.#certificate);
    if (!due || now < this.#nextAttemptMs) return Promise.resolve();
    this.#inFlight = this.#fetch().finally(() => {
      this.#inFlight = undefined;
    });
    return this.#inFlight;
  }

  /** Ticks every second until stop(); the first tick is now. */
  start(): void {
    if (this.#timer !== undefined) return;
    void this.tick();
    this.#timer = setInterval(() => void this.tick(), TICK_MS);
    this.#timer.unref();
  }

  stop(): void {
    clearInterval(this.#timer);
    this.#timer = undefined;
  }

  async #fetch(): Promise<void> {
    let outcome: WorkloadCertificate | string;
    try {
      const { pem, privateKey } = signingRequest(this.identity);
      const chain = await this.#request(pem, REQUESTED_VALIDITY_SECONDS);
      outcome = acceptCertificate(chain, privateKey, this.identity, this.#clock.epochMs());
    } catch (error) {
      // Whatever failed (the CA, the files, the network), the proxy keeps running and retries.
      outcome = error instanceof CaRequestError ? error.message : `the CA request failed: ${(error as Error).message}`;
    }
    if (typeof outcome === 'string') {
      this.#error = outcome;
      this.#nextAttemptMs = this.#clock.epochMs() + this.#retryMs;
      this.#log(
        'warn',
        `mesh workload certificate for ${this.identity}: ${outcome}; retrying in ${this.#retryMs / 1000}s`,
      );
      this.#retryMs = Math.min(this.#retryMs * 2, RETRY_MAX_MS);
      return;
    }
    this.#certificate = outcome;
    this.#error = undefined;
    this.#retryMs = RETRY_FIRST_MS;
    this.#nextAttemptMs = Number.NEGATIVE_INFINITY;
    this.#log(
      'info',
      `mesh workload certificate for ${this.identity}: valid until ${new Date(outcome.notAfterMs).toISOString()}, renewed from ${new Date(renewAtMs(outcome)).toISOString()}`,
    );
  }
}
