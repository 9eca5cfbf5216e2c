// The htpasswd hash verifiers against hashes other tools wrote: the SHA-crypt specification's
// own vectors, `openssl passwd` (apr1, $1$, $5$, $6$ with and without rounds=) when openssl is
// installed, bcryptjs for bcrypt, and the well-known {SHA} of "password"; the cost classes that
// decoys are chosen by, and a check with decoys.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { describe, it } from 'node:test';
import bcrypt from 'bcryptjs';
import {
  checkWithDecoys,
  type PasswordVerifier,
  parseHtpasswd,
  passwordVerifier,
} from '../../../src/dataplane/policies/auth/htpasswd.ts';
import { skipWithoutTool } from '../../helpers/missing-tool.ts';

const bytes = (text: string) => Buffer.from(text, 'utf8');

/** The password with its last byte changed (so the lengths stay the same). */
function oneByteOff(password: string): Buffer {
  const changed = bytes(password);
  changed[changed.length - 1] = changed[changed.length - 1]! ^ 1;
  return changed;
}

function assertVerifies(hash: string, password: string, format: string): void {
  const verifier = passwordVerifier(hash);
  assert.ok(verifier, `${format}: ${hash} is not recognised`);
  assert.equal(verifier.format, format);
  assert.equal(verifier.verify(bytes(password)), true, `${hash} should accept ${JSON.stringify(password)}`);
  assert.equal(verifier.verify(oneByteOff(password)), false, `${hash} accepts a password one byte off`);
  assert.equal(verifier.verify(bytes(`${password}x`)), false, `${hash} accepts a longer password`);
}

