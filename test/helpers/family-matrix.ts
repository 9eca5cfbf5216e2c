// The family matrix: one gw in front of one scripted stand-in (test/helpers/scripted-provider.ts)
// for every provider family gw serves — each GwBackend family (Claude deployments and models
// included where a family routes them apart), custom (Chat Completions, Responses-only, and a
// Service backendRef) and the GwModel providers of the named OpenAI-compatible services — and the
// requests of each client format (Chat Completions, Messages, Responses, Gemini
// generateContent), whole or streamed, read back without an SDK so that every field of the
// answers can be checked. Shared by family-matrix-usage.test.ts and family-matrix-errors.test.ts.
import assert from 'node:assert/strict';
import { authBackendYaml, type TestGateway } from './gateway.ts';
import { answeringModel, type WireFormat } from './scripted-provider.ts';
import { until } from './until.ts';

export type ClientFormat = 'completions' | 'messages' | 'responses' | 'gemini';
export const CLIENT_FORMATS: readonly ClientFormat[] = ['completions', 'messages', 'responses', 'gemini'];

export interface Target {
  /** The row's name, and the path prefix gw serves it at (GwModels: /models). */
  name: string;
  prefix: string;
  /** gen_ai.provider.name */
  vendor: string;
  /** The model the client asks for. */
  model: string;
  /** The model the provider is sent (and, dated, answers with). */
  upstreamModel: string;
  /** The format the provider speaks for a client format. */
  wire: (client: ClientFormat) => WireFormat;
  /**
   * Its configuration (documents ending with ---), given the stand-in's port; a GwModel is
   * attached to HTTPRoute llm's rule models and to the rules named `sections`.
   */
  yaml: (port: number, sections?: readonly string[]) => string;
}

export const KEY = 'sk-matrix-upstream';
const AWS = { accessKeyId: 'AKIDMATRIX', secretAccessKey: 'matrix/secret' };

const same = (format: WireFormat) => () => format;
/** OpenAI's and Azure's APIs: Responses clients passed through, the rest to Chat Completions. */
const openAiWire = (client: ClientFormat): WireFormat => (client === 'responses' ? 'responses' : 'completions');

/** GwBackend `name` with `provider` (a flow-mapping entry of ai.provider) at the stand-in, with gw's key. */
function backend(name: string, provider: string) {
  return (port: number) => `apiVersion: gw.dev/v1alpha1
kind: GwBackend
metadata: {name: ${name}}
spec:
  ai: {provider: {host: 127.0.0.1, port: ${port}, ${provider}}}
  policies:
    auth: {key: ${KEY}}
---
`;
}

/**
 * GwModel `name` of `provider`, on HTTPRoute models' rule (and the rules named `sections`): at
 * the stand-in under `base` (undefined: no baseURL), with `settings` (spec lines) and gw's key
 * or `auth`.
 */
