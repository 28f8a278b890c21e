/**
 * When the executor polls while it is also submitting (issue 41).
 *
 * Each squeue is an RPC that slurmctld answers under its job read lock, and each sbatch
 * needs the write lock: polls during a burst of submissions hold the sbatch calls up, and
 * on a small machine the squeue processes also take CPU from them. What a poll could learn
 * meanwhile (a job started, one ended) can wait a little: while sbatch calls are in flight
 * the poll period is stretched BUSY_POLL_FACTOR times (never past max-poll-period), and
 * when the last one answers, a poll due later than one poll period from then is brought
 * back to the poll period, so ends are seen at the usual pace once the burst is over.
 */

/** How many poll periods apart polls are while sbatch calls are in flight. */
export const BUSY_POLL_FACTOR = 4;

/** The poll settings the pace reads ([exec.slurm] poll-period, max-poll-period). */
export interface PollPeriods {
  pollPeriodMs: number;
  maxPollPeriodMs: number;
}

/** The delay of the next regular poll: the poll period, stretched while `submitting`. */
export function regularPollMs(c: PollPeriods, submitting: boolean): number {
  return submitting ? Math.max(c.pollPeriodMs, Math.min(c.maxPollPeriodMs, c.pollPeriodMs * BUSY_POLL_FACTOR)) : c.pollPeriodMs;
}

/**
 * At the end of a burst: whether a poll due at `dueAt` (clock ms) should be brought back to
 * one poll period from `now` (not when polls are backing off after failures: that delay
 * stands).
 */
export function pullPollIn(c: PollPeriods, dueAt: number, now: number, backingOff: boolean): boolean {
  return !backingOff && dueAt > now + c.pollPeriodMs;
}
