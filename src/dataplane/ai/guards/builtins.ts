// The regex guard's builtin detectors (BuiltIn: Ssn, CreditCard, PhoneNumber, Email, CaSin).
// Each is a linear-time RE2 pattern (re2js) that finds candidates, and for the numbers that carry
// one, a check of the candidate's digits (Luhn for card numbers and Canadian SINs, the Social
// Security Administration's never-issued ranges for SSNs), so that a random run of digits is not
// taken for one. The placeholder of a masked match is the entity's name in angle brackets, as
// agentgateway's prompt guard writes it (`<CREDIT_CARD>`).
import { RE2JS } from 're2js';
import type { BuiltIn } from '../../../api/types/ai.ts';

export interface Detector {
  /** The entity name: what a masked match is replaced by (`<NAME>`) and what the log reports. */
  readonly name: string;
  readonly pattern: RE2JS;
  /** Whether a candidate the pattern found really is one (a checksum); unset: every candidate is. */
  readonly accept?: (candidate: string) => boolean;
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

/** An international number (+ country code) has 8 to 15 digits (ITU-T E.164). */
function phoneValid(candidate: string): boolean {
  if (!candidate.startsWith('+') || candidate.startsWith('+1')) return true;
  const length = digitsOf(candidate).length;
  return length >= 8 && length <= 15;
}

const DETECTORS: Record<BuiltIn, Detector> = {
  Ssn: {
    name: 'SSN',
    // The same separator on both sides of the group.
    pattern: RE2JS.compile(String.raw`\b[0-9]{3}(?:-[0-9]{2}-|\.[0-9]{2}\.| [0-9]{2} )[0-9]{4}\b`),
    accept: ssnValid,
  },
  CreditCard: {
    name: 'CREDIT_CARD',
    // Digits with at most one space or dash between them; the length and the checksum decide.
    pattern: RE2JS.compile(String.raw`\b[0-9](?:[ -]?[0-9]){12,18}\b`),
    accept: cardValid,
  },
  PhoneNumber: {
    name: 'PHONE_NUMBER',
    // North American numbers, with or without +1 and parentheses round the area code, and
    // international ones written with their + country code.
    pattern: RE2JS.compile(
      String.raw`(?:\+1[ .-]?)?(?:\([2-9][0-9]{2}\)[ .-]?|\b[2-9][0-9]{2}[ .-]?)[2-9][0-9]{2}[ .-]?[0-9]{4}\b` +
        String.raw`|\+[2-9][0-9]{0,2}(?:[ .-]?[0-9]{1,4}){2,6}\b`,
    ),
    accept: phoneValid,
  },
  Email: {
    name: 'EMAIL_ADDRESS',
    pattern: RE2JS.compile(
      String.raw`\b[A-Za-z0-9._%+-]+@[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}\b`,
    ),
  },
  CaSin: {
    name: 'CA_SIN',
    pattern: RE2JS.compile(String.raw`\b[0-9]{3}(?:-[0-9]{3}-| [0-9]{3} |[0-9]{3})[0-9]{3}\b`),
    accept: sinValid,
  },
};

export function builtinDetector(builtin: BuiltIn): Detector {
  return DETECTORS[builtin];
}