function gwModel(name: string, provider: string, base: string | undefined, settings = '', auth = `{key: ${KEY}}`) {
  return (port: number, sections: readonly string[] = []) => `apiVersion: gw.dev/v1alpha1
kind: GwModel
metadata: {name: ${name}}
spec:
  parentRefs: [${['models', ...sections].map((section) => `{group: gateway.networking.k8s.io, kind: HTTPRoute, name: ${section}, sectionName: ${section}}`).join(', ')}]
  provider: ${provider}
${base === undefined ? '' : `  baseURL: http://127.0.0.1:${port}${base}\n`}${settings}  policies: {auth: ${auth}}
---
`;
}

/** A GwModel row: served at /models, the model its name. */
function modelRow(name: string, vendor: string, wire: Target['wire'], yaml: Target['yaml']): Target {
  return { name: `model-${name}`, prefix: '/models', vendor, model: name, upstreamModel: name, wire, yaml };
}

const SERVICES = [
  ['Provider07', 'cohere', 'cohere', '/compatibility/v1'],
  ['Provider08', 'ollama', 'ollama', '/v1'],
  ['Provider09', 'baseten', 'baseten', '/v1'],
  ['Provider10', 'cerebras', 'cerebras', '/v1'],
  ['Provider11', 'deepinfra', 'deepinfra', '/v1/openai'],
  ['Provider12', 'deepseek', 'deepseek', '/v1'],
  ['Provider13', 'groq', 'groq', '/openai/v1'],
  ['Provider14', 'huggingface', 'hugging_face', '/v1'],
  ['Provider15', 'mistral', 'mistral_ai', '/v1'],
  ['Provider16', 'openrouter', 'openrouter', '/api/v1'],
  ['Provider17', 'together', 'together_ai', '/v1'],
  ['Provider18', 'xai', 'x_ai', '/v1'],
  ['Provider19', 'fireworks', 'fireworks_ai', '/inference/v1'],
] as const;

export const TARGETS: readonly Target[] = [
  {
    name: 'alpha',
    vendor: 'openai',
    model: 'gpt-4o-mini',
    wire: openAiWire,
    yaml: backend('alpha', 'alpha: {}'),
  },
  {
    name: 'betaalpha',
    vendor: 'azure.ai.openai',
    model: 'gpt-4o-deployment',
    wire: openAiWire,
    yaml: backend(
      'betaalpha',
      'betaalpha: {endpoint: my-resource.openai.azure.com, deploymentName: gpt-4o-deployment, apiVersion: "2024-10-21"}',
    ),
  },
  {
    name: 'beta-alpha',
    vendor: 'azure.ai.inference',
    model: 'gpt-4o-deployment',
    wire: openAiWire,
    yaml: backend(
      'beta-alpha',
      'beta: {resourceName: contoso, resourceType: Alpha, apiVersion: "2024-10-21", model: gpt-4o-deployment}',
    ),
  },
  {
    name: 'beta-omega',
    vendor: 'azure.ai.inference',
    model: 'gpt-4.1',
    wire: openAiWire,
    yaml: backend('beta-omega', 'beta: {resourceName: contoso, resourceType: Omega, projectName: chat-app}'),
  },
  {
    name: 'beta-claude',
    vendor: 'azure.ai.inference',
    model: 'claude-sonnet-4-5',
    wire: same('messages'),
    yaml: backend('beta-claude', 'beta: {resourceName: contoso, resourceType: Omega, projectName: chat-app}'),
  },
  {
    name: 'gamma',
    vendor: 'anthropic',
    model: 'claude-sonnet-4-5',
    wire: same('messages'),
    yaml: backend('gamma', 'gamma: {}'),
  },
  {
    name: 'delta',
    vendor: 'gcp.gemini',
    model: 'gemini-2.5-flash',
    wire: same('gemini'),
    yaml: backend('delta', 'delta: {}'),
  },
  {
    name: 'epsilon',
    vendor: 'gcp.vertex_ai',
    model: 'gemini-2.5-flash',
    wire: same('gemini'),
    yaml: backend('epsilon', 'epsilon: {projectId: my-project, region: us-central1}'),
  },
  {
    name: 'epsilon-claude',
    vendor: 'gcp.vertex_ai',
    model: 'claude-sonnet-4-5@20250929',
    wire: same('messages'),
    yaml: backend('epsilon-claude', 'epsilon: {projectId: my-project, region: us-central1}'),
  },
  {
    name: 'zeta',
    vendor: 'aws.bedrock',
    model: 'anthropic.claude-3-haiku-20240307-v1:0',
    wire: same('converse'),
    yaml: (port: number) =>
      `apiVersion: v1
kind: Secret
metadata: {name: aws}
stringData: {accessKey: ${AWS.accessKeyId}, secretKey: "${AWS.secretAccessKey}"}
---
${authBackendYaml('zeta', `ai: {provider: {host: 127.0.0.1, port: ${port}, zeta: {region: us-east-1}}}`, '{cloudone: {secretRef: {name: aws}}}')}`,
  },
  {
    name: 'custom',
    vendor: 'custom',
    model: 'local-llama',
    wire: same('completions'),
    yaml: backend('custom', 'custom: {formats: [{type: Completions}]}'),
  },
  {
    name: 'custom-responses',
    vendor: 'custom',
    model: 'local-reasoner',
    wire: same('responses'),
    yaml: backend('custom-responses', 'custom: {formats: [{type: Responses}]}'),
  },
  {
    name: 'custom-service',
    vendor: 'custom',
    model: 'served-llama',
    wire: same('completions'),
    yaml: (port: number) => `apiVersion: v1
kind: Service
metadata: {name: llm}
spec: {clusterIP: 127.0.0.1, ports: [{name: http, port: ${port}}]}
---
apiVersion: gw.dev/v1alpha1
kind: GwBackend
metadata: {name: custom-service}
spec:
  ai: {provider: {custom: {backendRef: {name: llm, port: ${port}}, formats: [{type: Completions}]}}}
  policies:
    auth: {key: ${KEY}}
---
`,
  },
  modelRow('gpt-model', 'openai', openAiWire, gwModel('gpt-model', 'Alpha', '/v1')),
  modelRow('claude-model', 'anthropic', same('messages'), gwModel('claude-model', 'Gamma', '')),
  modelRow('gemini-model', 'gcp.gemini', same('gemini'), gwModel('gemini-model', 'Delta', '')),
  modelRow(
    'vertex-model',
    'gcp.vertex_ai',
    same('gemini'),
    gwModel('vertex-model', 'Epsilon', '', '  epsilon: {projectId: my-project, region: us-central1}\n'),
  ),
  modelRow(
    'bedrock-model',
    'aws.bedrock',
    same('converse'),
    gwModel('bedrock-model', 'Zeta', '', '  zeta: {region: us-east-1}\n', '{cloudone: {secretRef: {name: aws}}}'),
  ),
  modelRow(
    'foundry-model',
    'azure.ai.inference',
    openAiWire,
    gwModel(
      'foundry-model',
      'Beta',
      '',
      '  beta: {resourceName: contoso, resourceType: Omega, projectName: chat-app}\n',
    ),
  ),
  modelRow('custom-model', 'custom', same('completions'), (port, sections) =>
    gwModel(
      'custom-model',
      'Custom',
      undefined,
      `  custom: {backendRef: {name: llm, port: ${port}}, formats: [{type: Completions}]}\n`,
    )(port, sections),
  ),
  ...SERVICES.map(([provider, name, vendor, base]) =>
    modelRow(name, vendor, same('completions'), gwModel(name, provider, base)),
  ),
].map((target) => ({ prefix: `/${target.name}`, upstreamModel: target.model, ...target }));

/**
 * An HTTPRoute of its own (an HTTPRoute has at most 16 rules) with one rule, both named `name`,
 * serving `target` at `prefix`; a GwModel's serves every GwModel attached to it.
 */
export interface MatrixRule {
  name: string;
  prefix: string;
  target: Target;
}

/** The rule serving each target at its prefix; every GwModel is served by rule models at /models. */
export const TARGET_RULES: readonly MatrixRule[] = [
  ...TARGETS.filter((target) => target.prefix !== '/models').map((target) => ({
    name: target.name,
    prefix: target.prefix,
    target,
  })),
  { name: 'models', prefix: '/models', target: TARGETS.find((target) => target.prefix === '/models')! },
];

/** The HTTPRoutes of `rules`: a GwBackend's prefix is stripped, a GwModel's request is read whole. */
export function matrixRoutesYaml(rules: readonly MatrixRule[]): string {
  return rules
    .map(({ name, prefix, target }) => {
      const serves =
        target.prefix === '/models'
          ? "backendRefs: [{group: gw.dev, kind: GwModel, name: '*'}]"
          : `filters: [{type: URLRewrite, urlRewrite: {path: {type: ReplacePrefixMatch, replacePrefixMatch: /}}}]
      backendRefs: [{group: gw.dev, kind: GwBackend, name: ${target.name}}]`;
      return `apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: ${name}}
