// The data plane's way into Istio's ambient mesh (decision 0035 part 3): the proxy's workload
// certificate source and its mesh settings, and opening HBONE to a destination pod with the
// certificate current at that moment. Built from the environment the provisioned pod carries
// (settings.ts), once per process that serves; none when the environment names no CA.
import type { ClientHttp2Stream } from 'node:http2';
import { HboneError, type HboneTarget, openHbone } from './hbone.ts';
import { type MeshSettings, meshSettingsFromEnv, spiffeId } from './settings.ts';
import { type WorkloadCertificateOptions, WorkloadCertificateSource } from './workload-certificate.ts';

export class MeshTransport {
  readonly settings: MeshSettings;
  readonly certificates: WorkloadCertificateSource;
  /** trustDomain, then additionalTrustDomains: the trust domains a destination may show. */
  readonly trustDomains: readonly string[];

  constructor(settings: MeshSettings, options: WorkloadCertificateOptions = {}) {
    this.settings = settings;
    this.certificates = new WorkloadCertificateSource(settings, options);
    this.trustDomains = [settings.trustDomain, ...settings.additionalTrustDomains];
  }

  /** The SPIFFE ID of a workload of this mesh. */
  identityOf(namespace: string, serviceAccount: string): string {
    return spiffeId(this.settings.trustDomain, namespace, serviceAccount);
  }

  /**
   * An HBONE tunnel to `target` with the current workload certificate; fails (closed, nothing
   * sent) while there is none — not yet issued, or expired and not renewed.
   */
  open(target: HboneTarget, connectTimeoutMs: number): Promise<ClientHttp2Stream> {
    const certificate = this.certificates.current();
    if (certificate === undefined) {
      const { error } = this.certificates.status();
      return Promise.reject(
        new HboneError(
          `HBONE to ${target.address}: no mesh workload certificate for ${this.certificates.identity}${error ? ` (${error})` : ' yet'}`,
        ),
      );
    }
    return openHbone(certificate, target, { trustDomains: this.trustDomains, connectTimeoutMs });
  }

  start(): void {
    this.certificates.start();
  }

  stop(): void {
    this.certificates.stop();
  }
}

/**
 * The mesh transport of this process's environment: undefined without CA_ADDRESS, an error
 * naming the variable when the settings are wrong.
 */
export function meshTransportFromEnv(
  env: Readonly<Record<string, string | undefined>>,
  options: WorkloadCertificateOptions = {},
): MeshTransport | undefined | string {
  const settings = meshSettingsFromEnv(env);
  if (settings === undefined || typeof settings === 'string') return settings;
  return new MeshTransport(settings, options);
}
