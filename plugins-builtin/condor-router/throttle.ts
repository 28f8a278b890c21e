/**
 * Per-route limits and black-hole throttling (spec htcondor.md §4.5): MaxJobs, MaxIdleJobs
 * and a throttle recomputed at most once per 600 s window from the failures and successes
 * counted in it. The numbers and formulas are HTCondor's.
 */
import type { Route } from "./routes.js";

/** HTCondor's THROTTLE_UPDATE_INTERVAL, in seconds. */
export const THROTTLE_WINDOW_S = 600;

/** One route's counters and throttle; survives a reconfig that keeps the route's name. */
export class RouteState {
  /** Managed jobs on the route, including those whose copy is not submitted yet. */
  current = 0;
  /** Of `current`, those whose copy is running. */
  running = 0;
  /** Jobs routed, succeeded and failed in the current window. */
  recentRouted = 0;
  recentSucceeded = 0;
  recentFailed = 0;
  /** Jobs per window; 0: no throttle. */
  throttle = 0;
  windowStart: number;

  constructor(
    public route: Route,
    nowS: number,
  ) {
    this.windowStart = nowS;
  }

  get idle(): number {
    return this.current - this.running;
  }

  /** HTCondor's AcceptingMoreJobs. */
  accepting(): boolean {
    if (this.throttle > 0 && this.throttle <= this.recentRouted) return false;
    const maxIdle = this.route.settings.maxIdleJobs;
    if (maxIdle >= 0 && maxIdle <= this.idle) return false;
    return this.current < this.route.settings.maxJobs;
  }

  /** Recomputes the throttle when a window has passed; resets the window's counters. */
  updateThrottle(nowS: number): void {
    const delta = nowS - this.windowStart;
    if (delta < THROTTLE_WINDOW_S) return;
    const threshold = this.route.settings.failureRateThreshold;
    const f = this.recentFailed;
    const s = this.recentSucceeded;
    if (f > 0 && f / delta > threshold) {
      this.throttle = (THROTTLE_WINDOW_S * threshold) / (f / (f + this.current + s));
    } else {
      let accel = 3 * s - 2 * f;
      if (accel > 0) accel /= s + f;
      accel += 2;
      if (accel > 1) this.throttle *= accel;
      if (this.throttle > THROTTLE_WINDOW_S * threshold * 10000) this.throttle = 0;
      if (this.throttle > 0 && this.throttle < 1 && f === 0) this.throttle = 1;
    }
    this.recentRouted = this.recentSucceeded = this.recentFailed = 0;
    this.windowStart = nowS;
  }

  /** As condor_router_q reports it: "<jobs/s> jobs/sec" or "none". */
  describeThrottle(): string {
    return this.throttle > 0 ? `${(this.throttle / THROTTLE_WINDOW_S).toPrecision(3)} jobs/sec` : "none";
  }
}
