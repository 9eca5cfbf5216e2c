// The admin token and the UI's login sessions over time, on a controllable clock: a session is
// good until its expiry and refused from that moment; a session is only good for the token that
// issued it (a new token ends every session); a changed expiry or signature is refused; the token
// is read from its file or GW_ADMIN_TOKEN and refused when short or spaced.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import {
  AdminToken,
  MIN_TOKEN_LENGTH,
  readAdminToken,
  SESSION_LIFETIME_MS,
} from '../../src/admin/ui/security/admin-token.ts';

const TOKEN = 'a-long-enough-admin-token-0001';

describe('AdminToken sessions', () => {
  it('a session is good until its expiry and refused from then on', () => {
    let now = Date.UTC(2026, 10, 27, 9, 0, 0);
    const token = new AdminToken(TOKEN, () => now);
    const session = token.newSession();
    assert.equal(token.validSession(session), true);
    now += SESSION_LIFETIME_MS - 1;
    assert.equal(token.validSession(session), true);
    now += 1;
    assert.equal(token.validSession(session), false, 'refused at its expiry');
    now += 24 * 60 * 60 * 1000;
    assert.equal(token.validSession(session), false);
  });

  it('a session is refused by another token, and when its expiry or signature is changed', () => {
    let now = Date.UTC(2026, 10, 27, 9, 0, 0);
    const token = new AdminToken(TOKEN, () => now);
    const session = token.newSession();
    assert.equal(new AdminToken('another-admin-token-0000002', () => now).validSession(session), false);
    const [expires, nonce, signature] = session.split('.') as [string, string, string];
    const later = `${Number(expires) + 10 * SESSION_LIFETIME_MS}.${nonce}.${signature}`;
    assert.equal(token.validSession(later), false, 'an expiry pushed later does not verify');
    const forged = `${expires}.${nonce}.${signature.slice(0, -2)}AA`;
    assert.equal(token.validSession(forged), false);
    for (const junk of ['', '.', 'no-dots', `${expires}.${nonce}`, `x.${nonce}.${signature}`])
      assert.equal(token.validSession(junk), false, junk);
    now += 1000;
    assert.notEqual(token.newSession(), session, 'each login gets its own nonce');
  });

  it('matches only the token itself', () => {
    const token = new AdminToken(TOKEN);
    assert.equal(token.matches(TOKEN), true);
    assert.equal(token.matches(`${TOKEN}x`), false);
    assert.equal(token.matches(TOKEN.slice(0, -1)), false);
    assert.equal(token.matches(''), false);
  });
});

describe('readAdminToken', () => {
  it('reads the file (without its final newline) before GW_ADMIN_TOKEN, and refuses short or spaced tokens', () => {
    const dir = mkdtempSync(join(tmpdir(), 'gw-admin-token-'));
    try {
      const file = join(dir, 'token');
      writeFileSync(file, `${TOKEN}\n`);
      assert.deepEqual(readAdminToken(file, { GW_ADMIN_TOKEN: 'ignored-env-token-0000003' }), { token: TOKEN });
      assert.deepEqual(readAdminToken(undefined, { GW_ADMIN_TOKEN: TOKEN }), { token: TOKEN });
      assert.deepEqual(readAdminToken(undefined, {}), { token: undefined });
      const short = readAdminToken(undefined, { GW_ADMIN_TOKEN: 'x'.repeat(MIN_TOKEN_LENGTH - 1) });
      assert.ok('problem' in short && /at least 16 characters/.test(short.problem));
      writeFileSync(file, 'has a space in the middle of it');
      const spaced = readAdminToken(file, {});
      assert.ok('problem' in spaced && spaced.problem.startsWith(`--admin-token-file ${file}:`));
      assert.ok('problem' in spaced && !spaced.problem.includes('has a space'), 'the token is not echoed');
      const missing = readAdminToken(join(dir, 'absent'), {});
      assert.ok('problem' in missing && /ENOENT/.test(missing.problem));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
