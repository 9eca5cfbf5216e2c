// Spec document 2, "Backend connection settings": how the data plane connects to a backend
// (TCP, TLS origination, HTTP version, tunnelling) and how it judges and evicts unhealthy ones.
import { array, enumOf, integer, named, object, refine } from '../schema/build.ts';
import { atMostOneOf } from '../schema/rules.ts';
import type { Infer } from '../schema/schema.ts';
import { BackendAuth } from './backend-auth.ts';
import { CELExpression, Duration, ShortString, SNI, TinyString } from './common.ts';
import {
  endpointReferenceFields,
  endpointReferenceRule,
  LocalCACertificateRef,
  LocalSecretObjectRef,
} from './references.ts';

export const Keepalive = named(
  {
    name: 'Keepalive',
    description:
      'TCP keepalive probes: how long a connection is idle before probing, the interval, and how many probes fail before it is closed.',
    source: '2',
  },
  object({
    retries: integer({
      format: 'int32',
      minimum: 1,
      maximum: 64,
      default: 9,
      description: 'Unanswered probes after which the connection is dropped.',
    }),
    time: refine(Duration, { default: '180s', description: 'Idle time before the first probe is sent.' }),
    interval: refine(Duration, { default: '180s', description: 'Time between probes.' }),
  }),
);
export type Keepalive = Infer<typeof Keepalive>;

export const BackendTCP = named(
  {
    name: 'BackendTCP',
    description: 'TCP settings for connections to the backend: connect timeout and keepalive.',
    source: '2',
  },
  object({
    keepalive: refine(Keepalive, { description: 'TCP keepalive probes on backend connections.' }),
    connectTimeout: refine(Duration, { description: 'Deadline for establishing the connection.' }),
  }),
);
export type BackendTCP = Infer<typeof BackendTCP>;

export const KeyExchangeGroup = named(
  { name: 'KeyExchangeGroup', description: 'A TLS key exchange group.', source: '2' },
  enumOf(['X25519', 'P-256', 'P-384', 'X25519_MLKEM768']),
);
export type KeyExchangeGroup = Infer<typeof KeyExchangeGroup>;

export const InsecureTLSMode = named(
  {
    name: 'InsecureTLSMode',
    description: 'Which certificate checks to skip: All of them, or only the Hostname check.',
    source: '2',
    notes:
      'All disables every check of the backend certificate; Hostname still checks the CA chain but accepts any hostname/SAN.',
  },
  enumOf(['All', 'Hostname']),
);
export type InsecureTLSMode = Infer<typeof InsecureTLSMode>;

export const BackendTLS = named(
  {
    name: 'BackendTLS',
    description: 'TLS for connections to the backend: trusted CAs, client certificate, SNI and verification.',
    source: '2',
    notes:
      'Setting tls (even empty) originates TLS, trusting the system CAs, with SNI and the verified SAN taken from the destination hostname unless sni/verifySubjectAltNames say otherwise.',
  },
  object(
    {
      mtlsCertificateRef: array(LocalSecretObjectRef, {
        maxItems: 1,
        listType: 'atomic',
        description:
          'Client certificate for mutual TLS: keys tls.crt and tls.key, and an optional ca.cert that verifies the server (caCertificateRefs wins over it). Unset: no client certificate.',
      }),
      caCertificateRefs: array(LocalCACertificateRef, {
        maxItems: 1,
        listType: 'atomic',
        description: 'CA bundle (key ca.crt, required) that verifies the server certificate. Unset: the system CAs.',
      }),
      insecureSkipVerify: refine(InsecureTLSMode, {
        description: 'Relaxes verification of the server certificate. Insecure; prefer verifySubjectAltNames.',
      }),
      sni: refine(SNI, { description: 'SNI sent in the handshake. Unset: the destination hostname.' }),
      verifySubjectAltNames: array(ShortString, {
        minItems: 1,
        maxItems: 16,
        description: 'Names accepted in the server certificate SAN. Unset: the destination hostname.',
      }),
      alpnProtocols: refine(
        array(TinyString, { minItems: 1, maxItems: 16, description: 'ALPN protocols offered in the handshake.' }),
        { default: ['h2', 'http/1.1'] },
      ),
      keyExchangeGroups: array(KeyExchangeGroup, {
        listType: 'atomic',
        description: 'Key exchange groups offered, most preferred first. Unset: the TLS library defaults.',
      }),
    },
    { rules: [atMostOneOf(['verifySubjectAltNames', 'insecureSkipVerify'])] },
  ),
);
export type BackendTLS = Infer<typeof BackendTLS>;

