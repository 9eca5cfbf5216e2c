// traffic.apiKeyAuthentication end to end: gw on YAML files in front of a recording upstream,
// the official OpenAI client sending its key as Authorization: Bearer, fetch for the other
// locations. Covers the three modes, every location, keys from a Secret, label-selected Secrets
// and ConfigMaps (hashes only), a changed Secret, metadata used by an authorization rule, and
// that no key reaches the upstream or any log.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { describe, it } from 'node:test';
import OpenAI from 'openai';
import { ownFailureDetail } from '../../helpers/gateway.ts';
import { GATEWAY_AI, trafficPolicyYaml } from '../../helpers/policy-yaml.ts';
import { eventually, until } from '../../helpers/until.ts';
import { assertNoSecretLogged, objectYaml, startAuthGateway } from './auth-helpers.ts';

const ALICE = 'sk-alice-3f9a0c1d2e4b';
const BOB = 'sk-bob-7c6d5e4f3a2b';
const CAROL = 'sk-carol-1a2b3c4d5e6f';
const ALL_KEYS = [ALICE, BOB, CAROL];

const keyHash = (key: string) => `sha256:${createHash('sha256').update(key).digest('hex')}`;

/** alice: a plain key; bob: a key with metadata; carol: only the hash of her key, with metadata. */
const CLIENT_KEYS = objectYaml('Secret', 'client-keys', {
  alice: ALICE,
  bob: JSON.stringify({ key: BOB, metadata: { group: 'admin', tier: 3 } }),
  carol: JSON.stringify({ keyHash: keyHash(CAROL), metadata: { group: 'ml' } }),
});

/** `key` with its last character changed. */
function oneByteOff(key: string): string {
  const last = key.charCodeAt(key.length - 1);
  return key.slice(0, -1) + String.fromCharCode(last === 0x61 ? 0x62 : 0x61);
}

function openai(base: string, apiKey: string): OpenAI {
  return new OpenAI({ apiKey, baseURL: `${base}/v1`, maxRetries: 0 });
}

async function chat(client: OpenAI): Promise<number> {
  try {
    const completion = await client.chat.completions.create({
      model: 'test-model',
      messages: [{ role: 'user', content: 'hello' }],
    });
    assert.equal(completion.choices[0]?.message.content, 'hi');
    return 200;
  } catch (error) {
    if (error instanceof OpenAI.APIError && error.status !== undefined) return error.status;
    throw error;
  }
}

async function status(url: string, headers: Record<string, string> = {}): Promise<number> {
  const response = await fetch(url, { headers });
  await response.arrayBuffer();
  return response.status;
}

