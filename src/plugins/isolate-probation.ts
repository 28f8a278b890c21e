/**
 * Probation of an isolated plugin that missed a handler deadline (issue 32): the total time
 * jobs can lose to a plugin that hangs is one deadline, plus at most one probation deadline.
 *
 * The first missed deadline (an endless loop, a promise that never settles) terminates the
 * worker and costs the calls in flight that deadline. The plugin is then suspect for its
 * restart window: every call sent to it in that window (the restart's replay included) has
 * the probation deadline instead, `restart.probation` (default 1 s, never longer than the
 * plugin's own deadline). A worker that misses a probation deadline is not restarted: the
 * plugin is unloaded, as past its restart policy. A plugin that hung once and then answers
 * in time is kept, and once a window has passed without a missed deadline it is trusted
 * again (its calls get the full deadline).
 */
import type { Isolation } from "./isolate.js";

/** Default probation deadline of a suspect isolated plugin's calls (1 s). */
export const DEFAULT_PROBATION_MS = 1000;

/** Which deadline a call that was not answered in time had. */
export type MissedDeadline = "deadline" | "probation";

/** The deadline of a call sent now to an isolated plugin's worker, and which one it is. */
export function callDeadline(iso: Isolation, deadlineMs: number, now: number): { ms: number; kind: MissedDeadline } {
  if (!suspect(iso, now)) return { ms: deadlineMs, kind: "deadline" };
  const probation = iso.restart.probationMs ?? DEFAULT_PROBATION_MS;
  return probation < deadlineMs ? { ms: probation, kind: "probation" } : { ms: deadlineMs, kind: "probation" };
}

/** A deadline was missed within the restart window before `now`. */
function suspect(iso: Isolation, now: number): boolean {
  return iso.lastMissed !== undefined && now - iso.lastMissed < iso.restart.windowMs;
}

/**
 * Notes a worker's death: a missed deadline makes the plugin suspect from `now`. Returns
 * why the plugin must be unloaded when the death was a missed probation deadline.
 */
export function probationVerdict(iso: Isolation, now: number, reason: string, missed: MissedDeadline | undefined): string | undefined {
  if (missed === undefined) return undefined;
  const since = iso.lastMissed;
  iso.lastMissed = now;
  if (missed !== "probation") return undefined;
  const ago = since === undefined ? "" : ` ${Math.round((now - since) / 1000)} s after the last one`;
  return `isolated worker missed a deadline again on probation${ago} (restart window ${iso.restart.windowMs / 1000} s); last: ${reason}`;
}
