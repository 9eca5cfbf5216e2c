// What the inbound policy chain costs per request (issue: inbound authentication, authorization
// and traffic policies). One gw process serves two routes to the same upstream (the fixed-answer
// OpenAI mock, as a plain static backend): /plain with no policy, /guarded with JWT (RS256,
// inline JWKS) + API key (x-api-key, Secret) + a CEL authorization over both + a local rate limit
// too high to trigger. The two are measured alternately in the same run, several rounds; the
// report gives medians and the difference: CPU per request of the gw process, requests/s, p50 at
// 64 connections and at a fixed 1,000 requests/s.
//
//   ./node_modules/.bin/node bench/policies.bench.ts [--rounds N] [--duration S]
import { generateKeyPairSync } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { exportJWK, SignJWT } from 'jose';
import { CHAT_BODY, CHAT_HEADERS } from './gateway/chat-request.ts';
import { freePort, stopAllChildren } from './gateway/child-process.ts';
import { gateway, gatewayClass, noAccessLog, writeResources } from './gateway/gw-config.ts';
import { runLoad } from './gateway/load.ts';
import { cpuMs } from './gateway/process-tree.ts';
import { startGw } from './gateway/targets/gw.ts';
import { startUpstream } from './gateway/upstream.ts';

const { values } = parseArgs({ options: { rounds: { type: 'string' }, duration: { type: 'string' } } });
const rounds = Number(values.rounds ?? 3);
const duration = Number(values.duration ?? 5);
const API_KEY = 'bench-key-7f3c2a9d41e8b6c05d2f';

const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
const jwk = { ...(await exportJWK(publicKey)), kid: 'bench', alg: 'RS256', use: 'sig' };
const token = await new SignJWT({ scope: 'chat' })
  .setProtectedHeader({ alg: 'RS256', kid: 'bench' })
  .setIssuer('https://issuer.bench')
  .setAudience('gw')
  .setSubject('bench-user')
  .setIssuedAt()
  .setExpirationTime('2h')
  .sign(privateKey);

/** The benchmark's resources: Gateway bench, the static mock backend, routes plain and guarded, the policies. */
function resources(port: number, upstreamPort: number): Record<string, unknown>[] {
  const route = (name: string) => ({
    apiVersion: 'gateway.networking.k8s.io/v1',
    kind: 'HTTPRoute',
    metadata: { name },
    spec: {
      parentRefs: [{ name: 'bench' }],
      rules: [
        {
          matches: [{ path: { type: 'PathPrefix', value: `/${name}` } }],
          filters: [
            { type: 'URLRewrite', urlRewrite: { path: { type: 'ReplacePrefixMatch', replacePrefixMatch: '/' } } },
          ],
          backendRefs: [{ group: 'gw.dev', kind: 'GwBackend', name: 'mock' }],
        },
      ],
    },
  });
  return [
    gatewayClass,
    gateway([{ name: 'http', port }]),
    {
      apiVersion: 'gw.dev/v1alpha1',
      kind: 'GwBackend',
      metadata: { name: 'mock' },
      spec: { static: { host: '127.0.0.1', port: upstreamPort } },
    },
    route('plain'),
    route('guarded'),
    {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: 'bench-keys' },
      stringData: { 'client-a': JSON.stringify({ key: API_KEY, metadata: { tier: 'gold' } }) },
    },
    noAccessLog,
    {
      apiVersion: 'gw.dev/v1alpha1',
      kind: 'GwPolicy',
      metadata: { name: 'guarded' },
      spec: {
        targetRefs: [{ group: 'gateway.networking.k8s.io', kind: 'HTTPRoute', name: 'guarded' }],
        traffic: {
          jwtAuthentication: {
            providers: [
              { issuer: 'https://issuer.bench', audiences: ['gw'], jwks: { inline: JSON.stringify({ keys: [jwk] }) } },
            ],
          },
          apiKeyAuthentication: { secretRef: { name: 'bench-keys' }, location: { header: { name: 'x-api-key' } } },
          authorization: { policy: { matchExpressions: ['jwt.sub == "bench-user"', 'apiKey.tier == "gold"'] } },
          rateLimit: { local: [{ requests: 1000000000, unit: 'Seconds' }] },
        },
      },
    },
  ];
}

interface Sample {
  rps: number;
  p50Ms: number;
  cpuUsPerRequest: number;
  rateP50Ms: number;
  /** One connection, one request at a time: the round trip with nothing queued. */
  serialP50Ms: number;
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
}