spec:
  parentRefs: [{name: ai}]
  rules:
    - name: ${name}
      matches: [{path: {type: PathPrefix, value: ${prefix}}}]
      ${serves}
---
`;
    })
    .join('');
}

/** The request a client of `format` sends (path under gw's prefix, and body). */
export function clientRequest(
  format: ClientFormat,
  model: string,
  stream: boolean,
): { path: string; body: Record<string, unknown> } {
  const prompt = 'hello there';
  switch (format) {
    case 'completions':
      return {
        path: '/v1/chat/completions',
        body: {
          model,
          messages: [{ role: 'user', content: prompt }],
          ...(stream ? { stream: true, stream_options: { include_usage: true } } : {}),
        },
      };
    case 'messages':
      return {
        path: '/v1/messages',
        body: { model, max_tokens: 64, messages: [{ role: 'user', content: prompt }], ...(stream ? { stream } : {}) },
      };
    case 'responses':
      return { path: '/v1/responses', body: { model, input: prompt, ...(stream ? { stream } : {}) } };
    case 'gemini':
      return {
        path: `/v1beta/models/${encodeURIComponent(model)}:${stream ? 'streamGenerateContent?alt=sse' : 'generateContent'}`,
        body: { contents: [{ role: 'user', parts: [{ text: prompt }] }] },
      };
  }
}

/** The path gw logs for a request (no query). */
export function loggedPath(target: Target, format: ClientFormat, stream: boolean): string {
  return `${target.prefix}${clientRequest(format, target.model, stream).path.split('?')[0]}`;
}

/** Sends the request of `format` for `target` to gw, under `prefix` (default: the target's). */
export function send(
  base: string,
  target: Target,
  format: ClientFormat,
  stream: boolean,
  prefix = target.prefix,
): Promise<Response> {
  const { path, body } = clientRequest(format, target.model, stream);
  return fetch(`${base}${prefix}${path}`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      authorization: 'Bearer client-token',
      'anthropic-version': '2023-06-01',
    },
    body: JSON.stringify(body),
  });
}

/** The access log line of the next request to `path` finished after `from` lines. */
export async function logLineAfter(gw: TestGateway, from: number, path: string): Promise<Record<string, unknown>> {
  const find = () =>
    gw.accessLog
      .slice(from)
      .map((line) => JSON.parse(line) as Record<string, unknown>)
      .find((entry) => entry['url.path'] === path);
  assert.ok(await until(() => find() !== undefined, 2000), `no access log line for ${path}`);
  return find()!;
}

export interface SseEvent {
  event: string | undefined;
  data: string;
}

/** The events of an SSE body. */
export function sseEvents(text: string): SseEvent[] {
  return text
    .split(/\r?\n\r?\n/)
    .filter((block) => block.trim() !== '')
    .map((block) => {
      let event: string | undefined;
      const data: string[] = [];
      for (const line of block.split(/\r?\n/)) {
        if (line.startsWith('event:')) event = line.slice(6).trim();
        else if (line.startsWith('data:')) data.push(line.slice(5).replace(/^ /, ''));
      }
      return { event, data: data.join('\n') };
    });
}

export { answeringModel };
