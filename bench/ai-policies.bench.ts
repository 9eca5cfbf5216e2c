// Benchmark: the AI request policy on a typical chat request. A Chat Completions body of about
// 2 KiB (a system prompt, eight turns, two tools) through a policy with three transformations
// (one reading a request header), and the same with aliases, prompt enrichment, defaults and
// overrides added. Goal: three transformations in under 50 µs per request.
// Run: ./node_modules/.bin/node bench/ai-policies.bench.ts
import { type CompiledAiRequestPolicy, compileAiRequestPolicy } from '../src/dataplane/ai/policies/index.ts';

const GOAL_MICROS = 50;

const turns = [
  'Can you summarise the main differences between TCP and UDP for a networking class?',
  'TCP is connection-oriented and reliable: it orders bytes, retransmits losses and controls congestion. UDP sends independent datagrams with no delivery guarantee, which keeps latency low.',
  'Which one would you pick for a multiplayer game, and why? Please mention head-of-line blocking.',
  'Usually UDP, with reliability added only where needed: one lost TCP segment stalls every later byte (head-of-line blocking), which shows up as stutter in real-time state updates.',
  'And for a file transfer service where integrity matters more than latency?',
  'TCP, or QUIC if you want multiplexed streams without head-of-line blocking across files.',
  'Could you draw the QUIC handshake for me, compared with TCP plus TLS 1.3?',
  'Sure: QUIC folds the transport and TLS handshakes into one round trip (zero on resumption).',
];
const body = {
  model: 'fast',
  stream: true,
  max_tokens: 4096,
  temperature: 0.7,
  messages: [
    {
      role: 'system',
      content:
        'You are a patient networking tutor for second-year students. Answer precisely, prefer short ' +
        'paragraphs over bullet lists, cite RFCs when relevant, and say so when a question depends on ' +
        'details of an implementation rather than on the protocol itself. Offer one follow-up exercise.',
    },
    ...turns.map((content, i) => ({ role: i % 2 === 0 ? 'user' : 'assistant', content })),
  ],
  tools: [
    {
      type: 'function',
      function: {
        name: 'lookup_rfc',
        description: 'Fetch the abstract of an RFC by number.',
        parameters: { type: 'object', properties: { number: { type: 'integer' } }, required: ['number'] },
      },
    },
    {
      type: 'function',
      function: {
        name: 'draw_diagram',
        description: 'Render a sequence diagram of a protocol exchange.',
        parameters: {
          type: 'object',
          properties: { protocol: { type: 'string' }, steps: { type: 'array', items: { type: 'string' } } },
          required: ['protocol'],
        },
      },
    },
  ],
};

const variables = {
  request: {
    method: 'POST',
    path: '/v1/chat/completions',
    headers: { 'content-type': 'application/json', 'x-tenant': 'gold', authorization: 'Bearer x' },
  },
};

const transformations = [
  { field: 'max_tokens', expression: 'llmRequest.max_tokens > 1024 ? 1024 : llmRequest.max_tokens' },
  { field: 'user', expression: 'request.headers["x-tenant"]' },
  { field: 'metadata', expression: '{"turns": string(llmRequest.messages.size()), "model": llmRequest.model}' },
];

function compile(ai: Parameters<typeof compileAiRequestPolicy>[0]): CompiledAiRequestPolicy {
  const compiled = compileAiRequestPolicy(ai);
  if (Array.isArray(compiled)) throw new Error(JSON.stringify(compiled));
  return compiled;
}

const scenarios: [string, CompiledAiRequestPolicy][] = [
  ['no policy', compile(undefined)],
  ['3 transformations', compile({ transformations })],
  [
    'aliases + prompt + defaults + overrides + 3 transformations',
    compile({
      modelAliases: { fast: 'gpt-4o-mini', 'gpt-*': 'gpt-4o' },
      prompt: { prepend: [{ role: 'system', content: 'Company policy applies.' }] },
      defaults: [{ field: 'top_p', value: 0.9 }],
      overrides: [{ field: 'temperature', value: 0.2 }],
      transformations,
    }),
  ],
];

function measure(policy: CompiledAiRequestPolicy): number {
  const run = (n: number) => {
    for (let i = 0; i < n; i++) {
      const { warnings } = policy.applyToRequest(body, 'completions', 'Completions', variables);
      if (warnings) throw new Error(JSON.stringify(warnings));
    }
  };
  run(5_000); // warm up the JIT
  const iterations = 50_000;
  let best = Number.POSITIVE_INFINITY;
  for (let round = 0; round < 5; round++) {
    const start = process.hrtime.bigint();
    run(iterations);
    best = Math.min(best, Number(process.hrtime.bigint() - start) / iterations / 1000);
  }
  return best;
}

const sample = scenarios[1][1].applyToRequest(body, 'completions', 'Completions', variables).body;
console.log(
  '3 transformations give:',
  JSON.stringify({ max_tokens: sample.max_tokens, user: sample.user, metadata: sample.metadata }),
);
console.log(`body: ${JSON.stringify(body).length} bytes of JSON; goal: 3 transformations < ${GOAL_MICROS} µs`);
let failed = false;
for (const [name, policy] of scenarios) {
  const micros = measure(policy);
  const verdict = name === '3 transformations' ? (micros < GOAL_MICROS ? ' (goal met)' : ' (GOAL MISSED)') : '';
  if (verdict.includes('MISSED')) failed = true;
  console.log(`${name.padEnd(60)} ${micros.toFixed(2).padStart(8)} µs/request${verdict}`);
}
process.exitCode = failed ? 1 : 0;
