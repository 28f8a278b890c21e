/**
 * Orphans (spec htcondor.md §4.10): copies routed by this router that it does not know are
 * adopted when their original is still claimed, else removed; originals claimed by this
 * router with no known copy are yielded (back to pending).
 */
import { formatJobId, parseJobId, type ClassAd, type JobId } from "jobtap/plugin";
import { finishCleanup } from "./cleanup.js";
import { STATE_PREFIX, type RouterCore, type RoutingRecord } from "./core.js";
import { attachCopy } from "./routing.js";

/** A job id from its text, or undefined. */
export function parseId(text: string): JobId | undefined {
  try {
    return parseJobId(text);
  } catch {
    return undefined;
  }
}

/** One orphan scan over every job in the queue. */
export function adoptOrphans(c: RouterCore): void {
  const claimedWithoutCopy = new Set<JobId>();
  for (const m of c.byOrig.values()) if (m.phase === "claimed") claimedWithoutCopy.add(m.orig);
  for (const id of c.p.jobIds()) {
    if (c.byCopy.has(id)) continue;
    const ad = c.adOrUndefined(id);
    if (ad === undefined) continue;
    if (ad.has("RoutedBy") && ad.evaluate("RoutedBy") === c.name) scanCopy(c, id, ad, claimedWithoutCopy);
    else if (!c.byOrig.has(id) && ad.has("Managed") && ad.evaluate("Managed") === "External" && ad.evaluate("ManagedManager") === c.name) {
      void finishCleanup(c, c.track(id, ""), "interrupted");
    }
  }
  for (const orig of claimedWithoutCopy) {
    const m = c.byOrig.get(orig);
    if (m !== undefined && m.copy === undefined) void finishCleanup(c, m, "interrupted");
  }
  c.recount();
}

/** A copy routed by this router that it does not know: adopt it, or remove it. */
function scanCopy(c: RouterCore, id: JobId, ad: ClassAd, claimedWithoutCopy: Set<JobId>): void {
  const from = ad.evaluate("RoutedFromJobId");
  const orig = typeof from === "string" ? parseId(from) : undefined;
  const known = orig === undefined ? undefined : c.byOrig.get(orig);
  // Its copy is being submitted right now, or its record is being settled.
  if (known?.phase === "routing" || known?.phase === "cleanup") return;
  const origArgs = orig === undefined ? undefined : c.lookup(orig);
  if (orig !== undefined && origArgs !== undefined && origArgs.state !== "INACTIVE" && (known === undefined || known.copy === undefined)) {
    const routeName = ad.evaluate("RouteName");
    const m = known ?? c.track(orig, typeof routeName === "string" ? routeName : "");
    c.p.state.set(STATE_PREFIX + m.key, { route: m.route, copy: formatJobId(id) } satisfies RoutingRecord);
    attachCopy(c, m, id);
    claimedWithoutCopy.delete(orig);
    c.p.log.info(`job ${formatJobId(id)}: adopted as the routed copy of job ${m.key}`);
  } else if (known?.copy !== id) {
    c.p.log.info(`job ${formatJobId(id)}: routed copy of a job that is gone; removing it`);
    try {
      c.p.raiseException(id, "cancel", 0, "JobRouter aborted job: orphaned routed copy");
    } catch {
      // Already ending.
    }
  }
}