describe('API keys from a Secret (Strict, the Authorization header)', () => {
  it('accepts each entry form, rejects other keys with 401 and a Bearer challenge, and strips the key', async () => {
    const { gw, upstream, base, stop } = await startAuthGateway(
      CLIENT_KEYS + trafficPolicyYaml('keys', 'web', { apiKeyAuthentication: { secretRef: { name: 'client-keys' } } }),
    );
    try {
      for (const key of ALL_KEYS) {
        assert.equal(await chat(openai(base, key)), 200, 'a configured key is accepted');
        assert.equal(upstream.last().headers.authorization, undefined, 'the key is not forwarded upstream');
      }
      const seen = upstream.seen.length;
      for (const wrong of [oneByteOff(ALICE), ALICE.slice(0, -1), `${ALICE}0`, `${CAROL} `.repeat(2), keyHash(CAROL)])
        assert.equal(await chat(openai(base, wrong)), 401, `${wrong} is rejected`);
      assert.equal(upstream.seen.length, seen, 'no rejected request reached the upstream');

      const missing = await fetch(`${base}/v1/models`);
      assert.equal(missing.status, 401);
      assert.equal(missing.headers.get('www-authenticate'), 'Bearer');
      assert.match(missing.headers.get('content-type') ?? '', /^text\/plain/);
      assert.equal(
        await missing.text(),
        'an API key is required; gw reads it from the Authorization header as "Bearer <key>"\n',
      );
      const invalid = await fetch(`${base}/v1/models`, { headers: { authorization: `Bearer ${oneByteOff(BOB)}` } });
      assert.equal(invalid.status, 401);
      assert.equal(invalid.headers.get('www-authenticate'), 'Bearer error="invalid_token"');
      await invalid.arrayBuffer();
      // Another scheme is no API key; the scheme name is case-insensitive.
      assert.equal(await status(`${base}/x`, { authorization: `Basic ${ALICE}` }), 401);
      assert.equal(await status(`${base}/x`, { authorization: `bearer ${ALICE}` }), 200);

      assert.ok(await until(() => gw.accessLog.some((line) => line.includes('"http.response.status_code":401')), 2000));
      assertNoSecretLogged(gw, ALL_KEYS);
    } finally {
      await stop();
    }
  });

  it('picks up a changed Secret: the old key stops working, the new one works', async () => {
    const secretFile = (entries: Record<string, string>) => objectYaml('Secret', 'rotating', entries);
    const { gw, base, stop } = await startAuthGateway(
      trafficPolicyYaml('keys', 'web', { apiKeyAuthentication: { secretRef: { name: 'rotating' } } }),
    );
    gw.write('secret.yaml', secretFile({ team: ALICE }));
    try {
      await eventually('the first key to work', async () => (await chat(openai(base, ALICE))) === 200);
      gw.write('secret.yaml', secretFile({ team: BOB }));
      await eventually('the new key to work', async () => (await chat(openai(base, BOB))) === 200);
      assert.equal(await chat(openai(base, ALICE)), 401, 'the old key no longer works');
      assertNoSecretLogged(gw, [ALICE, BOB]);
    } finally {
      await stop();
    }
  });

  it('refuses the rule (500) while the Secret does not exist, naming it', async () => {
    const { gw, base, stop } = await startAuthGateway(
      trafficPolicyYaml('keys', 'web', { apiKeyAuthentication: { secretRef: { name: 'absent' } } }),
    );
    try {
      const response = await fetch(`${base}/x`, { headers: { authorization: `Bearer ${ALICE}` } });
      assert.equal(response.status, 500);
      assert.match(
        await ownFailureDetail(gw, response),
        /traffic\.apiKeyAuthentication\.secretRef\.name Secret default\/absent was not found/,
      );
      assert.ok(gw.logs.some((line) => line.includes('Secret default/absent was not found')));
    } finally {
      await stop();
    }
  });
});

describe('modes', () => {
  it('Optional lets a request without a key pass, but not one with a wrong key', async () => {
    const { gw, upstream, base, stop } = await startAuthGateway(
      CLIENT_KEYS +
        trafficPolicyYaml('keys', 'web', {
          apiKeyAuthentication: { secretRef: { name: 'client-keys' }, mode: 'Optional' },
        }),
    );
    try {
      assert.equal(await status(`${base}/open`), 200);
      assert.equal(upstream.last().url, '/open');
      assert.equal(await chat(openai(base, ALICE)), 200);
      assert.equal(await chat(openai(base, oneByteOff(ALICE))), 401);
      assertNoSecretLogged(gw, ALL_KEYS);
    } finally {
      await stop();
    }
  });

  it('Permissive never rejects and sets the metadata only for a valid key', async () => {
    // Require has(apiKey.group) to see the metadata: its 403 (not 401) shows Permissive let the request on.
    const { gw, upstream, base, stop } = await startAuthGateway(
      CLIENT_KEYS +
        trafficPolicyYaml('keys', 'web', {
          apiKeyAuthentication: { secretRef: { name: 'client-keys' }, mode: 'Permissive' },
          authorization: { action: 'Require', policy: { matchExpressions: ['has(apiKey.group)'] } },
        }),
    );
    try {
      assert.equal(await chat(openai(base, BOB)), 200, 'a valid key with metadata');
      assert.equal(await chat(openai(base, ALICE)), 403, 'a valid key without metadata: no group');
      assert.equal(await chat(openai(base, oneByteOff(BOB))), 403, 'a wrong key: no metadata, no 401');
      assert.equal(await status(`${base}/x`), 403, 'no key: no metadata, no 401');
      assert.equal(upstream.seen.length, 1);
      assertNoSecretLogged(gw, [...ALL_KEYS, oneByteOff(BOB)]);
    } finally {
      await stop();
    }
  });

  it('Permissive forwards a request with a wrong key, without the key', async () => {
    const { gw, upstream, base, stop } = await startAuthGateway(
      CLIENT_KEYS +
        trafficPolicyYaml('keys', 'web', {
          apiKeyAuthentication: { secretRef: { name: 'client-keys' }, mode: 'Permissive' },
        }),
    );
    try {
      assert.equal(await status(`${base}/wrong`, { authorization: `Bearer ${oneByteOff(CAROL)}` }), 200);
      assert.equal(upstream.last().headers.authorization, undefined);
      assert.equal(await status(`${base}/none`), 200);
      assertNoSecretLogged(gw, [...ALL_KEYS, oneByteOff(CAROL)]);
    } finally {
      await stop();
    }
  });
});

