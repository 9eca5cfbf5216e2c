// OpenAI moderation results as gw reads them (moderation-results.ts), and the base URL the
// alphaModeration guard calls (OPENAI_BASE_URL or OpenAI's), with its refusals.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  OPENAI_BASE_URL_ENV,
  OPENAI_DEFAULT_BASE_URL,
} from '../../../src/dataplane/ai/guards/alpha-moderation-guard.ts';
import { readModerationResults } from '../../../src/dataplane/ai/guards/moderation-results.ts';
import { isServiceEndpointProblem, serviceEndpoint } from '../../../src/dataplane/upstream/service-endpoint.ts';
import { moderationResult } from '../../helpers/moderation-stand-in.ts';

describe('moderation results', () => {
  it('the flagged categories of the flagged results, in order, and the highest score of each category', () => {
    const verdict = readModerationResults([
      moderationResult('plan a murder'),
      moderationResult('a kind word'),
      moderationResult('a hateful murder'),
    ]);
    assert.deepEqual(verdict?.flagged, true);
    assert.deepEqual(verdict?.categories, ['violence', 'hate']);
    assert.equal(verdict?.scores.violence, 0.9);
    assert.equal(verdict?.scores.sexual, 0.01);
  });

  it('an unflagged result names no category even when its categories say true', () => {
    const verdict = readModerationResults([{ flagged: false, categories: { hate: true } }]);
    assert.deepEqual(verdict, { flagged: false, categories: [], scores: {} });
  });

  it('what is not a list of results is not read', () => {
    assert.equal(readModerationResults(undefined), undefined);
    assert.equal(readModerationResults({ flagged: true }), undefined);
    assert.equal(readModerationResults([{ categories: {} }]), undefined);
  });
});

describe('the base URL of OpenAI moderation', () => {
  const base = (env: NodeJS.ProcessEnv) => serviceEndpoint(OPENAI_DEFAULT_BASE_URL, [OPENAI_BASE_URL_ENV], env);

  it("OpenAI's unless OPENAI_BASE_URL says otherwise", () => {
    for (const env of [{}, { OPENAI_BASE_URL: '  ' }])
      assert.deepEqual(base(env), {
        destination: { protocol: 'https:', host: 'api.openai.com', port: 443 },
        basePath: '/v1',
        variable: undefined,
      });
    assert.deepEqual(base({ OPENAI_BASE_URL: 'http://10.0.0.1:8080/openai/v1/' }), {
      destination: { protocol: 'http:', host: '10.0.0.1', port: 8080 },
      basePath: '/openai/v1',
      variable: 'OPENAI_BASE_URL',
    });
  });

  it('a value that is not an http(s) URL without a query is refused, naming the variable', () => {
    for (const value of ['not a url', 'ftp://example.com/v1', 'https://example.com/v1?x=1']) {
      const refused = base({ OPENAI_BASE_URL: value });
      assert.ok(isServiceEndpointProblem(refused), value);
      assert.match(refused.message, /^OPENAI_BASE_URL in gw's environment must be/);
    }
  });
});
