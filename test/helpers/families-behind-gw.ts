// The five provider stand-ins the family tests use — the OpenAI mock (alpha), the Anthropic mock
// (gamma), the Bedrock Converse stand-in (zeta, SigV4 checked), the Gemini stand-in (delta) and
// the Azure stand-in serving an Azure AI Foundry project's v1 API (beta, resourceType Omega) —
// each on loopback, with one gw in front of them all: GwBackend <family> at /<family>/ (default
// routes, so /v1/chat/completions, /v1/messages, /v1/responses and the Gemini API's
// :generateContent and :streamGenerateContent are served). Shared by the client-library suites
// (test/dataplane/clients/): they drive every client format into every provider format through
// gw, and point the providers' own SDKs at the stand-ins directly.
//
// What each stand-in answers (the expectations below say so for a test):
// - text: "echo: <prompt>" from alpha, gamma, delta and beta; "Hello from <model>" from zeta;
// - a tool call of get_weather when the prompt is TOOL_PROMPT and the tool is offered, with
//   arguments {city: "example"} from alpha, gamma and beta (the mocks fill each string property
//   with "example"), {city: "Paris"} from zeta and delta.

import { after, before } from 'node:test';
import { startAnthropicMock } from '../support/providers/anthropic-mock.ts';
import { startAzureOpenAiMock } from '../support/providers/azure-openai-mock.ts';
import { type GeminiMock, startGeminiMock } from '../support/providers/gemini-mock.ts';
import type { MockServer } from '../support/providers/mock-server.ts';
import { startOpenAiMock } from '../support/providers/openai-mock.ts';
import { type BedrockStandIn, startBedrockStandIn } from './bedrock-stand-in.ts';
import {
  aiBackendYaml,
  authBackendYaml,
  freePort,
  gatewayYaml,
  llmRouteYaml,
  startTestGateway,
  type TestGateway,
} from './gateway.ts';

export type Family = 'alpha' | 'gamma' | 'zeta' | 'delta' | 'beta';
export const FAMILIES: readonly Family[] = ['alpha', 'gamma', 'zeta', 'delta', 'beta'];

export const KEYS = {
  openai: 'sk-openai-upstream',
  anthropic: 'sk-ant-upstream',
  gemini: 'AIza-upstream',
  aws: { accessKeyId: 'AKIDCLIENTSUITE', secretAccessKey: 'client/suite+secret' },
  azure: 'azure-foundry-upstream',
} as const;

/** The Azure AI Foundry project (family beta, resourceType Omega) of the Azure stand-in. */
const FOUNDRY_PROJECT = 'client-suite';

/** The model each family is asked for (zeta's id as Bedrock names it, ':' included). */
export const MODEL_OF: Record<Family, string> = {
  alpha: 'gpt-4o-mini',
  gamma: 'claude-sonnet-4-5',
  zeta: 'anthropic.claude-3-haiku-20240307-v1:0',
  delta: 'gemini-2.5-flash',
  // A deployment of the Foundry project, named by the body's model on its v1 API.
  beta: 'gpt-4.1',
};

export const TEXT_PROMPT = 'hello there';
/** Asks the mocks for a tool call ("call <name>") and the Gemini stand-in too (it mentions weather). */
export const TOOL_PROMPT = 'call get_weather for the weather in Paris';
export const WEATHER_SCHEMA = {
  type: 'object',
  properties: { city: { type: 'string' } },
  required: ['city'],
  additionalProperties: false,
} as const;

export function expectedText(family: Family): string {
  return family === 'zeta' ? `Hello from ${MODEL_OF.zeta}` : `echo: ${TEXT_PROMPT}`;
}

export function expectedToolInput(family: Family): { city: string } {
  return { city: family === 'zeta' || family === 'delta' ? 'Paris' : 'example' };
}

export interface FamiliesBehindGw {
  openai: MockServer;
  anthropic: MockServer;
  bedrock: BedrockStandIn;
  gemini: GeminiMock;
  azure: MockServer;
  gw: TestGateway;
  /** gw's base URL for a family: http://127.0.0.1:<port>/<family> */
  base(family: Family): string;
  /** How many requests the family's stand-in has received so far. */
  received(family: Family): number;
  close(): Promise<void>;
}

export async function startFamiliesBehindGw(): Promise<FamiliesBehindGw> {
  const openai = await startOpenAiMock({ apiKey: KEYS.openai });
  const anthropic = await startAnthropicMock({ apiKey: KEYS.anthropic });
  const bedrock = await startBedrockStandIn((id) =>
    id === KEYS.aws.accessKeyId ? { secretAccessKey: KEYS.aws.secretAccessKey } : undefined,
  );
  const gemini = await startGeminiMock({ apiKey: KEYS.gemini });
  const azure = await startAzureOpenAiMock({
    apiKey: KEYS.azure,
    deployments: [MODEL_OF.beta],
    projects: [FOUNDRY_PROJECT],
  });
  const port = await freePort();
  const gw = await startTestGateway({
    'gateway.yaml': [
      gatewayYaml(port),
      aiBackendYaml('alpha', openai.port, 'alpha: {}', KEYS.openai, undefined),
      aiBackendYaml('gamma', anthropic.port, 'gamma: {}', KEYS.anthropic, undefined),
      aiBackendYaml('delta', gemini.port, 'delta: {}', KEYS.gemini, undefined),
      aiBackendYaml(
        'beta',
        azure.port,
        `beta: {resourceName: contoso, resourceType: Omega, projectName: ${FOUNDRY_PROJECT}}`,
        KEYS.azure,
        undefined,
      ),
      `apiVersion: v1
kind: Secret
metadata: {name: aws}
stringData: {accessKey: ${KEYS.aws.accessKeyId}, secretKey: "${KEYS.aws.secretAccessKey}"}
---
`,
      authBackendYaml(
        'zeta',
        `ai: {provider: {host: 127.0.0.1, port: ${bedrock.port}, zeta: {region: us-east-1}}}`,
        '{cloudone: {secretRef: {name: aws}}}',
      ),
      llmRouteYaml([...FAMILIES]),
    ].join(''),
  });
  return {
    openai,
    anthropic,
    bedrock,
    gemini,
    azure,
    gw,
    base: (family) => `http://127.0.0.1:${port}/${family}`,
    received: (family) =>
      ({
        alpha: openai.requests.length,
        gamma: anthropic.requests.length,
        zeta: bedrock.calls.length,
        delta: gemini.requests.length,
        beta: azure.requests.length,
      })[family],
    close: async () => {
      await gw.stop();
      await Promise.all([openai.close(), anthropic.close(), bedrock.close(), gemini.close(), azure.close()]);
    },
  };
}

/**
 * For a suite (inside describe): the stand-ins and gw start before its tests and stop after them;
 * the accessor returned gives them to the tests.
 */
export function familiesBehindGwForSuite(): () => FamiliesBehindGw {
  let setup: FamiliesBehindGw | undefined;
  before(async () => {
    setup = await startFamiliesBehindGw();
  });
  after(async () => {
    await setup?.close();
  });
  return () => {
    if (setup === undefined) throw new Error('the stand-ins and gw are started by the suite before its tests');
    return setup;
  };
}