describe('locations', () => {
  const cases: {
    name: string;
    location: unknown;
    send: (key: string) => { path: string; headers: Record<string, string> };
    /** What reaches the upstream must not carry the key (header and query locations remove it). */
    stripped?: (seen: { url: string; headers: Record<string, unknown> }) => void;
  }[] = [
    {
      name: 'a header with a prefix',
      location: { header: { name: 'X-Api-Key', prefix: 'Key ' } },
      send: (key) => ({ path: '/h', headers: { 'x-api-key': `Key ${key}` } }),
      stripped: (seen) => assert.equal(seen.headers['x-api-key'], undefined),
    },
    {
      name: 'a header without a prefix',
      location: { header: { name: 'x-gateway-token' } },
      send: (key) => ({ path: '/h', headers: { 'x-gateway-token': key } }),
      stripped: (seen) => assert.equal(seen.headers['x-gateway-token'], undefined),
    },
    {
      name: 'a query parameter',
      location: { queryParameter: { name: 'api_key' } },
      send: (key) => ({ path: `/q?keep=1&api_key=${encodeURIComponent(key)}`, headers: {} }),
      stripped: (seen) => assert.equal(seen.url, '/q?keep=1'),
    },
    {
      name: 'a cookie',
      location: { cookie: { name: 'gw-key' } },
      send: (key) => ({ path: '/c', headers: { cookie: `theme=dark; gw-key=${key}` } }),
    },
    {
      name: 'a CEL expression',
      location: { expression: 'request.headers["x-alt-key"]' },
      send: (key) => ({ path: '/e', headers: { 'x-alt-key': key } }),
    },
  ];
  for (const { name, location, send, stripped } of cases) {
    it(`reads the key from ${name}`, async () => {
      const { gw, upstream, base, stop } = await startAuthGateway(
        CLIENT_KEYS +
          trafficPolicyYaml('keys', 'web', { apiKeyAuthentication: { secretRef: { name: 'client-keys' }, location } }),
      );
      try {
        const good = send(BOB);
        assert.equal(await status(base + good.path, good.headers), 200);
        stripped?.(upstream.last());
        const bad = send(oneByteOff(BOB));
        const rejected = await fetch(base + bad.path, { headers: bad.headers });
        assert.equal(rejected.status, 401);
        assert.equal(rejected.headers.get('www-authenticate'), null, 'no Bearer challenge outside Authorization');
        await rejected.arrayBuffer();
        // The default Authorization header is not read when a location is set.
        assert.equal(await status(`${base}/d`, { authorization: `Bearer ${BOB}` }), 401);
        assertNoSecretLogged(gw, [BOB, oneByteOff(BOB)]);
      } finally {
        await stop();
      }
    });
  }
});

