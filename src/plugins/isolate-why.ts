/**
 * `job why` at host level for isolated plugins (issue 36): a job held up by an isolated
 * plugin whose worker is restarting says so, whether or not the plugin explains itself
 * (its `job.explain` handler cannot answer while its worker is gone: that call leaves the
 * labelled `explain-error` line, this reason says what is going on).
 *
 * What a plugin holds on a job: the dependencies it added that are still outstanding on the
 * job, the prologs and epilogs its current worker started and has not finished, and, for a
 * job in PRIORITY, its priority (the plugin handles the priority topics and cannot be asked).
 * The restart policy's figures come from the Isolation (isolate.ts): restarts since load,
 * deaths within the window against its `max`, when the attempt under way began (restarts
 * are immediate: a failed attempt counts as a death and the next follows at once, or the
 * plugin is unloaded), and probation after a missed deadline (isolate-probation.ts).
 */
import type { JobArgs } from "../manager/port/records.js";
import type { Figure, Reason } from "../manager/port/reasons.js";
import { localTime } from "../manager/why-state.js";
import { DEFAULT_PROBATION_MS } from "./isolate-probation.js";
import type { Isolation } from "./isolate.js";

/** What an isolated plugin holds on one job (empty lists: nothing). */
export interface Holds {
  dependencies: string[];
  perilogs: string[];
  priority: boolean;
}

/** What the plugin holds on `job`; `handlesPriority`: it has a priority handler. */
export function holdsOn(iso: Isolation, job: JobArgs, handlesPriority: boolean): Holds {
  const dependencies: string[] = [];
  for (const d of iso.dependencies.values()) {
    if (d.id === job.id && job.dependencies.includes(d.description)) dependencies.push(d.description);
  }
  const perilogs: string[] = [];
  for (const s of iso.started()) if (s.id === job.id) perilogs.push(`${s.kind} "${s.description}"`);
  return { dependencies, perilogs, priority: handlesPriority && job.state === "PRIORITY" };
}

const holdsNothing = (h: Holds) => h.dependencies.length === 0 && h.perilogs.length === 0 && !h.priority;

/**
 * The host-level reason of an isolated plugin whose worker is restarting and that holds
 * something on `job`; undefined otherwise. `now`: the host clock (ms).
 */
export function restartingReason(plugin: string, iso: Isolation, job: JobArgs, handlesPriority: boolean, now: number): Reason | undefined {
  if (iso.state !== "restarting") return undefined;
  const holds = holdsOn(iso, job, handlesPriority);
  if (holdsNothing(holds)) return undefined;
  const { max, windowMs } = iso.restart;
  const since = (iso.restartSince ?? now) / 1000;
  const left = Math.max(0, max - iso.deaths.length);
  const probationUntil = onProbationUntil(iso, now);
  const figures: Record<string, Figure> = {
    plugin,
    status: probationUntil === undefined ? "restarting" : "restarting-on-probation",
    restarts: iso.restarts,
    deaths_in_window: iso.deaths.length,
    restart_max: max,
    window_s: windowMs / 1000,
    attempt_since: since,
    restarts_left: left,
    probation_until: probationUntil ?? null,
    dependencies: holds.dependencies.join(", "),
    perilogs: holds.perilogs.join(", "),
    priority: holds.priority,
  };
  const text = `plugin ${plugin} is restarting its isolated worker (${restartWords(iso, since, left, probationUntil)}): ${holdWords(holds)}`;
  return { layer: "plugin", source: plugin, code: "isolated-restarting", text, figures };
}

function restartWords(iso: Isolation, since: number, left: number, probationUntil: number | undefined): string {
  const window = `${iso.deaths.length} of ${iso.restart.max} restarts within ${iso.restart.windowMs / 1000} s, ${iso.restarts} since load`;
  const next = left > 0 ? `if it fails, the next at once (${left} left)` : "if it fails, the plugin is unloaded";
  const probation = probationUntil === undefined
    ? ""
    : `; on probation after a missed deadline until ${localTime(probationUntil)} (its calls get a ${iso.restart.probationMs ?? DEFAULT_PROBATION_MS} ms deadline)`;
  return `${window}; attempt under way since ${localTime(since)}, ${next}${probation}`;
}

function holdWords(h: Holds): string {
  const parts: string[] = [];
  if (h.dependencies.length > 0) parts.push(`its ${plural(h.dependencies.length, "dependency", "dependencies")} ${h.dependencies.map((d) => `"${d}"`).join(", ")} outstanding`);
  if (h.perilogs.length > 0) parts.push(`${h.perilogs.join(", ")} started and not finished`);
  if (h.priority) parts.push("the job's priority (it cannot be asked until its worker is back)");
  return `holds ${parts.join("; ")}`;
}

const plural = (n: number, one: string, many: string) => (n === 1 ? one : many);

/** Seconds since the epoch until which the plugin is on probation, if it is now. */
function onProbationUntil(iso: Isolation, now: number): number | undefined {
  if (iso.lastMissed === undefined || now - iso.lastMissed >= iso.restart.windowMs) return undefined;
  return (iso.lastMissed + iso.restart.windowMs) / 1000;
}
