// A compiled regex prompt guard (Regex: action, matches, builtins): finds its detectors' matches
// in one text and masks them or reports the first. Every configured pattern runs in re2js, a
// linear-time RE2 engine: no pattern (`(a+)+$`) and no prompt can make gw backtrack; the
// builtins are linear by construction (builtins.ts says how).
// Detectors run in order, builtins first then `matches`, each on the text the previous ones
// left (a placeholder is never matched again by a later detector: none of them matches `<...>`
// unless a configured pattern is written to).
import { RE2JS, RE2JSException } from 're2js';
import type { Regex } from '../../../api/types/ai.ts';
import { builtinDetector, type Detector, re2Detector } from './builtins.ts';
import type { Guard, GuardCall, GuardConfigProblem, GuardVerdict } from './guard.ts';

/** The placeholder of an unnamed configured pattern's match (agentgateway writes the same). */
export const UNNAMED_PLACEHOLDER = '<masked>';

/** What one guard does to one text. */
export type TextVerdict =
  | { kind: 'pass' }
  | { kind: 'mask'; text: string; names: string[] }
  | { kind: 'reject'; name: string };

export interface CompiledRegexGuard {
  readonly action: 'Mask' | 'Reject';
  /** The longest text one of its matches spans; undefined when a configured pattern has no bound. */
  readonly reach: number | undefined;
  scan(text: string): TextVerdict;
}

/** A configured pattern re2js cannot compile: the field and why. */
export class RegexGuardConfigError extends Error {
  readonly field: string;
  constructor(field: string, message: string) {
    super(message);
    this.field = field;
  }
}

/** Compiles `regex` (at `field`, such as `ai.promptGuard.request[0].regex`). */
export function compileRegexGuard(regex: Regex, field: string): CompiledRegexGuard | RegexGuardConfigError {
  const detectors: Detector[] = (regex.builtins ?? []).map(builtinDetector);
  const matches = regex.matches ?? [];
  for (let i = 0; i < matches.length; i++) {
    const { pattern, name } = matches[i]!;
    let compiled: RE2JS;
    try {
      compiled = RE2JS.compile(pattern);
    } catch (error) {
      const reason = error instanceof RE2JSException ? error.message : String(error);
      return new RegexGuardConfigError(
        `${field}.matches[${i}].pattern`,
        `${reason}. Patterns use RE2 syntax (no backreferences or lookaround); fix the pattern.`,
      );
    }
    detectors.push(re2Detector(name !== undefined && name !== '' ? name : '', compiled));
  }
  return new RegexGuard(regex.action ?? 'Mask', detectors);
}

class RegexGuard implements CompiledRegexGuard {
  readonly action: 'Mask' | 'Reject';
  readonly reach: number | undefined;
  readonly #detectors: Detector[];

  constructor(action: 'Mask' | 'Reject', detectors: Detector[]) {
    this.action = action;
    this.#detectors = detectors;
    const reaches = detectors.map((detector) => detector.reach);
    this.reach = reaches.includes(undefined) ? undefined : Math.max(...(reaches as number[]));
  }

  scan(text: string): TextVerdict {
    let working = text;
    const names: string[] = [];
    for (const detector of this.#detectors) {
      const found = detector.findAll(working);
      if (found.length === 0) continue;
      const label = detector.name === '' ? 'masked' : detector.name;
      if (this.action === 'Reject') return { kind: 'reject', name: label };
      names.push(label);
      const placeholder = detector.name === '' ? UNNAMED_PLACEHOLDER : `<${detector.name}>`;
      let out = '';
      let from = 0;
      for (const [start, end] of found) {
        out += working.slice(from, start) + placeholder;
        from = end;
      }
      working = out + working.slice(from);
    }
    return names.length === 0 ? { kind: 'pass' } : { kind: 'mask', text: working, names };
  }
}

/** A regex configuration as a prompt guard (the kind `regex` of guard.ts). */
export function regexGuard(regex: Regex, path: string): Guard | GuardConfigProblem {
  const compiled = compileRegexGuard(regex, path);
  if (compiled instanceof RegexGuardConfigError) return { path: compiled.field, message: compiled.message };
  const check = (call: GuardCall): GuardVerdict => {
    const replacements: Array<string | undefined> = [];
    const matched = new Set<string>();
    for (const { text } of call.texts) {
      const verdict = compiled.scan(text);
      if (verdict.kind === 'reject') return { action: 'reject', matched: [verdict.name] };
      if (verdict.kind === 'mask') {
        for (const name of verdict.names) matched.add(name);
        replacements.push(verdict.text);
      } else replacements.push(undefined);
    }
    return matched.size === 0 ? { action: 'pass' } : { action: 'mask', replacements, matched: [...matched] };
  };
  const guard: Guard =
    compiled.action === 'Reject'
      ? { kind: 'regex', failureMode: 'FailClosed', check }
      : { kind: 'regex', failureMode: 'FailClosed', check, skipsStreams: true };
  // Streams are read by Reject guards only: Mask does not change streamed content.
  if (compiled.action === 'Reject') {
    guard.scanStream = (window) => {
      const verdict = compiled.scan(window);
      return verdict.kind === 'reject' ? verdict.name : undefined;
    };
    if (compiled.reach !== undefined) guard.streamReach = compiled.reach;
  }
  return guard;
}
