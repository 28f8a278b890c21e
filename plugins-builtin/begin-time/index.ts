/**
 * .begin-time: scheme `begin-time` (spec flux-jobtap §6.4). The job waits in DEPEND until a
 * wall-clock time: `value` is a Unix timestamp in seconds (a number or a numeric string).
 * The timer runs on the manager's clock and lives in the job's aux data, so cancelling the
 * job (or removing the plugin) clears it. A time already past releases the job at once.
 */
import type { JobId, PluginContext } from "jobtap/plugin";
import { formatFSD, formatJobId, localTime, withRead } from "jobtap/plugin";

/** Parses a begin-time value: finite, >= 0, nothing trailing. */
export function parseBeginTime(value: unknown): number | undefined {
  if (typeof value === "number") return Number.isFinite(value) && value >= 0 ? value : undefined;
  if (typeof value !== "string" || !/^\s*[+]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/.test(value)) return undefined;
  const t = Number(value);
  return Number.isFinite(t) && t >= 0 ? t : undefined;
}

/** Registers the scheme; the timer removes the dependency when it fires. */
export default function beginTime(p: PluginContext): void {
  const arm = (id: JobId, at: number, description: string): void => {
    const ms = Math.max(0, at * 1000 - p.clock.now());
    const timer = p.clock.setTimeout(() => {
      p.auxDelete(id, "timer");
      try {
        p.dependencyRemove(id, description);
      } catch (e) {
        p.log.warn(`${formatJobId(id)}: begin-time release: ${(e as Error).message}`);
      }
    }, ms);
    p.auxSet(id, "timer", timer, (t) => p.clock.clearTimeout(t));
  };

  // job.explain: the begin time in local time and how long until then.
  // Only the jobs it holds (its timer is armed): another plugin may post the same words.
  p.on("job.explain", (job) =>
    withRead(p.auxGet(job.id, "timer"), (timer) => (timer === undefined ? undefined : explain(job.dependencies))),
  );
  const explain = (dependencies: readonly string[]) => {
    const reasons = dependencies.filter((d) => d.startsWith("begin-time=")).map((d) => {
      const at = Number(d.slice("begin-time=".length));
      const left = Math.max(0, at - p.clock.now() / 1000);
      return {
        layer: "state" as const,
        code: "begin-time",
        key: `dependency:${d}`,
        text: `begin time not reached: ${localTime(at)} (in ${formatFSD(Math.ceil(left))})`,
        figures: { dependency: d, begin: at, remaining: Math.ceil(left) },
      };
    });
    return reasons.length === 0 ? undefined : { reasons };
  };

  p.on("job.dependency.begin-time", (job) => {
    const raw = job.dependency.value;
    if (raw === undefined) return p.reject("begin-time dependency requires a value");
    const at = parseBeginTime(raw);
    if (at === undefined) return p.reject(`Invalid begin-time=${String(raw)}`);
    const description = `begin-time=${at.toFixed(3)}`;
    // A restart re-runs this callback: the dependency is already outstanding (no-op add).
    p.dependencyAdd(job.id, description);
    return withRead(p.auxGet(job.id, "timer"), (timer) => {
      if (timer === undefined) arm(job.id, at, description);
      return undefined;
    });
  });
}
