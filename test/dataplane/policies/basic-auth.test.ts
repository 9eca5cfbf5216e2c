// traffic.basicAuthentication end to end: users inline or in a Secret's htpasswd file, every hash
// format, both modes, the realm challenge, basicAuth.username in a later CEL rule, a changed
// Secret, the verified cache, and that no password reaches the upstream or a log.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { describe, it } from 'node:test';
import bcrypt from 'bcryptjs';
import { hashingPool } from '../../../src/dataplane/policies/auth/hashing-pool.ts';
import { ownFailureDetail } from '../../helpers/gateway.ts';
import { trafficPolicyYaml } from '../../helpers/policy-yaml.ts';
import { eventually } from '../../helpers/until.ts';
import { assertNoSecretLogged, objectYaml, startAuthGateway } from './auth-helpers.ts';

const ALICE_PASSWORD = 'alice-pw-5f4e3d';
const ALICE_BCRYPT = bcrypt.hashSync(ALICE_PASSWORD, 4);

const sha1Hash = (password: string) => `{SHA}${createHash('sha1').update(password).digest('base64')}`;

/** One user per hash format (made by openssl passwd -apr1, -5 and -6, and bcryptjs). */
const USERS: Record<string, { password: string; hash: string }> = {
  alice: { password: ALICE_PASSWORD, hash: ALICE_BCRYPT },
  bob: { password: 'bob-apr1-pw-7k', hash: '$apr1$Qw3rTy12$RrL.N6AQLpIQG6bRZ4Bjd.' },
  carol: { password: 'carol-sha256-pw', hash: '$5$c4rolSalt$MWHPSGHtapGWyYpuKe6wDGULTE7YT40e58ClkJJlNl/' },
  dave: {
    password: 'dave-sha512-pw',
    hash: '$6$rounds=6000$d4veSalt$kAZIJDzpFx4olzn3JTys1kxgeGqocgZIkNXH/l27Gh0k1uRHJIt0CYMB8C2IeaWoE5hnHpYnM4zM0RGnIZuvF0',
  },
  erin: { password: 'erin-sha1-pw', hash: sha1Hash('erin-sha1-pw') },
  // A password may hold colons: the user name ends at the first one.
  frank: { password: 'frank:pw:with:colons', hash: sha1Hash('frank:pw:with:colons') },
};
const BOB = USERS.bob!.password;
const ERIN = USERS.erin!.password;
const USER_LINES = Object.entries(USERS).map(([user, { hash }]) => `${user}:${hash}`);
const PASSWORDS = Object.values(USERS).map((user) => user.password);

const basic = (user: string, password: string) =>
  `Basic ${Buffer.from(`${user}:${password}`, 'utf8').toString('base64')}`;

interface Answer {
  status: number;
  headers: Headers;
  text: string;
}

async function get(url: string, headers: Record<string, string> = {}): Promise<Answer> {
  const response = await fetch(url, { headers });
  return { status: response.status, headers: response.headers, text: await response.text() };
}

