// The gw configuration of the benchmark: one Gateway with two HTTP listeners, each sending /v1 to
// one AI GwBackend. The "load" listener reaches the fixed-answer mock (throughput and latency);
// the "stream" listener reaches a normal mock that streams (time to first token). Optionally a
// GwPolicy that turns the access log off, as nginx's is in the comparison. Also the simpler
// configuration of the multi-core benchmark (one listener, a static backend).
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { stringify } from 'yaml';

/** The key gw sends upstream (backend auth); the mocks accept any key. */
export const BENCH_BACKEND_KEY = 'sk-bench';

/**
 * alpha (OpenAI, passthrough), gamma (Anthropic), delta (Gemini), zeta (Bedrock): the last three
 * translated; custom: a provider that speaks only Chat Completions (the OpenAI mocks), so that a
 * Responses API client is translated to it.
 */
export type ProviderFamily = 'alpha' | 'gamma' | 'delta' | 'zeta' | 'custom';

/** The provider's family config in the GwBackend. */
function familyConfig(family: ProviderFamily): Record<string, unknown> {
  if (family === 'zeta') return { region: 'us-east-1' };
  if (family === 'custom') return { formats: [{ type: 'Completions' }] };
  return {};
}

/**
 * How gw authenticates to the provider: a fixed key (the default), SigV4 signing with static AWS
 * keys from a Secret (cloudone), or a token exchanged at `tokenEndpointPort` for the client's
 * own token and cached (oauthTokenExchange).
 */
export type BenchBackendAuth = 'key' | 'sigv4' | 'token-exchange';

/** The static AWS keys of the SigV4 target (the mocks do not check signatures). */
export const BENCH_AWS_KEYS = {
  accessKey: 'AKIDBENCHEXAMPLE0001',
  secretKey: 'bench/secret/key/not/a/real/one/0000000',
};

export interface GwBenchConfigInput {
  /** alpha: the OpenAI-format mocks (passthrough); gamma: the Anthropic mocks (translated). */
  family: ProviderFamily;
  /** Port of the fixed-answer mock of that family. */
  loadUpstreamPort: number;
  /** Port of the streaming mock of that family. */
  streamUpstreamPort: number;
  /** Free local ports for the two listeners. */
  loadPort: number;
  streamPort: number;
  /** gw writes a JSON line per request unless this is false. */
  accessLog: boolean;
  /** Default `key`. */
  auth?: BenchBackendAuth;
  /** Port of the OAuth token endpoint (auth `token-exchange`). */
  tokenEndpointPort?: number;
  /**
   * Regex prompt guards with every builtin (issue 21): on the requests of the load backend (Reject),
   * and on the streamed answers of the stream backend (Reject, `streaming: Enabled`).
   */
  guarded?: boolean;
}

/** Every builtin of the regex guard. */
const ALL_BUILTINS = ['Ssn', 'CreditCard', 'PhoneNumber', 'Email', 'CaSin'];

/** The backend auth policy of one auth mode. */
function backendAuth(input: GwBenchConfigInput): Record<string, unknown> {
  // Bedrock takes SigV4 only.
  switch (input.family === 'zeta' ? 'sigv4' : (input.auth ?? 'key')) {
    case 'key':
      return { key: BENCH_BACKEND_KEY };
    case 'sigv4':
      return { cloudone: { secretRef: { name: 'bench-aws' }, serviceName: 'bedrock', region: 'us-east-1' } };
    case 'token-exchange':
      if (input.tokenEndpointPort === undefined) throw new Error('token-exchange needs tokenEndpointPort');
      return {
        oauthTokenExchange: {
          url: `http://127.0.0.1:${input.tokenEndpointPort}`,
          path: '/token',
          audiences: ['bench-provider'],
        },
      };
  }
}

/** The Secret of the SigV4 target. */
const awsKeysSecret = {
  apiVersion: 'v1',
  kind: 'Secret',
  metadata: { name: 'bench-aws' },
  stringData: BENCH_AWS_KEYS,
};

export const gatewayClass = {
  apiVersion: 'gateway.networking.k8s.io/v1',
  kind: 'GatewayClass',
  metadata: { name: 'gw' },
  spec: { controllerName: 'gw.dev/gateway-controller' },
};

/** The Gateway "bench" with these HTTP listeners. */
export function gateway(listeners: { name: string; port: number }[]): Record<string, unknown> {
  return {
    apiVersion: 'gateway.networking.k8s.io/v1',
    kind: 'Gateway',
    metadata: { name: 'bench' },
    spec: {
      gatewayClassName: 'gw',
      listeners: listeners.map(({ name, port }) => ({ name, protocol: 'HTTP', port })),
    },
  };
}

/** A GwPolicy that turns the Gateway's access log off. */
export const noAccessLog = {
  apiVersion: 'gw.dev/v1alpha1',
  kind: 'GwPolicy',
  metadata: { name: 'no-access-log' },
  spec: {
    targetRefs: [{ group: 'gateway.networking.k8s.io', kind: 'Gateway', name: 'bench' }],
    frontend: { accessLog: { filter: 'false' } },
  },
};

