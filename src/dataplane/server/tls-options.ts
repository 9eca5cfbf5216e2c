// Frontend.tls as node (OpenSSL) TLS server options. The API names cipher suites the IANA/rustls
// way; OpenSSL has its own names, and takes TLS 1.3 suites (TLS_*) in the same `ciphers` string.
import {
  DEFAULT_CIPHERS,
  DEFAULT_ECDH_CURVE,
  DEFAULT_MAX_VERSION,
  DEFAULT_MIN_VERSION,
  type SecureVersion,
} from 'node:tls';
import type { CipherSuite, FrontendTLS } from '../../api/types/frontend.ts';
import { durationMs } from '../../util/units.ts';
import { opensslGroups } from '../transport/key-exchange-groups.ts';

/** The options every secure context of a port is made with (the default one and one per SNI name). */
export interface SecureContextSettings {
  readonly minVersion: SecureVersion;
  readonly maxVersion: SecureVersion;
  readonly ciphers: string;
  readonly ecdhCurve: string;
  /** The server's preference order (the configured order) decides, not the client's. */
  readonly honorCipherOrder: boolean;
}

export interface TlsSettings {
  readonly handshakeTimeoutMs: number;
  /** ALPN protocols offered, in preference order (only those gw serves: h2, http/1.1). */
  readonly alpnProtocols: readonly string[];
  readonly context: SecureContextSettings;
}

/** Spec: TLS handshakeTimeout default 15s. */
const DEFAULT_HANDSHAKE_TIMEOUT_MS = 15_000;
/** Spec: alpnProtocols default h2 and http/1.1. */
const DEFAULT_ALPN = ['h2', 'http/1.1'];
/** The application protocols gw's HTTPS listeners speak. */
const SERVED_ALPN = new Set(['h2', 'http/1.1']);

const OPENSSL_CIPHERS: Record<CipherSuite, string> = {
  TLS13_AES_256_GCM_SHA384: 'TLS_AES_256_GCM_SHA384',
  TLS13_AES_128_GCM_SHA256: 'TLS_AES_128_GCM_SHA256',
  TLS13_CHACHA20_POLY1305_SHA256: 'TLS_CHACHA20_POLY1305_SHA256',
  TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384: 'ECDHE-ECDSA-AES256-GCM-SHA384',
  TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256: 'ECDHE-ECDSA-AES128-GCM-SHA256',
  TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256: 'ECDHE-ECDSA-CHACHA20-POLY1305',
  TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384: 'ECDHE-RSA-AES256-GCM-SHA384',
  TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256: 'ECDHE-RSA-AES128-GCM-SHA256',
  TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256: 'ECDHE-RSA-CHACHA20-POLY1305',
};

const VERSIONS: Record<string, SecureVersion> = { '1.2': 'TLSv1.2', '1.3': 'TLSv1.3' };

export const DEFAULT_TLS_SETTINGS: TlsSettings = Object.freeze({
  handshakeTimeoutMs: DEFAULT_HANDSHAKE_TIMEOUT_MS,
  alpnProtocols: DEFAULT_ALPN,
  context: Object.freeze({
    minVersion: DEFAULT_MIN_VERSION,
    maxVersion: DEFAULT_MAX_VERSION,
    ciphers: DEFAULT_CIPHERS,
    ecdhCurve: DEFAULT_ECDH_CURVE,
    honorCipherOrder: true,
  }),
});

export interface TlsCompileResult {
  settings: TlsSettings;
  /** What makes the settings unusable (the listener is refused). */
  problems: string[];
  /** What is served differently than configured, logged. */
  notes: string[];
}

export function compileTlsSettings(tls: FrontendTLS | undefined): TlsCompileResult {
  const problems: string[] = [];
  const notes: string[] = [];
  if (!tls) return { settings: DEFAULT_TLS_SETTINGS, problems, notes };
  let minVersion = tls.minProtocolVersion ? VERSIONS[tls.minProtocolVersion]! : DEFAULT_TLS_SETTINGS.context.minVersion;
  let maxVersion = tls.maxProtocolVersion ? VERSIONS[tls.maxProtocolVersion]! : DEFAULT_TLS_SETTINGS.context.maxVersion;
  let ciphers = DEFAULT_TLS_SETTINGS.context.ciphers;
  if (tls.cipherSuites && tls.cipherSuites.length > 0) {
    ciphers = tls.cipherSuites.map((suite) => OPENSSL_CIPHERS[suite]).join(':');
    // OpenSSL keeps its default TLS 1.3 suites when the list names none (and has no TLS 1.2
    // suite left when it names only TLS 1.3 ones): the versions follow the suites allowed.
    const has13 = tls.cipherSuites.some((suite) => suite.startsWith('TLS13_'));
    const has12 = tls.cipherSuites.some((suite) => !suite.startsWith('TLS13_'));
    if (!has13) {
      if (tls.minProtocolVersion === '1.3')
        problems.push('frontend.tls.cipherSuites names no TLS 1.3 suite but minProtocolVersion is 1.3');
      maxVersion = 'TLSv1.2';
    }
    if (!has12) {
      if (tls.maxProtocolVersion === '1.2')
        problems.push('frontend.tls.cipherSuites names only TLS 1.3 suites but maxProtocolVersion is 1.2');
      minVersion = 'TLSv1.3';
    }
  }
  let ecdhCurve = DEFAULT_TLS_SETTINGS.context.ecdhCurve;
  if (tls.keyExchangeGroups && tls.keyExchangeGroups.length > 0) {
    const groups = opensslGroups(tls.keyExchangeGroups);
    if (typeof groups === 'string') ecdhCurve = groups;
    else problems.push(`frontend.tls.keyExchangeGroups[${groups.index}]: ${groups.message}`);
  }
  let alpnProtocols = DEFAULT_ALPN;
  if (tls.alpnProtocols) {
    alpnProtocols = tls.alpnProtocols.filter((protocol) => SERVED_ALPN.has(protocol));
    const unserved = tls.alpnProtocols.filter((protocol) => !SERVED_ALPN.has(protocol));
    if (unserved.length > 0)
      notes.push(
        `frontend.tls.alpnProtocols ${unserved.join(', ')} not offered: HTTPS listeners serve only h2 and http/1.1`,
      );
    if (alpnProtocols.length === 0)
      problems.push('frontend.tls.alpnProtocols names neither h2 nor http/1.1, the protocols HTTPS listeners serve');
  }
  return {
    settings: {
      handshakeTimeoutMs: tls.handshakeTimeout ? durationMs(tls.handshakeTimeout) : DEFAULT_HANDSHAKE_TIMEOUT_MS,
      alpnProtocols,
      context: { minVersion, maxVersion, ciphers, ecdhCurve, honorCipherOrder: true },
    },
    problems,
    notes,
  };
}

/**
 * The protocol to select from what the client offers: the first configured one it offers, or
 * undefined (the handshake then fails with no_application_protocol). A client that offers no
 * ALPN at all is not asked and speaks HTTP/1.1.
 */
export function selectAlpn(configured: readonly string[], offered: readonly string[]): string | undefined {
  for (const protocol of configured) if (offered.includes(protocol)) return protocol;
  return undefined;
}
