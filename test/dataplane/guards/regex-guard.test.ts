// The regex prompt guard's detectors and its Mask/Reject on one text: the builtins find what
// they name and no random digits (checksums), placeholders name the match, configured patterns
// run in linear time, and a pattern RE2 cannot compile names its field.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Regex } from '../../../src/api/types/ai.ts';
import { luhnValid } from '../../../src/dataplane/ai/guards/builtins.ts';
import {
  type CompiledRegexGuard,
  compileRegexGuard,
  RegexGuardConfigError,
} from '../../../src/dataplane/ai/guards/regex-guard.ts';

function guard(regex: Regex): CompiledRegexGuard {
  const compiled = compileRegexGuard(regex, 'ai.promptGuard.request[0].regex');
  assert.ok(!(compiled instanceof RegexGuardConfigError), String(compiled));
  return compiled;
}

/** The text as Mask leaves it (the input when nothing matched). */
function masked(regex: Regex, text: string): string {
  const verdict = guard({ action: 'Mask', ...regex }).scan(text);
  assert.notEqual(verdict.kind, 'reject');
  return verdict.kind === 'mask' ? verdict.text : text;
}

describe('builtins', () => {
  it('CreditCard: Luhn-valid numbers of 13-19 digits, with or without spaces or dashes', () => {
    for (const card of [
      '4111 1111 1111 1111',
      '4111-1111-1111-1111',
      '5500005555555559',
      '378282246310005',
      '6011000990139424',
    ]) {
      assert.equal(
        masked({ builtins: ['CreditCard'] }, `pay with ${card} today`),
        'pay with <CREDIT_CARD> today',
        card,
      );
    }
  });

  it('CreditCard: digits after another kind of separator are not the card (an SSN right after one is found)', () => {
    // 4111111111111111078 passes Luhn: read as one 19-digit number it would swallow the SSN's area.
    const both = guard({ action: 'Mask', builtins: ['CreditCard', 'Ssn'] });
    assert.deepEqual(both.scan('pay 4111-1111-1111-1111 078-05-1120 now'), {
      kind: 'mask',
      text: 'pay <CREDIT_CARD> <SSN> now',
      names: ['CREDIT_CARD', 'SSN'],
    });
    assert.equal(
      masked({ builtins: ['CreditCard'] }, 'ids 1234-5678 4111 1111 1111 1111'),
      'ids 1234-5678 <CREDIT_CARD>',
    );
  });

  it('CreditCard: a digit run that fails the checksum, or is too short or long, is left alone', () => {
    for (const digits of ['4111 1111 1111 1112', '1234567890123456', '411111111111', '41111111111111111111111']) {
      assert.equal(masked({ builtins: ['CreditCard'] }, `order ${digits}`), `order ${digits}`, digits);
    }
    assert.ok(luhnValid('79927398713'));
    assert.ok(!luhnValid('79927398710'));
  });

  it('Ssn: AAA-GG-SSSS (one separator throughout), not the never-issued areas, groups or serials', () => {
    assert.equal(masked({ builtins: ['Ssn'] }, 'SSN 078-05-1120.'), 'SSN <SSN>.');
    assert.equal(masked({ builtins: ['Ssn'] }, 'SSN 078 05 1120'), 'SSN <SSN>');
    for (const bad of [
      '000-12-3456',
      '666-12-3456',
      '912-34-5678',
      '123-00-4567',
      '123-45-0000',
      '123-45 6789',
      '078051120',
    ]) {
      assert.equal(masked({ builtins: ['Ssn'] }, `n ${bad}`), `n ${bad}`, bad);
    }
  });

  it('CaSin: nine Luhn-valid digits, grouped 3-3-3 or not; not a business number (starting with 8)', () => {
    assert.equal(masked({ builtins: ['CaSin'] }, 'SIN 046 454 286'), 'SIN <CA_SIN>');
    assert.equal(masked({ builtins: ['CaSin'] }, 'SIN 046-454-286'), 'SIN <CA_SIN>');
    assert.equal(masked({ builtins: ['CaSin'] }, 'SIN 046454286'), 'SIN <CA_SIN>');
    assert.equal(masked({ builtins: ['CaSin'] }, 'SIN 130-692-544'), 'SIN <CA_SIN>');
    for (const bad of ['046 454 287', '123 456 789', '846 454 288', '046 454-286']) {
      assert.equal(masked({ builtins: ['CaSin'] }, `SIN ${bad}`), `SIN ${bad}`, bad);
    }
  });

  it('PhoneNumber: North American numbers in their usual writings and + international ones', () => {
    for (const phone of [
      '(415) 555-2671',
      '415-555-2671',
      '415.555.2671',
      '+1 415 555 2671',
      '+44 20 7946 0958',
      '+49 30 901820',
    ]) {
      assert.equal(masked({ builtins: ['PhoneNumber'] }, `call ${phone} now`), 'call <PHONE_NUMBER> now', phone);
    }
    for (const other of ['call 123-456-7890', 'version 1.2.3', 'year 2024', 'id 4155552671123']) {
      assert.equal(masked({ builtins: ['PhoneNumber'] }, other), other, other);
    }
  });

  it('Email: addresses, and not an @ handle or a bare domain', () => {
    assert.equal(
      masked({ builtins: ['Email'] }, 'mail jane.doe+work@mail.example.co.uk or bob@example.com'),
      'mail <EMAIL_ADDRESS> or <EMAIL_ADDRESS>',
    );
    assert.equal(masked({ builtins: ['Email'] }, 'ping @jane at example.com'), 'ping @jane at example.com');
  });

  it('several builtins in one text: each match has its own placeholder', () => {
    assert.equal(
      masked(
        { builtins: ['Ssn', 'CreditCard', 'Email', 'PhoneNumber', 'CaSin'] },
        'ssn 078-05-1120 card 4111111111111111 mail a@b.io phone 415-555-2671 sin 046 454 286',
      ),
      'ssn <SSN> card <CREDIT_CARD> mail <EMAIL_ADDRESS> phone <PHONE_NUMBER> sin <CA_SIN>',
    );
  });
});

