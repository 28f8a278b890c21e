/**
 * `[limits] submit-rate`: how fast one user may submit, as a token bucket per user (the
 * owner and guests alike). A bucket holds up to `submit-burst` tokens (default ten seconds'
 * worth), refills at `submit-rate` tokens a second, and each job submitted takes one; a
 * submission that finds the bucket empty is refused with the time after which a retry
 * succeeds. Time is the manager's clock, so tests run on a simulated one.
 */
import { ErrorCode, JobtapError } from "../../errors.js";

/** The two settings; a rate of 0 means no limit. */
export interface SubmitRateLimit {
  submitRate: number;
  submitBurst: number;
}

/** The per-user buckets of one manager. */
export class SubmitRate {
  private readonly buckets = new Map<number, { tokens: number; at: number }>();

  constructor(private readonly now: () => number) {}

  /** Takes one token from `userid`'s bucket; throws LIMIT_EXCEEDED naming the retry time when empty. */
  take(userid: number, limits: SubmitRateLimit): void {
    const rate = limits.submitRate;
    if (!(rate > 0)) return;
    const burst = burstOf(limits);
    const now = this.now();
    const b = this.buckets.get(userid) ?? { tokens: burst, at: now };
    b.tokens = Math.min(burst, b.tokens + ((now - b.at) / 1000) * rate);
    b.at = now;
    this.buckets.set(userid, b);
    if (b.tokens >= 1) {
      b.tokens -= 1;
      return;
    }
    const retry = (1 - b.tokens) / rate;
    throw new JobtapError(
      ErrorCode.LIMIT_EXCEEDED,
      `user ${userid} submits faster than [limits] submit-rate = ${rate} jobs/s (burst ${burst}); retry in ${retry < 1 ? retry.toFixed(2) : retry.toFixed(1)}s`,
      { limit: "[limits] submit-rate", userid, retryAfter: retry },
    );
  }
}

/** `submit-burst`, or ten seconds' worth of the rate (at least 1). */
export function burstOf(limits: SubmitRateLimit): number {
  return limits.submitBurst > 0 ? limits.submitBurst : Math.max(1, Math.ceil(limits.submitRate * 10));
}