/** The resources, in apply order. */
function gwBenchResources(input: GwBenchConfigInput): Record<string, unknown>[] {
  const backend = (name: string, port: number, auth: Record<string, unknown>, ai?: Record<string, unknown>) => ({
    apiVersion: 'gw.dev/v1alpha1',
    kind: 'GwBackend',
    metadata: { name },
    spec: {
      ai: {
        provider: { [input.family]: familyConfig(input.family), host: '127.0.0.1', port },
      },
      policies: ai === undefined ? { auth } : { auth, ai },
    },
  });
  const regex = { action: 'Reject', builtins: ALL_BUILTINS };
  const loadGuard = input.guarded ? { promptGuard: { request: [{ regex }] } } : undefined;
  const streamGuard = input.guarded ? { promptGuard: { streaming: 'Enabled', response: [{ regex }] } } : undefined;
  // The streaming mock checks for an OpenAI key: a SigV4 signature would be refused there, and the
  // first-byte figure is about streaming, not signing. The load backend carries the auth measured.
  const streamAuth =
    input.auth === 'sigv4' && input.family !== 'zeta' ? { key: BENCH_BACKEND_KEY } : backendAuth(input);
  const route = (name: string, sectionName: string, backendName: string) => ({
    apiVersion: 'gateway.networking.k8s.io/v1',
    kind: 'HTTPRoute',
    metadata: { name },
    spec: {
      parentRefs: [{ name: 'bench', sectionName }],
      rules: [
        {
          matches: [{ path: { type: 'PathPrefix', value: '/v1' } }],
          backendRefs: [{ group: 'gw.dev', kind: 'GwBackend', name: backendName }],
        },
      ],
    },
  });
  return [
    gatewayClass,
    gateway([
      { name: 'load', port: input.loadPort },
      { name: 'stream', port: input.streamPort },
    ]),
    backend('upstream', input.loadUpstreamPort, backendAuth(input), loadGuard),
    backend('upstream-stream', input.streamUpstreamPort, streamAuth, streamGuard),
    route('load', 'load', 'upstream'),
    route('stream', 'stream', 'upstream-stream'),
    ...(input.accessLog ? [] : [noAccessLog]),
    ...(input.auth === 'sigv4' || input.family === 'zeta' ? [awsKeysSecret] : []),
  ];
}

/** Writes the resources as one YAML file into `dir` (created when missing); returns the file. */
export function writeResources(dir: string, resources: Record<string, unknown>[]): string {
  mkdirSync(dir, { recursive: true });
  const file = join(dir, 'bench.yaml');
  writeFileSync(file, resources.map((resource) => stringify(resource)).join('---\n'));
  return file;
}

/** Writes the configuration as one YAML file into `dir` (created when missing); returns the file. */
export function writeGwBenchConfig(dir: string, input: GwBenchConfigInput): string {
  return writeResources(dir, gwBenchResources(input));
}

/**
 * The configuration of bench/scaling.bench.ts: one Gateway, one HTTP listener, every request to a
 * static GwBackend (plain HTTP proxying to the mock's fixed answer). Written like writeGwBenchConfig.
 */
export function writeStaticBenchConfig(
  dir: string,
  input: { listenerPort: number; upstreamPort: number; accessLog: boolean },
): string {
  return writeResources(dir, [
    gatewayClass,
    gateway([{ name: 'http', port: input.listenerPort }]),
    {
      apiVersion: 'gw.dev/v1alpha1',
      kind: 'GwBackend',
      metadata: { name: 'upstream' },
      spec: { static: { host: '127.0.0.1', port: input.upstreamPort } },
    },
    {
      apiVersion: 'gateway.networking.k8s.io/v1',
      kind: 'HTTPRoute',
      metadata: { name: 'static' },
      spec: {
        parentRefs: [{ name: 'bench' }],
        rules: [{ backendRefs: [{ group: 'gw.dev', kind: 'GwBackend', name: 'upstream' }] }],
      },
    },
    ...(input.accessLog ? [] : [noAccessLog]),
  ]);
}

/**
 * The configuration of bench/tunnel.bench.ts: one Gateway, one HTTP listener, the OpenAI mock at
 * `upstreamPort` as two AI GwBackends — `direct`, and `tunnelled` through the CONNECT proxy at
 * `proxyPort` (a backend policy's tunnel) — at /direct and /tunnelled, and the A2A agent at
 * `agentPort` as an a2a GwBackend at /agent. Written like writeGwBenchConfig.
 */
export function writeTunnelBenchConfig(
  dir: string,
  input: { listenerPort: number; upstreamPort: number; proxyPort: number; agentPort: number },
): string {
  const backend = (name: string, tunnel?: Record<string, unknown>) => ({
    apiVersion: 'gw.dev/v1alpha1',
    kind: 'GwBackend',
    metadata: { name },
    spec: {
      ai: { provider: { alpha: {}, host: '127.0.0.1', port: input.upstreamPort } },
      policies: { auth: { key: BENCH_BACKEND_KEY }, ...(tunnel ? { tunnel } : {}) },
    },
  });
  const rule = (name: string) => ({
    matches: [{ path: { type: 'PathPrefix', value: `/${name}` } }],
    filters: [{ type: 'URLRewrite', urlRewrite: { path: { type: 'ReplacePrefixMatch', replacePrefixMatch: '/' } } }],
    backendRefs: [{ group: 'gw.dev', kind: 'GwBackend', name }],
  });
  return writeResources(dir, [
    gatewayClass,
    gateway([{ name: 'http', port: input.listenerPort }]),
    backend('direct'),
    backend('tunnelled', { url: `http://127.0.0.1:${input.proxyPort}` }),
    {
      apiVersion: 'gw.dev/v1alpha1',
      kind: 'GwBackend',
      metadata: { name: 'agent' },
      spec: { a2a: { host: '127.0.0.1', port: input.agentPort } },
    },
    {
      apiVersion: 'gateway.networking.k8s.io/v1',
      kind: 'HTTPRoute',
      metadata: { name: 'llm' },
      spec: { parentRefs: [{ name: 'bench' }], rules: [rule('direct'), rule('tunnelled'), rule('agent')] },
    },
    noAccessLog,
  ]);
}
