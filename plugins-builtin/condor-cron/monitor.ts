/**
 * Custom machine-resource monitors: a startd cron job with METRICS (spec htcondor.md §7.7).
 *
 * Such a job prints one record per resource instance (a tag each, e.g. `- GPU0`), usually
 * with a `SlotMergeConstraint` choosing the slot that holds the instance. For `SUM:X` the
 * record carries `UptimeXSeconds` (usage since the previous report), for `PEAK:X`
 * `UptimeXPeakUsage`. Unlike a plain cron record, a new sample is *aggregated* into the
 * stored ad of its name (sum or max), and per-job figures are kept for the slot:
 *
 * - when a job starts on a slot, each stored ad merging into it remembers where its SUM
 *   metrics stood (`StartOfJobUptimeXSeconds`, taken again at the next sample, with
 *   `FirstUpdateUptimeXSeconds` its time) and forgets its per-job peak (`XUsage`);
 * - each sample then raises `XUsage` to the peak seen since the job started (PEAK), and
 *   refreshes `LastUpdateUptimeX...` and `UptimeXSecondsAverageUsage`, an expression for the
 *   job's average (SUM);
 * - when the job ends, the per-job attributes are removed.
 *
 * A slot's ad gets the aggregate of every stored ad that merges into it (two GPUs in one
 * slot: their sums added, their peaks maxed), plus the computed `XAverageUsage` (SUM,
 * while a job runs), `DeviceXAverageUsage` (SUM over the monitor's lifetime) and
 * `DeviceXPeakUsage` (PEAK) that HTCondor advertises. A metric value that is not a number
 * is logged and ignored (the stored value stays).
 */
import { ClassAd, unparseValue, type ClassAdValue as Value } from "jobtap/plugin";

/** One METRICS item. */
export interface Metric {
  kind: "SUM" | "PEAK";
  /** The resource name X. */
  resource: string;
  /** `UptimeXSeconds` (SUM) or `UptimeXPeakUsage` (PEAK). */
  attr: string;
}

const isNumber = (v: Value): v is number | bigint => typeof v === "number" || typeof v === "bigint";
const num = (v: number | bigint) => Number(v);

/** The metrics of one job, looked up by attribute name (case-insensitive, as ClassAds). */
export class Metrics {
  private readonly byAttr = new Map<string, Metric>();

  constructor(
    items: readonly { kind: "SUM" | "PEAK"; name: string }[],
    private readonly warn: (message: string) => void,
  ) {
    for (const { kind, name } of items) {
      const attr = kind === "SUM" ? `Uptime${name}Seconds` : `Uptime${name}PeakUsage`;
      this.byAttr.set(attr.toLowerCase(), { kind, resource: name, attr });
    }
  }

  get list(): Metric[] {
    return [...this.byAttr.values()];
  }

  of(attr: string): Metric | undefined {
    return this.byAttr.get(attr.toLowerCase());
  }

  /** A metric's numeric value in `ad`, or undefined (logged when present but not a number). */
  private value(ad: ClassAd, m: Metric, where: string): number | undefined {
    if (!ad.has(m.attr)) return undefined;
    const v = ad.evaluate(m.attr);
    if (isNumber(v)) return num(v);
    this.warn(`${where}: metric ${m.attr} is not a number (${describe(v)}); ignored`);
    return undefined;
  }

  /**
   * Folds `from` into `to` (HTCondor's aggregation): metrics summed or maxed, the per-job
   * attributes carried along, other attributes copied (the last wins) except the selector
   * and start-of-job bookkeeping.
   */
  aggregate(to: ClassAd, from: ClassAd, where: string): void {
    for (const [name, expr] of from.attributes()) {
      const m = this.of(name);
      if (m === undefined) {
        if (!/^(StartOfJob|ResetStartOfJob$|SlotMergeConstraint$)/i.test(name)) to.set(name, expr);
        continue;
      }
      const v = this.value(from, m, where);
      if (v === undefined) continue;
      const combine = (a: number, b: number) => (m.kind === "SUM" ? a + b : Math.max(a, b));
      const old = to.has(m.attr) ? to.evaluate(m.attr) : undefined;
      to.set(m.attr, old !== undefined && isNumber(old) ? combine(num(old), v) : v);
      const perJob = m.kind === "SUM" ? `StartOfJob${m.attr}` : `${m.resource}Usage`;
      if (!to.has(perJob)) copy(to, perJob, from, perJob);
      else {
        const a = to.evaluate(perJob);
        const b = from.has(perJob) ? from.evaluate(perJob) : undefined;
        if (isNumber(a) && b !== undefined && isNumber(b)) to.set(perJob, combine(num(a), num(b)));
      }
      copy(to, `LastUpdate${m.attr}`, from, "LastUpdate");
      if (m.kind === "SUM") {
        to.setExpr(`${m.attr}AverageUsage`, `(${m.attr} - StartOfJob${m.attr}) / (LastUpdate${m.attr} - FirstUpdate${m.attr})`);
      }
    }
  }

