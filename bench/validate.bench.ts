// Benchmark: admission of 10,000 mixed valid resources (goal: at most 1 s on the project's
// 2-core machine, CEL programs compiled once), and the two CEL engines side by side on the
// kind of rules admission evaluates. Run: npm run bench
import * as bufbuild from '@bufbuild/cel';
import { Environment } from '@marcbachmann/cel-js';
import { admit } from '../src/api/validate/admission.ts';

function resource(i: number): unknown {
  const namespace = `team-${i % 20}`;
  switch (i % 8) {
    case 0:
      return {
        apiVersion: 'gw.dev/v1alpha1',
        kind: 'GwBackend',
        metadata: { name: `llm-${i}`, namespace },
        spec: {
          ai: {
            groups: [
              {
                providers: [
                  { name: 'primary', alpha: { model: 'gpt-4o' } },
                  { name: 'secondary', gamma: { model: 'claude' } },
                ],
              },
              { providers: [{ name: 'fallback', alpha: {}, host: 'llm.internal', port: 8443 }] },
            ],
          },
          policies: {
            auth: { secretRef: { name: 'provider-key' } },
            tls: { sni: 'llm.internal' },
            health: { eviction: { consecutiveFailures: 3 } },
          },
        },
      };
    case 1:
      return {
        apiVersion: 'gw.dev/v1alpha1',
        kind: 'GwPolicy',
        metadata: { name: `auth-${i}`, namespace },
        spec: {
          targetRefs: [{ group: 'gateway.networking.k8s.io', kind: 'HTTPRoute', name: `route-${i}` }],
          traffic: {
            jwtAuthentication: {
              providers: [
                {
                  issuer: 'https://idp.example.com',
                  audiences: ['gw'],
                  jwks: { remote: { url: 'https://idp.example.com/jwks' } },
                },
              ],
            },
            authorization: { policy: { matchExpressions: ['jwt.sub != ""'] } },
          },
        },
      };
    case 2:
      return {
        apiVersion: 'gw.dev/v1alpha1',
        kind: 'GwModel',
        metadata: { name: `model-${i}`, namespace },
        spec: { parentRefs: [{ name: 'ai' }], match: { model: 'gpt-*' }, provider: 'Alpha' },
      };
    case 3:
      return {
        apiVersion: 'gw.dev/v1alpha1',
        kind: 'GwBackend',
        metadata: { name: `mcp-${i}`, namespace },
        spec: {
          mcp: {
            targets: [
              { name: 'search', static: { host: 'search.internal', port: 3000, protocol: 'StreamableHTTP' } },
              { name: 'files', selector: { services: { matchLabels: { app: 'files' } } } },
            ],
          },
        },
      };
    case 4:
      return {
        apiVersion: 'gateway.networking.k8s.io/v1',
        kind: 'HTTPRoute',
        metadata: { name: `route-${i}`, namespace },
        spec: {
          parentRefs: [{ name: 'ai' }],
          rules: [
            {
              matches: [{ path: { type: 'PathPrefix', value: '/v1' } }],
              backendRefs: [{ group: 'gw.dev', kind: 'GwBackend', name: `llm-${i}` }],
            },
          ],
        },
      };
    case 5:
      return {
        apiVersion: 'gw.dev/v1alpha1',
        kind: 'GwPolicy',
        metadata: { name: `limits-${i}`, namespace },
        spec: {
          targetRefs: [{ group: 'gateway.networking.k8s.io', kind: 'Gateway', name: 'ai' }],
          traffic: { rateLimit: { local: [{ requests: 100, unit: 'Minutes' }] } },
        },
      };
    case 6:
      return {
        apiVersion: 'v1',
        kind: 'Service',
        metadata: { name: `svc-${i}`, namespace },
        spec: { selector: { app: 'mcp' }, ports: [{ name: 'http', port: 80, targetPort: 8080 }] },
      };
    default:
      return {
        apiVersion: 'gateway.networking.k8s.io/v1',
        kind: 'Gateway',
        metadata: { name: `gw-${i}`, namespace },
        spec: { gatewayClassName: 'gw', listeners: [{ name: 'http', protocol: 'HTTP', port: 8080 }] },
      };
  }
}

const COUNT = 10_000;
const inputs = Array.from({ length: COUNT }, (_, i) => resource(i));

function validateAll(): number {
  let invalid = 0;
  for (const input of inputs) {
    const result = admit(input);
    if (result.errors.length > 0) {
      invalid++;
      if (invalid === 1) console.error('unexpected error:', result.errors[0]);
    }
  }
  return invalid;
}

let started = performance.now();
const invalidCold = validateAll();
const cold = performance.now() - started;
const warmRuns: number[] = [];
for (let run = 0; run < 5; run++) {
  started = performance.now();
  validateAll();
  warmRuns.push(performance.now() - started);
}
warmRuns.sort((a, b) => a - b);
console.log(`admission of ${COUNT} mixed resources (${invalidCold} invalid):`);
console.log(`  first run (compiles CEL programs and regexes): ${cold.toFixed(0)} ms`);
console.log(
  `  median of 5 later runs: ${warmRuns[2]!.toFixed(0)} ms (${((warmRuns[2]! * 1000) / COUNT).toFixed(1)} µs per resource)`,
);
console.log(`  goal: at most 1000 ms — ${Math.max(cold, warmRuns[2]!) <= 1000 ? 'met' : 'MISSED'}`);

// The CEL engines on admission-style rules, each compiled once and evaluated many times.
const RULES = [
  '[has(self.a), has(self.b), has(self.c), has(self.d)].exists_one(x, x)',
  "self.targets.all(t, t.kind in ['Gateway', 'ListenerSet', 'HTTPRoute'] && (!has(t.port) || t.port <= 65535))",
  "!has(self.claims) || !self.claims.exists(k, k in ['iat', 'exp', 'nbf'])",
];
const SELF = {
  a: { x: 1n },
  targets: [{ kind: 'Gateway', port: 8080n }, { kind: 'HTTPRoute' }],
  claims: { sub: 'x', aud: 'gw' },
};
const EVALUATIONS = 200_000;

function time(label: string, evaluate: () => unknown): number {
  for (let i = 0; i < 10_000; i++) evaluate();
  const start = performance.now();
  for (let i = 0; i < EVALUATIONS; i++) evaluate();
  const nanos = ((performance.now() - start) * 1e6) / EVALUATIONS;
  console.log(`  ${label}: ${nanos.toFixed(0)} ns per evaluation`);
  return nanos;
}

console.log(`CEL engines, ${RULES.length} rules x ${EVALUATIONS} evaluations:`);
const celJs = new Environment({ homogeneousAggregateLiterals: false }).registerVariable('self', 'dyn');
const celJsPrograms = RULES.map((rule) => celJs.parse(rule));
const bufEnv = bufbuild.celEnv({ variables: { self: bufbuild.CelScalar.DYN } as never });
const bufPrograms = RULES.map((rule) => bufbuild.plan(bufEnv, bufbuild.parse(rule)));
for (const [index, rule] of RULES.entries()) {
  console.log(` ${rule}`);
  const a = time('@marcbachmann/cel-js', () => celJsPrograms[index]!({ self: SELF }));
  const b = time('@bufbuild/cel       ', () => (bufPrograms[index] as (ctx: unknown) => unknown)({ self: SELF }));
  console.log(`  ratio: cel-js is ${(b / a).toFixed(1)}x faster`);
}