describe('configured patterns', () => {
  it('Mask: a named match becomes <name>, an unnamed one <masked>; empty matches mask nothing', () => {
    const regex: Regex = {
      matches: [
        { name: 'PROJECT', pattern: 'Project [A-Z][a-z]+' },
        { pattern: 'secret-[0-9]+' },
        { name: 'EMPTY', pattern: 'x*' },
      ],
    };
    assert.equal(masked(regex, 'Project Falcon uses secret-42'), '<PROJECT> uses <masked>');
    const verdict = guard({ action: 'Mask', ...regex }).scan('Project Falcon');
    assert.deepEqual(verdict, { kind: 'mask', text: '<PROJECT>', names: ['PROJECT'] });
  });

  it('Reject reports the first detector that matched; no match passes', () => {
    const reject = guard({
      action: 'Reject',
      builtins: ['Email'],
      matches: [{ name: 'bad', pattern: '(?i)forbidden' }],
    });
    assert.deepEqual(reject.scan('this is FORBIDDEN'), { kind: 'reject', name: 'bad' });
    assert.deepEqual(reject.scan('to a@b.io'), { kind: 'reject', name: 'EMAIL_ADDRESS' });
    assert.deepEqual(reject.scan('nothing here'), { kind: 'pass' });
  });

  it('unset action masks', () => {
    assert.equal(guard({ builtins: ['Email'] }).action, 'Mask');
  });

  it('a catastrophic-backtracking pattern on a long input finishes in linear time', () => {
    const catastrophic = guard({ action: 'Reject', matches: [{ name: 'nested', pattern: '(a+)+$' }] });
    const input = `${'a'.repeat(100_000)}!`;
    const started = performance.now();
    assert.deepEqual(catastrophic.scan(input), { kind: 'pass' });
    const elapsed = performance.now() - started;
    // A backtracking engine takes longer than the universe's age here; RE2 takes milliseconds.
    assert.ok(elapsed < 2000, `took ${elapsed} ms`);
    const masking = guard({ matches: [{ name: 'A', pattern: '(a|aa)+$' }] });
    assert.deepEqual(masking.scan(`${'a'.repeat(50_000)}`), { kind: 'mask', text: '<A>', names: ['A'] });
  });

  it('a pattern RE2 cannot compile is a configuration error naming its field', () => {
    for (const pattern of ['(?<=a)b', '(a', '(a)\\1']) {
      const compiled = compileRegexGuard(
        { matches: [{ pattern: 'ok' }, { pattern }] },
        'ai.promptGuard.response[1].regex',
      );
      assert.ok(compiled instanceof RegexGuardConfigError, pattern);
      assert.equal(compiled.field, 'ai.promptGuard.response[1].regex.matches[1].pattern');
      assert.match(compiled.message, /RE2 syntax/);
    }
  });
});