function hasOpenssl(): boolean {
  try {
    execFileSync('openssl', ['version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

const opensslSkip = skipWithoutTool(
  'openssl',
  hasOpenssl() ? undefined : 'the hashes of openssl passwd were not checked; apt-get install openssl',
);
const opensslPasswd = (flag: string, salt: string, password: string) =>
  execFileSync('openssl', ['passwd', flag, '-salt', salt, password]).toString().trim();

// Lengths around the digest sizes (16, 32, 64 bytes) exercise the block loops; one is not ASCII.
const PASSWORDS = [
  'a',
  'Hello world!',
  'sixteen-bytes-pw',
  'a password of exactly thirty-two',
  'a passphrase longer than one SHA-512 block of sixty four bytes, really it is',
  'pässwörd ✓',
];

describe('SHA-crypt', () => {
  it('matches the vectors of the SHA-crypt specification', async () => {
    assertVerifies('$5$saltstring$5B8vYYiY.CVt1RlTTf8KbXBH3hsxY/GNooZaBBGWEc5', 'Hello world!', 'sha256-crypt');
    assertVerifies(
      '$6$saltstring$svn8UoSVapNtMuq1ukKS4tPQd8iKwSMHWjl/O817G3uBnIFNjnQJuesI68u4OTLiBFdcbYEdFCoEOfaS35inz1',
      'Hello world!',
      'sha512-crypt',
    );
    // rounds= and a salt cut to 16 characters.
    assertVerifies(
      '$5$rounds=10000$saltstringsaltst$3xv.VbSHBb41AL9AvLeujZkZRBAwqFMz2.opqey6IcA',
      'Hello world!',
      'sha256-crypt',
    );
  });

  it('verifies what openssl passwd -5 and -6 write, with and without rounds=', { skip: opensslSkip }, async () => {
    for (const password of PASSWORDS) {
      assertVerifies(opensslPasswd('-5', 'Zq8.x/1', password), password, 'sha256-crypt');
      assertVerifies(opensslPasswd('-6', 'aBcDeFgHiJkLmNoP', password), password, 'sha512-crypt');
    }
    assertVerifies(opensslPasswd('-6', 'rounds=1234$pepper', 'Hello world!'), 'Hello world!', 'sha512-crypt');
  });

  it('clamps rounds below the minimum to 1000, as the specification says', { skip: opensslSkip }, async () => {
    const written = opensslPasswd('-5', 'rounds=1000$abc', 'pw');
    assertVerifies(written.replace('rounds=1000', 'rounds=10'), 'pw', 'sha256-crypt');
  });
});

describe('MD5-crypt', () => {
  it('verifies what openssl passwd -apr1 and -1 write', { skip: opensslSkip }, async () => {
    for (const password of PASSWORDS) {
      assertVerifies(opensslPasswd('-apr1', 'x1Y2z3W4', password), password, 'apr1');
      assertVerifies(opensslPasswd('-1', 'Ab', password), password, 'md5-crypt');
    }
  });

  it('verifies a fixed apr1 vector', async () => {
    // openssl passwd -apr1 -salt abcdefgh secret
    assertVerifies('$apr1$abcdefgh$h9FWgUz3n9YxylKLlR5SQ/', 'secret', 'apr1');
  });
});

describe('bcrypt and {SHA}', () => {
  it('verifies $2a$, $2b$ and $2y$ hashes', async () => {
    const hash = bcrypt.hashSync('correct horse', 4);
    const body = hash.slice(4);
    for (const prefix of ['$2a$', '$2b$', '$2y$']) assertVerifies(prefix + body, 'correct horse', 'bcrypt');
  });

  it('never matches bcrypt with bytes that are not UTF-8, which bcryptjs would read as U+FFFD', () => {
    const verifier = passwordVerifier(bcrypt.hashSync('pw\uFFFD', 4))!;
    assert.equal(verifier.verify(bytes('pw\uFFFD')), true);
    assert.equal(verifier.verify(Buffer.concat([bytes('pw'), Buffer.of(0xff)])), false);
  });

  it('verifies the {SHA} of "password"', async () => {
    assertVerifies('{SHA}W6ph5Mm5Pz8GgiULbPgzG37mj9g=', 'password', 'sha1');
  });
});

describe('formats gw does not verify', () => {
  it('recognises no DES crypt, plain text, unknown $ids, truncated hashes or excessive rounds', () => {
    for (const hash of [
      'abJnggxhB/yWI', // DES crypt
      'plain-password',
      '$y$j9T$salt$hash',
      '$apr1$abcdefgh$h9FWgUz3n9YxylKLlR5SQ', // one character short
      '$5$saltstring$5B8vYYiY.CVt1RlTTf8KbXBH3hsxY/GNooZaBBGWEc', // one character short
      '$2b$10$tooShort',
      '{SHA}not-base64',
      // Over a million SHA-crypt rounds, or a bcrypt cost over 14, is over a second per check.
      '$5$rounds=2000000$abc$5B8vYYiY.CVt1RlTTf8KbXBH3hsxY/GNooZaBBGWEc5',
      bcrypt.hashSync('pw', 4).replace('$04$', '$15$'),
      bcrypt.hashSync('pw', 4).replace('$04$', '$31$'),
      bcrypt.hashSync('pw', 4).replace('$04$', '$03$'),
    ])
      assert.equal(passwordVerifier(hash), undefined, hash);
  });
});

describe('parseHtpasswd', () => {
  it('reads users, skipping blank lines and comments', () => {
    const users = parseHtpasswd([
      '# team',
      '',
      'alice:{SHA}W6ph5Mm5Pz8GgiULbPgzG37mj9g=',
      '  ',
      'bob:$apr1$abcdefgh$h9FWgUz3n9YxylKLlR5SQ/',
    ]);
    assert.ok(users instanceof Map);
    assert.deepEqual([...users.keys()], ['alice', 'bob']);
    assert.equal(users.get('bob')!.verify(bytes('secret')), true);
  });

  it('names the line and the user of an unknown format, never the hash', () => {
    const problem = parseHtpasswd(['alice:{SHA}W6ph5Mm5Pz8GgiULbPgzG37mj9g=', 'carol:abJnggxhB/yWI']);
    assert.ok(!(problem instanceof Map));
    assert.equal(problem.line, 1);
    assert.match(problem.message, /user carol/);
    assert.doesNotMatch(problem.message, /abJnggxhB/);
  });

  it('says which bcrypt costs and SHA-crypt rounds are accepted', () => {
    const problem = parseHtpasswd([`slow:${bcrypt.hashSync('pw', 4).replace('$04$', '$16$')}`]);
    assert.ok(!(problem instanceof Map));
    assert.match(
      problem.message,
      /\(user slow\) has a hash format gw cannot verify; use bcrypt \(htpasswd -B, cost 4 to 14\)/,
    );
    assert.match(problem.message, /at most 1000000 rounds/);
  });

  it('refuses a user named twice and a line without a hash', () => {
    const twice = parseHtpasswd([
      'dave:{SHA}W6ph5Mm5Pz8GgiULbPgzG37mj9g=',
      'dave:$apr1$abcdefgh$h9FWgUz3n9YxylKLlR5SQ/',
    ]);
    assert.ok(!(twice instanceof Map));
    assert.equal(twice.line, 1);
    assert.match(twice.message, /names user dave again/);
    const noHash = parseHtpasswd(['erin:']);
    assert.ok(!(noHash instanceof Map));
    assert.equal(noHash.line, 0);
  });
});

describe('cost classes and decoys', () => {
  it('puts hashes that cost the same in one class, and only {SHA} on the event loop', () => {
    const classOf = (hash: string) => {
      const verifier = passwordVerifier(hash)!;
      return { costClass: verifier.costClass, inline: verifier.inline };
    };
    assert.deepEqual(classOf(bcrypt.hashSync('a', 5)), { costClass: 'bcrypt cost 5', inline: false });
    assert.deepEqual(classOf(bcrypt.hashSync('b', 5).replace('$2b$', '$2y$')), {
      costClass: 'bcrypt cost 5',
      inline: false,
    });
    assert.equal(classOf(bcrypt.hashSync('a', 6)).costClass, 'bcrypt cost 6');
    assert.deepEqual(classOf('$apr1$abcdefgh$h9FWgUz3n9YxylKLlR5SQ/'), { costClass: 'md5-crypt', inline: false });
    assert.equal(classOf('$1$Ab$bTueS.Gv6/ongfqRFlj0t0').costClass, 'md5-crypt');
    assert.equal(
      classOf('$5$saltstring$5B8vYYiY.CVt1RlTTf8KbXBH3hsxY/GNooZaBBGWEc5').costClass,
      'sha256-crypt 5000 rounds',
    );
    assert.equal(
      classOf('$5$rounds=10000$saltstringsaltst$3xv.VbSHBb41AL9AvLeujZkZRBAwqFMz2.opqey6IcA').costClass,
      'sha256-crypt 10000 rounds',
    );
    assert.deepEqual(classOf('{SHA}W6ph5Mm5Pz8GgiULbPgzG37mj9g='), { costClass: 'sha1', inline: true });
  });

  it('checks the decoys only when the own hash fails, and never reports a decoy that matches', () => {
    const calls: string[] = [];
    const counting = (name: string, matches: boolean): PasswordVerifier => ({
      format: 'sha1',
      hash: name,
      costClass: name,
      inline: true,
      verify: () => {
        calls.push(name);
        return matches;
      },
    });
    const password = bytes('pw');
    assert.equal(checkWithDecoys(password, counting('own', true), [counting('decoy', false)]), true);
    assert.deepEqual(calls.splice(0), ['own']);
    assert.equal(
      checkWithDecoys(password, counting('own', false), [counting('d1', true), counting('d2', false)]),
      false,
    );
    assert.deepEqual(calls.splice(0), ['own', 'd1', 'd2']);
    assert.equal(checkWithDecoys(password, undefined, [counting('d1', true)]), false, 'an unknown user never passes');
    assert.deepEqual(calls.splice(0), ['d1']);
  });
});
