// Local rate limits (LocalRateLimit): token buckets in this proxy process, one per limit, all of
// which apply. A requests limit takes 1 per request before it is forwarded; a tokens limit only
// needs something left before forwarding and is charged the request's input + output tokens
// once it is done, so a completion that overdraws the bucket is served and the requests after it
// are refused until the refill (spec: "token limits apply to future requests"). Buckets live in
// the PolicyRuntime, so a configuration reload that keeps a limit keeps its bucket.
import type { LocalRateLimit } from '../../../api/types/traffic.ts';
import type { PolicyExchange } from '../exchange.ts';
import type { LocalResponse, PolicyCompileContext } from '../types.ts';
import { type LimitStatus, mostConstrained, secondsUntil, tooManyRequests } from './headers.ts';
import { TokenBucket } from './token-bucket.ts';

const UNIT_MS: Record<LocalRateLimit['unit'], number> = {
  Seconds: 1000,
  Minutes: 60_000,
  Hours: 3_600_000,
};

interface LocalEntry {
  counts: 'requests' | 'tokens';
  bucket: TokenBucket;
}

/** What an admitted request reports for the x-ratelimit-* headers. */
export interface Admission {
  status: LimitStatus | undefined;
}

export class LocalLimits {
  private readonly entries: readonly LocalEntry[];
  private readonly tokenBuckets: readonly TokenBucket[];

  constructor(entries: readonly LocalEntry[]) {
    this.entries = entries;
    this.tokenBuckets = entries.filter((entry) => entry.counts === 'tokens').map((entry) => entry.bucket);
  }

  /**
   * Admits the request (taking 1 from every requests bucket) or answers 429 when any bucket is
   * empty, taking nothing then: a refused request costs no limit anything.
   */
  admit(exchange: PolicyExchange, admission: Admission): LocalResponse | undefined {
    let blocking: LocalEntry | undefined;
    let blockingWait = -1;
    for (const entry of this.entries) {
      const left = entry.bucket.remaining();
      if (entry.counts === 'requests' ? left >= 1 : left > 0) continue;
      // With several empty buckets the client must wait for the last of them to refill.
      const wait = entry.bucket.msUntilRefill();
      if (wait > blockingWait) {
        blocking = entry;
        blockingWait = wait;
      }
    }
    if (blocking) return tooManyRequests(statusOf(blocking.bucket), secondsUntil(blockingWait));
    let status = admission.status;
    for (const entry of this.entries) {
      if (entry.counts === 'requests') entry.bucket.take(1);
      status = mostConstrained(status, statusOf(entry.bucket));
    }
    admission.status = status;
    if (this.tokenBuckets.length > 0) exchange.onDone((record) => this.chargeTokens(record.llm?.usage));
    return undefined;
  }

  private chargeTokens(usage: { inputTokens: number; outputTokens: number } | undefined): void {
    if (!usage) return;
    const used = usage.inputTokens + usage.outputTokens;
    if (!(used > 0)) return;
    for (const bucket of this.tokenBuckets) bucket.charge(used);
  }
}

function statusOf(bucket: TokenBucket): LimitStatus {
  return {
    limit: bucket.capacity,
    remaining: Math.floor(bucket.remaining()),
    resetSeconds: secondsUntil(bucket.msUntilRefill()),
  };
}

/** The bucket settings of a limit: capacity rate + burst, refilled by the rate once per unit. */
export function bucketSettings(limit: LocalRateLimit): { capacity: number; refillAmount: number; intervalMs: number } {
  const rate = limit.requests ?? limit.tokens ?? 0;
  return { capacity: rate + (limit.burst ?? 0), refillAmount: rate, intervalMs: UNIT_MS[limit.unit] };
}

/**
 * The limits of one `local` list. `place` tells apart lists of the same scope (inline or a
 * conditional entry); a bucket is kept across reloads while its scope, place and settings stay.
 */
export function compileLocalLimits(
  limits: readonly LocalRateLimit[],
  context: PolicyCompileContext,
  place: string,
): LocalLimits {
  const clock = context.runtime.clock.monotonicMs;
  const seen = new Map<string, number>();
  const entries = limits.map((limit): LocalEntry => {
    const counts = limit.requests !== undefined ? 'requests' : 'tokens';
    const settings = bucketSettings(limit);
    const identity = `${counts} ${settings.refillAmount}/${limit.unit} burst ${limit.burst ?? 0}`;
    // Two identical limits in one list are two buckets (each takes its own share).
    const occurrence = (seen.get(identity) ?? 0) + 1;
    seen.set(identity, occurrence);
    const key = `rateLimit.local ${context.owner?.('rateLimit') ?? context.scope} ${place} ${identity} #${occurrence}`;
    return { counts, bucket: context.runtime.use(key, () => new TokenBucket(settings, clock)) };
  });
  return new LocalLimits(entries);
}