describe('basic authentication with inline users (Strict)', () => {
  it('accepts every hash format, answers 401 with the default realm, and strips the credentials', async () => {
    const { gw, upstream, base, stop } = await startAuthGateway(
      trafficPolicyYaml('users', 'web', { basicAuthentication: { users: USER_LINES } }),
    );
    try {
      for (const [user, { password }] of Object.entries(USERS)) {
        const ok = await get(`${base}/${user}`, { authorization: basic(user, password) });
        assert.equal(ok.status, 200, `${user} is accepted`);
        assert.equal(upstream.last().headers.authorization, undefined, 'the credentials are not forwarded');
        const wrong = await get(`${base}/${user}`, { authorization: basic(user, `${password.slice(0, -1)}#`) });
        assert.equal(wrong.status, 401, `${user} with a wrong password is rejected`);
        assert.equal(wrong.headers.get('www-authenticate'), 'Basic realm="Restricted"');
      }
      const seen = upstream.seen.length;
      const missing = await get(`${base}/x`);
      assert.equal(missing.status, 401);
      assert.equal(missing.headers.get('www-authenticate'), 'Basic realm="Restricted"');
      assert.equal(missing.text, 'credentials are required\n');
      for (const authorization of [
        basic('mallory', BOB), // no such user
        basic('bob', ''),
        basic('', BOB),
        `Basic ${Buffer.from(`bob${BOB}`).toString('base64')}`, // no colon
        'Basic !!not base64!!',
        `Bearer ${Buffer.from(`bob:${BOB}`).toString('base64')}`, // another scheme: no credentials
      ]) {
        const rejected = await get(`${base}/x`, { authorization });
        assert.equal(rejected.status, 401, authorization);
        assert.equal(rejected.headers.get('www-authenticate'), 'Basic realm="Restricted"');
      }
      assert.equal(upstream.seen.length, seen, 'no rejected request reached the upstream');
      // The scheme is case-insensitive.
      assert.equal((await get(`${base}/x`, { authorization: `basic ${basic('bob', BOB).slice(6)}` })).status, 200);
      assertNoSecretLogged(gw, PASSWORDS);
    } finally {
      await stop();
    }
  });

  it('exposes basicAuth.username to a later authorization rule', async () => {
    const { gw, base, stop } = await startAuthGateway(
      trafficPolicyYaml('users', 'web', {
        basicAuthentication: { users: USER_LINES },
        authorization: { policy: { matchExpressions: ["basicAuth.username == 'bob'"] } },
      }),
    );
    try {
      assert.equal((await get(`${base}/x`, { authorization: basic('bob', BOB) })).status, 200);
      assert.equal((await get(`${base}/x`, { authorization: basic('erin', ERIN) })).status, 403);
      assertNoSecretLogged(gw, PASSWORDS);
    } finally {
      await stop();
    }
  });

  it('Optional lets a request without credentials pass, but not wrong ones; the realm is quoted', async () => {
    const { gw, base, stop } = await startAuthGateway(
      trafficPolicyYaml('users', 'web', {
        basicAuthentication: { users: USER_LINES, mode: 'Optional', realm: 'Team "A"' },
      }),
    );
    try {
      assert.equal((await get(`${base}/anon`)).status, 200);
      assert.equal((await get(`${base}/x`, { authorization: basic('erin', ERIN) })).status, 200);
      const wrong = await get(`${base}/x`, { authorization: basic('erin', `${ERIN}!`) });
      assert.equal(wrong.status, 401);
      assert.equal(wrong.headers.get('www-authenticate'), 'Basic realm="Team \\"A\\""');
      assertNoSecretLogged(gw, PASSWORDS);
    } finally {
      await stop();
    }
  });

  it('reads the credentials from another header when location says so', async () => {
    const { gw, upstream, base, stop } = await startAuthGateway(
      trafficPolicyYaml('users', 'web', {
        basicAuthentication: { users: USER_LINES, location: { header: { name: 'x-gw-auth' } } },
      }),
    );
    try {
      const credentials = basic('bob', BOB).slice('Basic '.length);
      assert.equal(
        (await get(`${base}/x`, { 'x-gw-auth': credentials, authorization: 'Bearer upstream-token' })).status,
        200,
      );
      assert.equal(upstream.last().headers['x-gw-auth'], undefined);
      assert.equal(upstream.last().headers.authorization, 'Bearer upstream-token', 'other headers are left alone');
      assert.equal((await get(`${base}/x`, { authorization: basic('bob', BOB) })).status, 401);
      assertNoSecretLogged(gw, PASSWORDS);
    } finally {
      await stop();
    }
  });

  it('refuses the rule (500) for a hash format it cannot verify, naming the line, not the hash', async () => {
    const desHash = 'abJnggxhB/yWI';
    const { gw, base, stop } = await startAuthGateway(
      trafficPolicyYaml('users', 'web', {
        basicAuthentication: { users: [`bob:${USERS.bob!.hash}`, `old:${desHash}`] },
      }),
    );
    try {
      const response = await fetch(`${base}/x`, { headers: { authorization: basic('bob', BOB) } });
      assert.equal(response.status, 500);
      const detail = await ownFailureDetail(gw, response);
      assert.match(detail, /traffic\.basicAuthentication\.users\[1\] \(user old\) has a hash format gw cannot verify/);
      assert.ok(gw.logs.some((line) => line.includes('basicAuthentication.users[1]')));
      assert.ok(!detail.includes(desHash));
      assertNoSecretLogged(gw, [desHash, USERS.bob!.hash]);
    } finally {
      await stop();
    }
  });
});

