// The per-request cost of cloudone's SigV4 signer (src/dataplane/auth/backend/cloudone/sign.ts)
// with cached credentials: a Bedrock Converse POST (1 KiB JSON body) and a GET with a query,
// signed in a loop as the proxy signs them. Run: node bench/cloudone-signing.bench.ts

import { AuthConfigError } from '../src/dataplane/auth/backend/errors.ts';
import { compileBackendAuth } from '../src/dataplane/auth/backend/index.ts';

const data = (ref: string) =>
  ref === 'Secret bench/aws'
    ? {
        accessKey: 'AKIDEXAMPLE',
        secretKey: 'wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY',
        sessionToken: 'FwoGZXIvYXdzEBY',
      }
    : undefined;
const auth = compileBackendAuth(
  { cloudone: { secretRef: { name: 'aws' }, serviceName: 'bedrock', region: 'us-east-1' } },
  data,
  'bench',
);
if (auth instanceof AuthConfigError) throw auth;
const sign = auth.sign!;

const body = Buffer.from(
  JSON.stringify({
    messages: [{ role: 'user', content: [{ text: 'x'.repeat(1000) }] }],
    inferenceConfig: { maxTokens: 64 },
  }),
);
const cases = {
  'POST /model/…:0/converse, 1 KiB body': () => ({
    method: 'POST',
    origin: 'https://bedrock-runtime.us-east-1.amazonaws.com',
    path: '/model/us.anthropic.claude-3-5-sonnet-20241022-v2:0/converse',
    headers: {
      'content-type': 'application/json',
      'content-length': String(body.length),
      accept: 'application/json',
      'x-forwarded-for': '10.0.0.1',
      'user-agent': 'client/1.0',
    } as Record<string, string | string[]>,
    body,
  }),
  'GET with a query, no body': () => ({
    method: 'GET',
    origin: 'https://bedrock.us-east-1.amazonaws.com',
    path: '/foundation-models?byProvider=anthropic&byOutputModality=TEXT',
    headers: { accept: 'application/json' } as Record<string, string | string[]>,
    body: undefined,
  }),
};

const incoming = { headers: {} };
for (const [name, request] of Object.entries(cases)) {
  for (let i = 0; i < 2_000; i++) await sign(request(), incoming); // warm up
  const rounds = 20_000;
  // CPU time, not wall time: on a shared machine the wall clock counts other processes' turns.
  const start = process.cpuUsage();
  for (let i = 0; i < rounds; i++) await sign(request(), incoming);
  const used = process.cpuUsage(start);
  const micros = (used.user + used.system) / rounds;
  console.log(
    `${name}: ${micros.toFixed(1)} µs of CPU per request (${Math.round(1e6 / micros)} signatures/s per core)`,
  );
}
