// Spec document 2, "Frontend": how the gateway handles downstream connections (TCP, TLS, HTTP,
// PROXY protocol, CONNECT) and the telemetry of the traffic it accepts.
import { array, enumOf, integer, named, object, refine, required } from '../schema/build.ts';
import { onlyWhen } from '../schema/rules.ts';
import type { Infer } from '../schema/schema.ts';
import { Keepalive, KeyExchangeGroup } from './backend-connection.ts';
import { ByteSize, Duration, TinyString } from './common.ts';
import { Authorization } from './inbound-auth.ts';
import { AccessLog, MetricLabels, Tracing } from './observability.ts';

export const FrontendTCP = named(
  { name: 'FrontendTCP', description: 'TCP settings for client connections: keepalive.', source: '2' },
  object({
    keepalive: refine(Keepalive, { description: 'TCP keepalive probes on downstream connections.' }),
  }),
);
export type FrontendTCP = Infer<typeof FrontendTCP>;

export const TLSVersion = named(
  {
    name: 'TLSVersion',
    description: 'A TLS protocol version: 1.2 or 1.3.',
    source: 'gw',
    notes:
      'Values not shown in the spec; gw accepts "1.2" and "1.3" (the versions the data plane implements), as agentgateway does.',
  },
  enumOf(['1.2', '1.3']),
);
export type TLSVersion = Infer<typeof TLSVersion>;

export const CipherSuite = named(
  { name: 'CipherSuite', description: 'A TLS cipher suite.', source: '2' },
  enumOf([
    'TLS13_AES_256_GCM_SHA384',
    'TLS13_AES_128_GCM_SHA256',
    'TLS13_CHACHA20_POLY1305_SHA256',
    'TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384',
    'TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256',
    'TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256',
    'TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384',
    'TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256',
    'TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256',
  ]),
);
export type CipherSuite = Infer<typeof CipherSuite>;

export const FrontendTLS = named(
  {
    name: 'FrontendTLS',
    description:
      'TLS settings for client connections: handshake timeout, ALPN, protocol versions, cipher suites and key exchange groups.',
    source: '2',
  },
  object(
    {
      handshakeTimeout: refine(Duration, { default: '15s', description: 'Deadline for completing the TLS handshake.' }),
      alpnProtocols: refine(array(TinyString, { minItems: 1, maxItems: 16 }), {
        default: ['h2', 'http/1.1'],
        description: 'ALPN protocols offered, in preference order.',
      }),
      minProtocolVersion: refine(TLSVersion, { description: 'Lowest TLS version accepted.' }),
      maxProtocolVersion: refine(TLSVersion, { description: 'Highest TLS version accepted.' }),
      cipherSuites: array(CipherSuite, { description: 'Cipher suites allowed, in preference order.' }),
      keyExchangeGroups: array(KeyExchangeGroup, { description: 'Key exchange groups allowed, in preference order.' }),
    },
    {
      rules: [
        {
          // '1.2' < '1.3' as strings, which is the version order.
          rule: '!has(self.minProtocolVersion) || !has(self.maxProtocolVersion) || self.minProtocolVersion <= self.maxProtocolVersion',
          message: 'minProtocolVersion may not be greater than maxProtocolVersion',
        },
      ],
    },
  ),
);
export type FrontendTLS = Infer<typeof FrontendTLS>;