export const BackendHTTP = named(
  {
    name: 'BackendHTTP',
    description: 'HTTP settings for requests to the backend: protocol version and request timeout.',
    source: '2',
  },
  object({
    version: enumOf(['HTTP1', 'HTTP2'], {
      description:
        "HTTP version towards the backend. Unset: from the Service port's appProtocol, else HTTP2 for gRPC, the client's version for plaintext HTTP, HTTP1 for HTTPS.",
    }),
    requestTimeout: refine(Duration, { description: 'Deadline for receiving the backend response.' }),
  }),
);
export type BackendHTTP = Infer<typeof BackendHTTP>;

export const BackendTunnel = named(
  {
    name: 'BackendTunnel',
    description: 'An HTTP CONNECT proxy that connections to the backend are tunnelled through.',
    source: '2',
    notes: 'The proxy (HTTP CONNECT) through which backend connections are tunnelled.',
  },
  object(endpointReferenceFields, { rules: [endpointReferenceRule] }),
);
export type BackendTunnel = Infer<typeof BackendTunnel>;

export const BackendEviction = named(
  {
    name: 'BackendEviction',
    description: 'How long an unhealthy endpoint is taken out of rotation, and when.',
    source: '2',
    notes:
      'An unhealthy response evicts when consecutiveFailures is reached or the EWMA health score falls below healthThreshold; with neither set, one unhealthy response evicts. When every endpoint is evicted, selection falls back to evicted endpoints.',
  },
  object({
    duration: refine(Duration, {
      default: '3s',
      description: 'Base eviction time; the n-th eviction of a backend lasts n times this.',
    }),
    restoreHealth: integer({
      format: 'int32',
      minimum: 0,
      maximum: 100,
      description: 'Health score given back when the eviction ends. Unset: the score it had when evicted.',
    }),
    consecutiveFailures: integer({
      format: 'int32',
      minimum: 0,
      description: 'Unhealthy responses in a row that evict the backend.',
    }),
    healthThreshold: integer({
      format: 'int32',
      minimum: 0,
      maximum: 100,
      description: 'Evict when the EWMA health score (0-100) drops below this after an unhealthy response.',
    }),
  }),
);
export type BackendEviction = Infer<typeof BackendEviction>;

export const Health = named(
  {
    name: 'Health',
    description: 'Passive health checking: which responses count as unhealthy, and evicting endpoints that fail.',
    source: '2',
  },
  object({
    unhealthyCondition: refine(CELExpression, {
      description: 'CEL over the response; true marks it unhealthy. Unset: any 5xx response or connection failure.',
    }),
    eviction: BackendEviction,
  }),
);
export type Health = Infer<typeof Health>;

// Connection settings shared by BackendSimple and BackendConnectionPolicy.
const connectionFields = {
  tcp: BackendTCP,
  tls: BackendTLS,
  http: BackendHTTP,
  tunnel: BackendTunnel,
};

export const BackendSimple = named(
  {
    name: 'BackendSimple',
    description:
      'Connection and credential settings for a service gw calls on its own (a guard service, an auth server).',
    source: '2',
  },
  object({ ...connectionFields, auth: BackendAuth }),
);
export type BackendSimple = Infer<typeof BackendSimple>;

export const BackendConnectionPolicy = named(
  {
    name: 'BackendConnectionPolicy',
    description: 'How gw connects to a backend: TCP, TLS, HTTP and tunnel settings.',
    source: '2',
  },
  object(connectionFields),
);
export type BackendConnectionPolicy = Infer<typeof BackendConnectionPolicy>;
