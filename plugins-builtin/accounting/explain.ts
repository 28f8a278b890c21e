/**
 * `job why` for the accounting plugin (its `job.explain` answer): a job held by a limit
 * names the limit and the association's counts now, and every pending job's priority is
 * given factor by factor (weight × factor), as `plugin query accounting` shows it.
 */
import type { JobArgs } from "jobtap/plugin";
import type { JobRec } from "./limits.js";
import { explain, factorsOf } from "./priority.js";
import type { AccountingConfig } from "./config.js";
import type { Counts } from "./limits.js";

type Figures = Record<string, string | number | boolean | null>;
interface ReasonOut {
  layer: "state" | "plugin";
  code: string;
  text: string;
  figures: Figures;
  key?: string;
}

/** The reasons for one active job the plugin knows (`r`), given its fair-share factor. */
export function accountingReasons(cfg: AccountingConfig, job: JobArgs, r: JobRec, fairShare: number, counts: Counts, now: number): ReasonOut[] {
  const out: ReasonOut[] = [];
  if (r.held !== undefined) {
    out.push({
      layer: "state",
      code: "accounting-limit",
      // The manager lists the dependency generically; this replaces it in place.
      key: `dependency:${r.held}`,
      text: `${r.held}: waits until one of its jobs ends (running ${counts.running}, cores ${counts.cores}, active ${counts.active} in ${r.bank})`,
      figures: { dependency: r.held, bank: r.bank, running: counts.running, cores: counts.cores, active: counts.active },
    });
  }
  const { priority, factors } = explain(cfg.weights, factorsOf(cfg, fairShare, job, now)) as {
    priority: number;
    factors: Record<string, { factor: number; weight: number; value: number }>;
  };
  const used = Object.entries(factors).filter(([, f]) => f.weight !== 0);
  const text = used.map(([k, f]) => `${k} ${round(f.factor)}×${f.weight}`).join(" + ");
  const figures: Figures = { priority, bank: r.bank };
  for (const [k, f] of Object.entries(factors)) figures[k] = round(f.factor);
  out.push({ layer: "plugin", code: "priority-factors", text: `priority ${priority} = ${text === "" ? "0" : text} (bank ${r.bank})`, figures });
  return out;
}

function round(x: number): number {
  return Math.round(x * 1e4) / 1e4;
}