export const FrontendHTTP = named(
  {
    name: 'FrontendHTTP',
    description: 'HTTP settings for client connections: limits, timeouts and HTTP/2 settings.',
    source: '2',
    notes:
      'The spec writes the maxBufferSize default as "2mb" and the http2FrameSize default as "16kb"; as quantities they are 2Mi and 16Ki.',
  },
  object(
    {
      maxBufferSize: refine(ByteSize, { default: '2Mi', description: 'Most bytes of a body buffered in memory.' }),
      http1MaxHeaders: integer({
        minimum: 1,
        maximum: 4096,
        default: 100,
        description: 'Most headers an HTTP/1 request may carry.',
      }),
      http1IdleTimeout: refine(Duration, {
        default: '10m',
        description: 'How long an idle HTTP/1 keep-alive connection stays open.',
      }),
      http1HeaderCase: enumOf(['Lowercase', 'Preserve'], {
        description: 'Case of HTTP/1 header names sent on; HTTP/2 header names are always lowercase.',
      }),
      http2WindowSize: refine(ByteSize, { description: 'HTTP/2 per-stream flow-control window.' }),
      http2ConnectionWindowSize: refine(ByteSize, { description: 'HTTP/2 connection flow-control window.' }),
      http2FrameSize: refine(ByteSize, { default: '16Ki', description: 'Largest HTTP/2 frame payload accepted.' }),
      http2MaxHeaderSize: refine(ByteSize, { default: '16Ki', description: 'Largest HTTP/2 header list accepted.' }),
      http2KeepaliveInterval: refine(Duration, {
        description: 'Interval between HTTP/2 PING frames; no pings when unset.',
      }),
      http2KeepaliveTimeout: refine(Duration, {
        description: 'How long to wait for a PING acknowledgement before closing; only with http2KeepaliveInterval.',
      }),
      maxConnectionDuration: refine(Duration, {
        description: 'Connection lifetime, after which it is closed gracefully once the in-flight request completes.',
      }),
    },
    {
      rules: [
        onlyWhen('http2KeepaliveTimeout', 'has(self.http2KeepaliveInterval)', 'when http2KeepaliveInterval is set'),
      ],
    },
  ),
);
export type FrontendHTTP = Infer<typeof FrontendHTTP>;

export const FrontendProxyProtocol = named(
  {
    name: 'FrontendProxyProtocol',
    description: 'PROXY protocol on client connections: the version and whether it is required.',
    source: '2',
  },
  object({
    version: enumOf(['V1', 'V2', 'All'], { default: 'V2', description: 'PROXY protocol versions accepted.' }),
    mode: enumOf(['Strict', 'Optional'], {
      default: 'Strict',
      description:
        'Strict requires the PROXY header on every connection; Optional also accepts connections without it.',
    }),
  }),
);
export type FrontendProxyProtocol = Infer<typeof FrontendProxyProtocol>;

export const FrontendConnect = named(
  {
    name: 'FrontendConnect',
    description: 'Whether and how HTTP CONNECT requests are accepted.',
    source: '2',
    notes: 'Without a connect section, CONNECT requests are answered with 405.',
  },
  object({
    mode: required(
      enumOf(['Deny', 'Route', 'Tunnel'], {
        description:
          'Deny rejects CONNECT; Route matches it against HTTP routes and tunnels to the chosen backend; Tunnel terminates it and feeds the stream to the addressed gateway bind as a new downstream connection.',
      }),
    ),
  }),
);
export type FrontendConnect = Infer<typeof FrontendConnect>;

export const Frontend = named(
  {
    name: 'Frontend',
    description:
      'Policies for the listener side: TCP, TLS and HTTP settings of client connections, network authorization, PROXY protocol, CONNECT, access logging, tracing and metrics.',
    source: '2',
  },
  object({
    tcp: FrontendTCP,
    networkAuthorization: refine(Authorization, {
      description: 'CEL authorization of downstream connections before any protocol handling, e.g. on source.address.',
    }),
    tls: FrontendTLS,
    http: FrontendHTTP,
    proxyProtocol: refine(FrontendProxyProtocol, {
      description: 'Accept the PROXY protocol header from a load balancer.',
    }),
    connect: refine(FrontendConnect, { description: 'Handling of HTTP CONNECT; rejected with 405 when unset.' }),
    accessLog: AccessLog,
    tracing: refine(Tracing, { description: 'Export traces to an OTLP collector.' }),
    metrics: refine(MetricLabels, { description: "Custom labels on the gateway's metrics." }),
  }),
);
export type Frontend = Infer<typeof Frontend>;