  /** A new sample for a stored ad (none stored yet: the sample is stored as it is). */
  sample(stored: ClassAd | undefined, sample: ClassAd, where: string): ClassAd {
    if (stored === undefined) {
      for (const m of this.list) this.value(sample, m, where); // log a bad first value too
      return sample.clone();
    }
    if (stored.has("ResetStartOfJob") && stored.evaluate("ResetStartOfJob") === true) {
      // The first sample since a job started: its SUM metrics count from here.
      for (const m of this.list) {
        if (m.kind !== "SUM" || !stored.has(`StartOfJob${m.attr}`)) continue;
        copy(stored, `StartOfJob${m.attr}`, stored, m.attr);
        copy(stored, `FirstUpdate${m.attr}`, stored, "LastUpdate");
      }
      stored.delete("ResetStartOfJob");
    }
    for (const m of this.list) {
      if (m.kind !== "PEAK" || !sample.has(m.attr)) continue;
      const v = sample.evaluate(m.attr);
      if (!isNumber(v)) continue; // logged by aggregate
      const usage = `${m.resource}Usage`;
      const cur = stored.has(usage) ? stored.evaluate(usage) : undefined;
      stored.set(usage, cur !== undefined && isNumber(cur) ? Math.max(num(v), num(cur)) : num(v));
      copy(stored, `LastUpdate${usage}`, sample, "LastUpdate");
    }
    this.aggregate(stored, sample, where);
    return stored;
  }

  /** A job started on a slot this stored ad merges into. */
  jobStarted(stored: ClassAd): void {
    for (const m of this.list) {
      if (!stored.has(m.attr) || !isNumber(stored.evaluate(m.attr))) continue;
      if (m.kind === "SUM") {
        stored.set(`StartOfJob${m.attr}`, num(stored.evaluate(m.attr) as number));
        stored.set("ResetStartOfJob", true);
      } else stored.setExpr(`${m.resource}Usage`, "undefined");
    }
  }

  /** The job on a slot this stored ad merges into ended. */
  jobEnded(stored: ClassAd): void {
    for (const m of this.list) {
      if (!stored.has(m.attr)) continue;
      const usage = `${m.resource}Usage`;
      for (const a of [`StartOfJob${m.attr}`, `FirstUpdate${m.attr}`, `LastUpdate${m.attr}`, usage, `LastUpdate${usage}`]) stored.delete(a);
    }
    stored.delete("ResetStartOfJob");
  }

  /**
   * A slot's share: the aggregate of the stored ads merging into it, with the computed
   * usage figures. `uptimeSeconds`: how long the monitor has run.
   */
  slotAd(stored: readonly ClassAd[], uptimeSeconds: number, where: string): ClassAd {
    const acc = new ClassAd();
    for (const ad of stored) this.aggregate(acc, ad, where);
    for (const m of this.list) {
      if (!acc.has(m.attr)) continue;
      const v = acc.evaluate(m.attr);
      if (!isNumber(v)) continue;
      if (m.kind === "PEAK") {
        acc.set(`Device${m.resource}PeakUsage`, num(v));
        continue;
      }
      if (uptimeSeconds > 0) acc.set(`Device${m.resource}AverageUsage`, num(v) / uptimeSeconds);
      const avg = acc.has(`StartOfJob${m.attr}`) ? acc.evaluateExpr(`(${m.attr} - StartOfJob${m.attr}) / (LastUpdate${m.attr} - FirstUpdate${m.attr})`) : undefined;
      if (avg !== undefined && isNumber(avg) && Number.isFinite(num(avg))) acc.set(`${m.resource}AverageUsage`, num(avg));
    }
    return acc;
  }
}

/** `to[toName] = from[fromName]`, or deleted when `from` has none (HTCondor's CopyAttribute). */
function copy(to: ClassAd, toName: string, from: ClassAd, fromName: string): void {
  const e = from.lookup(fromName);
  if (e === undefined) to.delete(toName);
  else to.set(toName, e);
}

function describe(v: Value): string {
  return unparseValue(v);
}
