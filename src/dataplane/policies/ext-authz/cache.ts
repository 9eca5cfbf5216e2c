// ExtAuthCache: decisions kept under a key built from CEL values of the request, each until its
// TTL runs out, at most maxEntries of them (the least recently used goes first). The store lives
// in the PolicyRuntime under the policy's scope and settings, so a configuration reload that
// keeps the policy keeps its cache.
import { Duration } from '@marcbachmann/cel-js/evaluator';
import type { ExtAuthCache } from '../../../api/types/inbound-auth.ts';
import { durationMs } from '../../../util/units.ts';
import { compileExpression, type Expression, ExpressionError } from '../../cel/expression.ts';
import { compileField } from '../cel-field.ts';
import type { PolicyExchange } from '../exchange.ts';
import { isProblem, type PolicyCompileContext, type PolicyProblem } from '../types.ts';
import type { Decision } from './decision.ts';

export const DEFAULT_MAX_ENTRIES = 10_000;
/** A decision carrying more than this (a deny body, header values) is not kept: maxEntries bounds memory. */
export const MAX_CACHED_DECISION_BYTES = 64 * 1024;

interface Entry {
  decision: Decision;
  /** Epoch milliseconds from which the entry is stale. */
  expiresAt: number;
}

/** A bounded LRU of decisions with per-entry expiry. */
export class DecisionCache {
  readonly maxEntries: number;
  // A Map iterates in insertion order: re-inserting on use keeps the least recently used first.
  private readonly entries = new Map<string, Entry>();

  constructor(maxEntries: number) {
    this.maxEntries = maxEntries;
  }

  get size(): number {
    return this.entries.size;
  }

  /** The decision kept under `key` while `now` (epoch ms) is before its expiry. */
  get(key: string, now: number): Decision | undefined {
    const entry = this.entries.get(key);
    if (!entry) return undefined;
    this.entries.delete(key);
    if (entry.expiresAt <= now) return undefined;
    this.entries.set(key, entry);
    return entry.decision;
  }

  /** Keeps `decision` until `expiresAt`; one too large to keep is left out. */
  set(key: string, decision: Decision, expiresAt: number): void {
    if (decisionBytes(decision) > MAX_CACHED_DECISION_BYTES) return;
    this.entries.delete(key);
    this.entries.set(key, { decision, expiresAt });
    while (this.entries.size > this.maxEntries) {
      const oldest = this.entries.keys().next().value as string;
      this.entries.delete(oldest);
    }
  }
}

/** Roughly what a decision holds: its deny body and header values. */
function decisionBytes(decision: Decision): number {
  if (!decision.allow) {
    let size = decision.response.body?.length ?? 0;
    for (const value of Object.values(decision.response.headers ?? {})) size += String(value).length;
    return size;
  }
  let size = 0;
  for (const change of decision.headers) size += change.value.length;
  for (const change of decision.responseHeaders) size += change.value.length;
  return size;
}

export interface CompiledCache {
  readonly store: DecisionCache;
  /** The key of this request, or undefined when an expression fails (the cache is bypassed). */
  keyOf(exchange: PolicyExchange): string | undefined;
  /** How long from `now` (epoch ms) to keep a decision just applied to this request, in ms; undefined: do not keep it. */
  ttlMs(exchange: PolicyExchange, now: number): number | undefined;
}

export function compileCache(
  cache: ExtAuthCache,
  context: PolicyCompileContext,
  field: string,
  identity: string,
): CompiledCache | PolicyProblem {
  const keys: Expression[] = [];
  for (const [index, source] of cache.key.entries()) {
    const expression = compileField(source, `${field}.cache.key[${index}]`);
    if (isProblem(expression)) return expression;
    keys.push(expression);
  }
  const ttl = compileTtl(cache.ttl);
  if (ttl instanceof ExpressionError)
    return {
      field: `${field}.cache.ttl`,
      message: `is neither a duration such as 5m nor valid CEL: ${ttl.message}`,
    };
  const maxEntries = cache.maxEntries ?? DEFAULT_MAX_ENTRIES;
  const store = context.runtime.use(`extauthz cache ${identity}`, () => new DecisionCache(maxEntries));
  return {
    store,
    keyOf: (exchange) => {
      const variables = exchange.cel();
      const parts: unknown[] = [];
      for (const expression of keys) {
        let value: unknown;
        try {
          value = expression.evaluate(variables);
        } catch {
          return undefined;
        }
        const part = keyPart(value);
        if (part === undefined) return undefined;
        parts.push(part);
      }
      return JSON.stringify(parts);
    },
    ttlMs: (exchange, now) => {
      if (typeof ttl === 'number') return ttl;
      let value: unknown;
      try {
        value = ttl.evaluate(exchange.cel());
      } catch {
        return undefined;
      }
      return ttlOf(value, now);
    },
  };
}

/** A fixed duration ("5m") or the CEL expression computing one. */
function compileTtl(source: string): number | Expression | ExpressionError {
  try {
    return durationMs(source);
  } catch {
    return compileExpression(source);
  }
}

/**
 * A key value tagged with its type, so that the int 1, the double 1.0 and the string "1" are
 * different keys. Only scalars make keys: a map or list gives undefined (no caching).
 */
function keyPart(value: unknown): unknown {
  switch (typeof value) {
    case 'string':
      return ['s', value];
    case 'bigint':
      return ['i', value.toString()];
    case 'number':
      return ['d', Number.isNaN(value) ? 'NaN' : value];
    case 'boolean':
      return value;
    case 'object':
      if (value === null) return null;
      if (value instanceof Uint8Array) return ['b', Buffer.from(value).toString('base64')];
      return undefined;
    default:
      return undefined;
  }
}

/**
 * Milliseconds to keep a decision from what the ttl expression gave: a duration, an expiry
 * timestamp, or an expiry as seconds since the Unix epoch (int or double).
 */
export function ttlOf(value: unknown, now: number): number | undefined {
  let ms: number;
  if (value instanceof Duration) ms = value.valueOf();
  else if (value instanceof Date) ms = value.getTime() - now;
  else if (typeof value === 'bigint') ms = Number(value) * 1000 - now;
  else if (typeof value === 'number') ms = value * 1000 - now;
  else return undefined;
  return Number.isFinite(ms) && ms > 0 ? ms : undefined;
}
