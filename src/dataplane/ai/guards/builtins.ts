// The regex guard's builtin detectors (BuiltIn: Ssn, CreditCard, PhoneNumber, Email, CaSin).
// Each is a pattern that finds candidates and, for the numbers that carry one, a check of the
// candidate's digits (Luhn for card numbers and Canadian SINs, the Social Security
// Administration's never-issued ranges for SSNs), so that a random run of digits is not taken for
// one. The placeholder of a masked match is the entity's name in angle brackets, as agentgateway's
// prompt guard writes it (`<CREDIT_CARD>`).
//
// Linear time: the number patterns run in V8's own engine, which is some fifty times faster than
// re2js on prose — and safe here, because each is written so that no position can be tried more
// than a bounded number of ways: fixed lengths, or a bounded repeat of a step that either takes a
// separator or a digit, never both (no nested or overlapping repeats). Their cost is linear in
// the text whatever it holds (test/dataplane/guards/builtins-linear.test.ts measures the growth on
// inputs built to make a backtracking engine work). Email has unbounded parts whose overlap a
// backtracking engine would retry, so it stays in re2js, where RE2's literal search for `@` makes
// it as fast. Configured patterns (`matches`) are a user's, and always run in re2js.
import { RE2JS } from 're2js';
import type { BuiltIn } from '../../../api/types/ai.ts';

export interface Detector {
  /** The entity name: what a masked match is replaced by (`<NAME>`) and what the log reports. */
  readonly name: string;
  /** The [start, end) ranges of the accepted, non-empty matches in `text`, left to right. */
  findAll(text: string): Array<[number, number]>;
  /**
   * The longest text one match spans (undefined: no bound, a configured pattern): how much of a
   * stream's earlier text a match completed by new text can reach back into.
   */
  readonly reach?: number;
}

/** A detector of a pattern re2js runs (configured patterns; Email). */
export function re2Detector(
  name: string,
  pattern: RE2JS,
  accept?: (candidate: string) => boolean,
  reach?: number,
): Detector {
  return {
    name,
    ...(reach === undefined ? {} : { reach }),
    findAll(text) {
      const found: Array<[number, number]> = [];
      const matcher = pattern.matcher(text);
      while (matcher.find()) {
        const start = matcher.start();
        const end = matcher.end();
        // An empty match (`a*`) masks nothing: a placeholder there would only insert text.
        if (end === start) continue;
        if (accept && !accept(text.slice(start, end))) continue;
        found.push([start, end]);
      }
      return found;
    },
  };
}

/** A detector of a builtin number pattern V8 runs (see the header: each is bounded per position). */
function nativeDetector(
  name: string,
  source: string,
  reach: number,
  accept?: (candidate: string) => boolean,
  trim?: (candidate: string) => number,
): Detector {
  const pattern = new RegExp(source, 'g');
  return {
    name,
    reach,
    findAll(text) {
      const found: Array<[number, number]> = [];
      pattern.lastIndex = 0;
      for (let match = pattern.exec(text); match !== null; match = pattern.exec(text)) {
        let candidate = match[0];
        const length = trim === undefined ? candidate.length : trim(candidate);
        if (length < candidate.length) {
          // The rest is something else: it is looked at again, from where the candidate was cut.
          candidate = candidate.slice(0, length);
          pattern.lastIndex = match.index + length;
        }
        if (accept === undefined || accept(candidate)) found.push([match.index, match.index + length]);
      }
      return found;
    },
  };
}

/** The digits of a candidate, its separators (spaces, dashes, dots) left out. */
function digitsOf(candidate: string): string {
  return candidate.replace(/[^0-9]/g, '');
}

/** The Luhn (mod 10) checksum over a string of digits: card numbers and Canadian SINs carry it. */
export function luhnValid(digits: string): boolean {
  let sum = 0;
  let double = false;
  for (let i = digits.length - 1; i >= 0; i--) {
    let digit = digits.charCodeAt(i) - 48;
    if (double) {
      digit *= 2;
      if (digit > 9) digit -= 9;
    }
    sum += digit;
    double = !double;
  }
  return sum % 10 === 0;
}