const upstream = await startUpstream();
const dir = mkdtempSync(join(tmpdir(), 'gw-bench-policies-'));
const port = await freePort();
writeResources(dir, resources(port, upstream.ports.openaiFixed));
const gw = await startGw(dir, `http://127.0.0.1:${port}`);
try {
  const endpoints = {
    plain: { url: `http://127.0.0.1:${port}/plain/v1/chat/completions`, headers: CHAT_HEADERS, body: CHAT_BODY },
    guarded: {
      url: `http://127.0.0.1:${port}/guarded/v1/chat/completions`,
      headers: { ...CHAT_HEADERS, authorization: `Bearer ${token}`, 'x-api-key': API_KEY },
      body: CHAT_BODY,
    },
  };
  // Both answer 200 before anything is measured (a policy that rejects would measure nothing).
  for (const [name, endpoint] of Object.entries(endpoints)) {
    const response = await fetch(endpoint.url, { method: 'POST', headers: endpoint.headers, body: endpoint.body });
    const text = await response.text();
    if (response.status !== 200) throw new Error(`${name} answered ${response.status}: ${text.slice(0, 200)}`);
  }
  const samples: Record<'plain' | 'guarded', Sample[]> = { plain: [], guarded: [] };
  for (const name of ['plain', 'guarded'] as const)
    await runLoad({ kind: 'saturate', endpoint: endpoints[name], connections: 64, durationSeconds: 2 });
  for (let round = 0; round < rounds; round++) {
    for (const name of ['plain', 'guarded'] as const) {
      const cpuBefore = cpuMs([gw.pid]);
      const saturate = await runLoad({
        kind: 'saturate',
        endpoint: endpoints[name],
        connections: 64,
        durationSeconds: duration,
      });
      const cpuUsed = cpuMs([gw.pid]) - cpuBefore;
      if (saturate.non2xx > 0 || saturate.errors > 0)
        throw new Error(`${name}: ${saturate.non2xx} non-2xx answers, ${saturate.errors} errors`);
      const rate = await runLoad({
        kind: 'rate',
        endpoint: endpoints[name],
        connections: 16,
        rate: 1000,
        warmupSeconds: 1,
        durationSeconds: 3,
      });
      const serial = await runLoad({ kind: 'saturate', endpoint: endpoints[name], connections: 1, durationSeconds: 3 });
      samples[name].push({
        rps: saturate.requestsPerSecond,
        p50Ms: saturate.p50Ms,
        cpuUsPerRequest: (cpuUsed * 1000) / saturate.ok,
        rateP50Ms: rate.p50Ms,
        serialP50Ms: serial.p50Ms,
      });
      process.stderr.write(
        `round ${round + 1} ${name}: ${Math.round(saturate.requestsPerSecond)} req/s, ${((cpuUsed * 1000) / saturate.ok).toFixed(1)} µs CPU/req\n`,
      );
    }
  }
  const summary = (name: 'plain' | 'guarded') => ({
    rps: median(samples[name].map((s) => s.rps)),
    p50Ms: median(samples[name].map((s) => s.p50Ms)),
    cpu: median(samples[name].map((s) => s.cpuUsPerRequest)),
    rateP50Ms: median(samples[name].map((s) => s.rateP50Ms)),
    serialP50Ms: median(samples[name].map((s) => s.serialP50Ms)),
  });
  const plain = summary('plain');
  const guarded = summary('guarded');
  const row = (label: string, s: ReturnType<typeof summary>) =>
    `| ${label} | ${Math.round(s.rps).toLocaleString('en-US')} | ${s.cpu.toFixed(1)} µs | ${s.p50Ms.toFixed(2)} ms | ${s.rateP50Ms.toFixed(3)} ms | ${s.serialP50Ms.toFixed(3)} ms |`;
  const addedCpu = guarded.cpu - plain.cpu;
  const addedRateP50Us = (guarded.rateP50Ms - plain.rateP50Ms) * 1000;
  const addedSerialP50Us = (guarded.serialP50Ms - plain.serialP50Ms) * 1000;
  console.log(
    `Policy chain cost, ${rounds} rounds of ${duration} s per route, medians (gw 1 process, 64 connections)\n`,
  );
  console.log(
    '| route | requests/s | gw CPU per request | p50 (64 conn.) | p50 at 1,000/s | p50, one request at a time |',
  );
  console.log('|---|---|---|---|---|---|');
  console.log(row('no policies', plain));
  console.log(row('JWT + API key + authorization + local rate limit', guarded));
  console.log(
    `\nadded per request: ${addedCpu.toFixed(1)} µs of CPU, ${addedSerialP50Us.toFixed(0)} µs of p50 one request at a time, ` +
      `${addedRateP50Us.toFixed(0)} µs of p50 at 1,000/s; ` +
      `throughput ratio ${(guarded.rps / plain.rps).toFixed(2)}x (goal: at most 50 µs added)`,
  );
} finally {
  await gw.stop();
  await upstream.stop();
  await stopAllChildren();
  rmSync(dir, { recursive: true, force: true });
}