describe('label-selected Secrets and ConfigMaps', () => {
  it('reads every Secret the selector chooses, and a Secret labelled later', async () => {
    const { gw, base, stop } = await startAuthGateway(
      objectYaml('Secret', 'team-a', { alice: ALICE }, { 'gw-keys': 'clients' }) +
        objectYaml('Secret', 'team-b', { bob: BOB }, { 'gw-keys': 'clients' }) +
        objectYaml('Secret', 'unlabelled', { carol: CAROL }) +
        trafficPolicyYaml('keys', 'web', {
          apiKeyAuthentication: { secretSelector: { matchLabels: { 'gw-keys': 'clients' } } },
        }),
    );
    try {
      assert.equal(await chat(openai(base, ALICE)), 200);
      assert.equal(await chat(openai(base, BOB)), 200);
      assert.equal(await chat(openai(base, CAROL)), 401, 'a Secret without the label holds no keys');
      gw.write('later.yaml', objectYaml('Secret', 'team-c', { carol: CAROL }, { 'gw-keys': 'clients' }));
      await eventually('the newly labelled Secret to be read', async () => (await chat(openai(base, CAROL))) === 200);
      assertNoSecretLogged(gw, ALL_KEYS);
    } finally {
      await stop();
    }
  });

  it('takes only hashes from ConfigMaps: a raw key there is unusable and the status names its entry', async () => {
    const { gw, base, stop } = await startAuthGateway(
      objectYaml(
        'ConfigMap',
        'team-keys',
        {
          alice: JSON.stringify({ keyHash: keyHash(ALICE), metadata: { group: 'ml' } }),
          bob: BOB,
          carol: JSON.stringify({ key: CAROL }),
        },
        { 'gw-keys': 'team' },
      ) +
        trafficPolicyYaml('keys', GATEWAY_AI, {
          phase: 'PreRouting',
          apiKeyAuthentication: { configMapSelector: { matchLabels: { 'gw-keys': 'team' } } },
        }),
    );
    try {
      assert.equal(await chat(openai(base, ALICE)), 200);
      assert.equal(await chat(openai(base, BOB)), 401, 'a raw key in a ConfigMap is never accepted');
      assert.equal(await chat(openai(base, CAROL)), 401, 'a {"key": ...} entry in a ConfigMap is never accepted');
      const store = gw.gateway.files.store;
      const conditions = () => {
        const status = store.get('gw.dev/GwPolicy', 'default/keys')?.status as
          | { ancestors?: { conditions: { type: string; reason: string; message: string }[] }[] }
          | undefined;
        return status?.ancestors?.flatMap((ancestor) => ancestor.conditions) ?? [];
      };
      assert.ok(await until(() => conditions().some((c) => c.reason === 'InvalidAPIKeyEntry'), 3000));
      const messages = conditions()
        .filter((c) => c.type === 'ResolvedRefs')
        .map((c) => c.message)
        .join('\n');
      assert.match(messages, /ConfigMap default\/team-keys: data\[bob\]/);
      assert.match(messages, /ConfigMap default\/team-keys: data\[carol\]/);
      for (const key of ALL_KEYS) assert.ok(!messages.includes(key), 'the status never shows a key');
      assertNoSecretLogged(gw, ALL_KEYS);
    } finally {
      await stop();
    }
  });
});

describe('metadata in authorization rules', () => {
  it('allows by apiKey.group and apiKey.tier; a key without metadata fails the rule (403)', async () => {
    const { gw, base, stop } = await startAuthGateway(
      CLIENT_KEYS +
        trafficPolicyYaml('keys', 'web', {
          apiKeyAuthentication: { secretRef: { name: 'client-keys' } },
          authorization: { policy: { matchExpressions: ["apiKey.group == 'admin'", 'apiKey.tier >= 3'] } },
        }),
    );
    try {
      assert.equal(await chat(openai(base, BOB)), 200);
      assert.equal(await chat(openai(base, CAROL)), 403, 'group ml is not admin');
      assert.equal(
        await chat(openai(base, ALICE)),
        403,
        'no metadata: the expression fails, the Allow rule does not match',
      );
      assert.equal(await chat(openai(base, oneByteOff(BOB))), 401, 'authentication runs first');
      assertNoSecretLogged(gw, ALL_KEYS);
    } finally {
      await stop();
    }
  });
});
