import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { RouteType } from '../../../src/api/types/ai.ts';
import { compileRouteTypes, policyStepsFor } from '../../../src/dataplane/ai/policies/index.ts';

const cases: { name: string; routes: Record<string, RouteType> | undefined; path: string; want: RouteType }[] = [
  // Unset (or empty) routes: each API at its well-known path (docs/decisions/0012-default-ai-routes.md).
  { name: 'no routes: Messages at /v1/messages', routes: undefined, path: '/v1/messages', want: 'Messages' },
  { name: 'no routes: Chat Completions', routes: undefined, path: '/v1/chat/completions', want: 'Completions' },
  {
    name: 'no routes: token counting',
    routes: undefined,
    path: '/v1/messages/count_tokens?beta=true',
    want: 'GammaTokenCount',
  },
  { name: 'no routes: Responses', routes: undefined, path: '/openai/v1/responses', want: 'Responses' },
  {
    name: 'no routes: compacting a response is Detect',
    routes: undefined,
    path: '/v1/responses/compact',
    want: 'Detect',
  },
  { name: 'no routes: Embeddings', routes: undefined, path: '/v1/embeddings', want: 'Embeddings' },
  { name: 'no routes: the model listing', routes: undefined, path: '/v1/models', want: 'Models' },
  { name: 'no routes: images are Detect', routes: undefined, path: '/v1/images/generations', want: 'Detect' },
  { name: 'no routes: rerank', routes: undefined, path: '/v2/rerank', want: 'Rerank' },
  { name: 'no routes: any other path is Completions', routes: undefined, path: '/anything', want: 'Completions' },
  { name: 'empty routes: the defaults too', routes: {}, path: '/v1/messages', want: 'Messages' },
  {
    name: 'set routes replace the defaults',
    routes: { '/chat': 'Completions' },
    path: '/v1/messages',
    want: 'Completions',
  },
  {
    name: 'suffix match',
    routes: { '/v1/messages': 'Messages' },
    path: '/gamma/v1/messages',
    want: 'Messages',
  },
  {
    name: 'the query is not part of the path',
    routes: { '/v1/messages': 'Messages' },
    path: '/v1/messages?beta=true',
    want: 'Messages',
  },
  {
    name: 'a suffix in the query does not match',
    routes: { '/v1/messages': 'Messages' },
    path: '/v1/other?next=/v1/messages',
    want: 'Completions',
  },
  {
    name: 'no match and no wildcard: completions',
    routes: { '/v1/messages': 'Messages' },
    path: '/v1/embeddings',
    want: 'Completions',
  },
  { name: 'wildcard matches any path', routes: { '*': 'Passthrough' }, path: '/x/y', want: 'Passthrough' },
  {
    name: 'a suffix beats the wildcard',
    routes: { '*': 'Passthrough', '/v1/chat/completions': 'Completions' },
    path: '/v1/chat/completions',
    want: 'Completions',
  },
  {
    name: 'the wildcard catches what no suffix matches',
    routes: { '/v1/chat/completions': 'Completions', '*': 'Detect' },
    path: '/v1/models',
    want: 'Detect',
  },
  {
    name: 'the longest suffix wins, declared first',
    routes: { '/v1/messages/count_tokens': 'GammaTokenCount', count_tokens: 'Passthrough', '/messages': 'Messages' },
    path: '/v1/messages/count_tokens',
    want: 'GammaTokenCount',
  },
  {
    name: 'the longest suffix wins, declared last',
    routes: { count_tokens: 'Passthrough', '/messages': 'Messages', '/v1/messages/count_tokens': 'GammaTokenCount' },
    path: '/v1/messages/count_tokens',
    want: 'GammaTokenCount',
  },
  {
    name: 'a shorter suffix matches when the longer does not',
    routes: { count_tokens: 'Passthrough', '/v1/messages/count_tokens': 'GammaTokenCount' },
    path: '/v2/count_tokens',
    want: 'Passthrough',
  },
  {
    name: 'a suffix need not start at a slash',
    routes: { ':generateContent': 'GenerateContent', ':countTokens': 'DeltaCountTokens' },
    path: '/v1beta/models/m-1:countTokens',
    want: 'DeltaCountTokens',
  },
];

for (const { name, routes, path, want } of cases) {
  test(`route type: ${name}`, () => {
    assert.equal(compileRouteTypes(routes)(path), want);
  });
}

test('policy steps per route type: chat types get everything, passthrough nothing', () => {
  const table: [RouteType, boolean, boolean, boolean][] = [
    // route type, body policies, model aliases, prompt enrichment
    ['Completions', true, true, true],
    ['Messages', true, true, true],
    ['Responses', true, true, false],
    ['GammaTokenCount', true, true, false],
    ['Embeddings', true, true, false],
    ['Rerank', true, true, false],
    ['GenerateContent', true, true, false],
    ['DeltaCountTokens', true, true, false],
    ['Detect', true, false, false],
    ['Passthrough', false, false, false],
    ['Models', false, false, false],
    ['Realtime', false, false, false],
  ];
  for (const [routeType, body, modelAliases, promptEnrichment] of table) {
    assert.deepEqual(policyStepsFor(routeType), { body, modelAliases, promptEnrichment }, routeType);
  }
});