describe('basic authentication from a Secret', () => {
  it('reads .htaccess by default and picks up a changed password (the cache does not outlive it)', async () => {
    const htpasswd = (hash: string) =>
      objectYaml('Secret', 'htpasswd', { '.htaccess': `# users\nalice:${hash}\nerin:${USERS.erin!.hash}\n` });
    const { gw, base, stop } = await startAuthGateway(
      trafficPolicyYaml('users', 'web', { basicAuthentication: { secretRef: { name: 'htpasswd' } } }),
    );
    gw.write('secret.yaml', htpasswd(ALICE_BCRYPT));
    try {
      await eventually(
        'the Secret to be read',
        async () => (await get(`${base}/x`, { authorization: basic('alice', ALICE_PASSWORD) })).status === 200,
      );
      const newPassword = 'alice-new-pw-9z';
      gw.write('secret.yaml', htpasswd(bcrypt.hashSync(newPassword, 4)));
      await eventually(
        'the new password to work',
        async () => (await get(`${base}/x`, { authorization: basic('alice', newPassword) })).status === 200,
      );
      assert.equal((await get(`${base}/x`, { authorization: basic('alice', ALICE_PASSWORD) })).status, 401);
      assertNoSecretLogged(gw, [ALICE_PASSWORD, newPassword]);
    } finally {
      await stop();
    }
  });

  it('reads another key when secretRef.key is set, and refuses a missing key (500)', async () => {
    const { gw, base, stop } = await startAuthGateway(
      objectYaml('Secret', 'users', { passwd: `bob:${USERS.bob!.hash}` }) +
        trafficPolicyYaml('users', 'web', { basicAuthentication: { secretRef: { name: 'users', key: 'passwd' } } }),
    );
    try {
      assert.equal((await get(`${base}/x`, { authorization: basic('bob', BOB) })).status, 200);
      gw.write(
        'objects.yaml',
        objectYaml('Secret', 'users', { passwd: `bob:${USERS.bob!.hash}` }) +
          trafficPolicyYaml('users', 'web', { basicAuthentication: { secretRef: { name: 'users' } } }),
      );
      await eventually('the default key to be looked for', async () => (await get(`${base}/x`)).status === 500);
      const refused = await fetch(`${base}/x`);
      assert.match(
        await ownFailureDetail(gw, refused),
        /traffic\.basicAuthentication\.secretRef\.key Secret default\/users has no key "\.htaccess"/,
      );
      assertNoSecretLogged(gw, [BOB, USERS.bob!.hash]);
    } finally {
      await stop();
    }
  });
});

describe('a Secret htpasswd file gw cannot use', () => {
  it('refuses the rule (500), naming the line of the file and the user, not the hash', async () => {
    const { gw, base, stop } = await startAuthGateway(
      objectYaml('Secret', 'htpasswd', { '.htaccess': `bob:${USERS.bob!.hash}\nold:abJnggxhB/yWI\n` }) +
        trafficPolicyYaml('users', 'web', { basicAuthentication: { secretRef: { name: 'htpasswd' } } }),
    );
    try {
      const refused = await fetch(`${base}/x`, { headers: { authorization: basic('bob', BOB) } });
      assert.equal(refused.status, 500);
      assert.match(
        await ownFailureDetail(gw, refused),
        /traffic\.basicAuthentication\.secretRef line 2 of Secret default\/htpasswd key "\.htaccess" \(user old\) has a hash format/,
      );
      assertNoSecretLogged(gw, [BOB, 'abJnggxhB/yWI']);
    } finally {
      await stop();
    }
  });
});

describe('the verified cache', () => {
  it('checks a user and password that verified once, a wrong one every time', async () => {
    const password = 'slow-pw-3c2b1a';
    const { gw, base, stop } = await startAuthGateway(
      trafficPolicyYaml('users', 'web', { basicAuthentication: { users: [`slow:${bcrypt.hashSync(password, 4)}`] } }),
    );
    const checks = () => hashingPool(gw.gateway.dataPlane.policyRuntime).completed;
    const status = async (pw: string) => (await get(`${base}/x`, { authorization: basic('slow', pw) })).status;
    try {
      assert.equal(await status(password), 200);
      for (let i = 0; i < 5; i++) assert.equal(await status(password), 200);
      assert.equal(checks(), 1, 'the password was checked once');
      assert.equal(await status(`${password}x`), 401);
      assert.equal(await status(`${password}x`), 401);
      assert.equal(checks(), 3, 'a wrong password is checked every time');
      assert.equal(await status(password), 200);
      assert.equal(checks(), 3);
      assertNoSecretLogged(gw, [password]);
    } finally {
      await stop();
    }
  });
});
