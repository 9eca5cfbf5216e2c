// An epsilon (Vertex AI) provider whose policies set no backend auth sends an access token of the
// ambient Google credentials (cloudtwo: {}, docs/decisions/0021-vertex.md): here the metadata
// server stand-in at GCE_METADATA_HOST issues it, and the Vertex stand-in accepts only tokens that
// server issued; so does the stand-in of Vertex's Anthropic endpoints (rawPredict) for Claude
// models. The environment google-auth-library reads is set here and restored afterwards;
// this file runs in its own process.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, it } from 'node:test';
import Anthropic from '@anthropic-ai/sdk';
import { gcpMetadata } from 'google-auth-library';
import OpenAI from 'openai';
import { freePort, gatewayYaml, llmRouteYaml, startTestGateway, type TestGateway } from '../../helpers/gateway.ts';
import { GOOGLE_LIBRARY_ENVIRONMENT, MetadataServerStandIn } from '../../helpers/google-stand-ins.ts';
import { type GeminiMock, startGeminiMock } from '../../support/providers/gemini-mock.ts';
import type { MockServer } from '../../support/providers/mock-server.ts';
import { startVertexAnthropicMock } from '../../support/providers/vertex-anthropic-mock.ts';

const LIBRARY_ENVIRONMENT = GOOGLE_LIBRARY_ENVIRONMENT;
const saved = new Map(LIBRARY_ENVIRONMENT.map((name) => [name, process.env[name]]));

let metadata: MetadataServerStandIn;
let vertex: GeminiMock;
let claude: MockServer;
let gw: TestGateway;
let port: number;
let dir: string;

before(async () => {
  for (const name of LIBRARY_ENVIRONMENT) delete process.env[name];
  dir = mkdtempSync(join(tmpdir(), 'gw-epsilon-'));
  process.env.CLOUDSDK_CONFIG = dir; // no gcloud credentials file
  metadata = await MetadataServerStandIn.start();
  process.env.GCE_METADATA_HOST = metadata.host;
  vertex = await startGeminiMock({
    vertex: {
      project: 'ambient-project',
      location: 'global',
      token: (token) => metadata.issued.some((issued) => issued.kind === 'access' && issued.token === token),
    },
  });
  claude = await startVertexAnthropicMock({
    project: 'ambient-project',
    location: 'global',
    token: (token) => metadata.issued.some((issued) => issued.kind === 'access' && issued.token === token),
  });
  port = await freePort();
  gw = await startTestGateway({
    'gateway.yaml': [
      gatewayYaml(port),
      `apiVersion: gw.dev/v1alpha1
kind: GwBackend
metadata: {name: vertex}
spec:
  ai: {provider: {host: 127.0.0.1, port: ${vertex.port}, epsilon: {projectId: ambient-project}}}
  policies:
    ai: {routes: {/v1/chat/completions: Completions}}
---
`,
      `apiVersion: gw.dev/v1alpha1
kind: GwBackend
metadata: {name: claude}
spec:
  ai: {provider: {host: 127.0.0.1, port: ${claude.port}, epsilon: {projectId: ambient-project}}}
  policies:
    ai: {routes: {/v1/messages: Messages}}
---
`,
      llmRouteYaml(['vertex', 'claude']),
    ].join(''),
  });
});

after(async () => {
  await gw?.stop();
  await Promise.all([vertex?.close(), claude?.close(), metadata?.close()]);
  rmSync(dir, { recursive: true, force: true });
  for (const [name, value] of saved) {
    if (value === undefined) delete process.env[name];
    else process.env[name] = value;
  }
  gcpMetadata.resetIsAvailableCache();
});

it('with no backend auth, an epsilon provider sends an access token of the ambient Google credentials', async () => {
  const client = new OpenAI({ apiKey: 'client-token', baseURL: `http://127.0.0.1:${port}/vertex/v1`, maxRetries: 0 });
  const completion = await client.chat.completions.create({
    model: 'gemini-2.5-flash',
    messages: [{ role: 'user', content: 'hello ambient' }],
  });
  assert.equal(completion.choices[0]!.message.content, 'echo: hello ambient');
  const sent = vertex.requests.at(-1)!;
  assert.equal(
    sent.path,
    '/v1/projects/ambient-project/locations/global/publishers/google/models/gemini-2.5-flash:generateContent',
  );
  const token = metadata.issued.find((issued) => issued.kind === 'access')?.token;
  assert.ok(token !== undefined, 'the metadata server issued an access token');
  assert.equal(sent.headers.authorization, `Bearer ${token}`);
});

it('so does a request for a Claude model, sent to rawPredict', async () => {
  const client = new Anthropic({ apiKey: 'client-token', baseURL: `http://127.0.0.1:${port}/claude`, maxRetries: 0 });
  const message = await client.messages.create({
    model: 'claude-sonnet-4-5@20250929',
    max_tokens: 32,
    messages: [{ role: 'user', content: 'hello ambient claude' }],
  });
  assert.deepEqual(message.content, [{ type: 'text', text: 'echo: hello ambient claude' }]);
  const sent = claude.requests.at(-1)!;
  assert.equal(
    sent.path,
    '/v1/projects/ambient-project/locations/global/publishers/anthropic/models/claude-sonnet-4-5@20250929:rawPredict',
  );
  const issued = metadata.issued.filter((token) => token.kind === 'access').map((token) => `Bearer ${token.token}`);
  assert.ok(issued.includes(String(sent.headers.authorization)), 'an access token the metadata server issued');
});