/**
 * A US SSN written AAA-GG-SSSS (dashes, spaces or dots): area 000, 666 and 900-999, group 00 and
 * serial 0000 are never issued, so a candidate with one is not an SSN. Nine digits unbroken are
 * not taken (they are as likely an order number or a Canadian SIN).
 */
function ssnValid(candidate: string): boolean {
  const digits = digitsOf(candidate);
  const area = digits.slice(0, 3);
  return (
    area !== '000' && area !== '666' && area[0] !== '9' && digits.slice(3, 5) !== '00' && digits.slice(5) !== '0000'
  );
}

/**
 * A card number is written with one kind of separator (`4111 1111 1111 1111`, `4111-1111-...`):
 * where another kind follows (`4111-1111-1111-1111 078-05-1120`), the digits after it are not the
 * card's. The length of the candidate's part up to there.
 */
function oneSeparatorKind(candidate: string): number {
  let separator = '';
  for (let i = 0; i < candidate.length; i++) {
    const c = candidate[i]!;
    if (c !== ' ' && c !== '-') continue;
    if (separator === '') separator = c;
    else if (c !== separator) return i;
  }
  return candidate.length;
}

/** A card number: 13 to 19 digits that pass the Luhn check. */
function cardValid(candidate: string): boolean {
  const digits = digitsOf(candidate);
  return digits.length >= 13 && digits.length <= 19 && luhnValid(digits);
}

/**
 * A Canadian SIN: nine digits that pass the Luhn check. None starts with 8 (business numbers);
 * 0 is kept, for the sample SINs people write (046 454 286 is the government's own example).
 */
function sinValid(candidate: string): boolean {
  const digits = digitsOf(candidate);
  return digits.length === 9 && digits[0] !== '8' && luhnValid(digits);
}

const DETECTORS: Record<BuiltIn, Detector> = {
  // The same separator on both sides of the group; eleven characters at most.
  Ssn: nativeDetector('SSN', String.raw`\b[0-9]{3}(?:-[0-9]{2}-|\.[0-9]{2}\.| [0-9]{2} )[0-9]{4}\b`, 11, ssnValid),
  // Digits with at most one space or dash between them (each step a separator or a digit, at
  // most 18 steps), one kind of separator; the length and the checksum decide.
  CreditCard: nativeDetector(
    'CREDIT_CARD',
    String.raw`\b[0-9](?:[ -]?[0-9]){12,18}\b`,
    37,
    cardValid,
    oneSeparatorKind,
  ),
  // North American numbers, with or without +1 and parentheses round the area code (eighteen
  // characters at most), and international ones written with their + country code: 8 to 15
  // digits with at most one space, dot or dash between two of them.
  PhoneNumber: nativeDetector(
    'PHONE_NUMBER',
    String.raw`(?:\+1[ .-]?)?(?:\([2-9][0-9]{2}\)[ .-]?|\b[2-9][0-9]{2}[ .-]?)[2-9][0-9]{2}[ .-]?[0-9]{4}\b` +
      String.raw`|\+[2-9](?:[ .-]?[0-9]){7,14}\b`,
    30,
  ),
  Email: re2Detector(
    'EMAIL_ADDRESS',
    RE2JS.compile(
      String.raw`\b[A-Za-z0-9._%+-]+@[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}\b`,
    ),
    undefined,
    // The longest address SMTP carries (RFC 5321): a longer one split across stream events is missed.
    254,
  ),
  // Nine digits, grouped 3-3-3 by one kind of separator or not at all: eleven characters at most.
  CaSin: nativeDetector('CA_SIN', String.raw`\b[0-9]{3}(?:-[0-9]{3}-| [0-9]{3} |[0-9]{3})[0-9]{3}\b`, 11, sinValid),
};

export function builtinDetector(builtin: BuiltIn): Detector {
  return DETECTORS[builtin];
}
