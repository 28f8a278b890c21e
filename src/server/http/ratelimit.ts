/**
 * Per-token request rate (`[daemon] http-rate-limit`): a token bucket per bearer token,
 * refilled at `rate` per second up to a burst of twice that (at least 1). A request that
 * finds the bucket empty is answered 429 with Retry-After (whole seconds until one request's
 * worth has refilled).
 */

/** The rate limiter of one listener. */
export interface RateLimiter {
  /** Takes one request's worth for `key`; returns 0 if allowed, else seconds to wait. */
  take(key: string): number;
}

/** Buckets at most (the least recently used are forgotten: a full bucket again). */
const MAX_BUCKETS = 65_536;

/** A limiter of `rate` requests per second per key; `now` in milliseconds. */
export function rateLimiter(rate: number, now: () => number = () => performance.now()): RateLimiter {
  const burst = Math.max(1, 2 * rate);
  const buckets = new Map<string, { level: number; at: number }>();
  return {
    take(key) {
      const t = now();
      let b = buckets.get(key);
      if (b === undefined) {
        if (buckets.size >= MAX_BUCKETS) buckets.delete(buckets.keys().next().value as string);
        b = { level: burst, at: t };
      } else buckets.delete(key);
      buckets.set(key, b);
      b.level = Math.min(burst, b.level + ((t - b.at) / 1000) * rate);
      b.at = t;
      if (b.level >= 1) {
        b.level -= 1;
        return 0;
      }
      return Math.max(1, Math.ceil((1 - b.level) / rate));
    },
  };
}
