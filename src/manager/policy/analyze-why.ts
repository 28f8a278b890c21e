/**
 * `job why`'s better-analyze reasons (issue 36 on top of the matchmaking of issue 35): for a
 * queued job whose ads take part in matchmaking, how many slots match, each top-level clause
 * of its Requirements and how many slots it holds against, the slots whose START refuses it,
 * and the first clause no slot satisfies with a one-value fix where there is one. Computed
 * only when someone asks; a job on the fast path (no Requirements, trivial START) gets none.
 */
import type { ClassAd } from "../../classad/classad.js";
import type { Evaluator } from "../../classad/evaluator.js";
import { analyzeRequirements, type RequirementsAnalysis } from "../../classad/analyze.js";
import type { JobId } from "../base/ids.js";
import type { ActiveJob } from "../engine/job.js";
import type { Reason } from "../port/reasons.js";

export interface AnalyzeDeps {
  active: (id: JobId) => ActiveJob | undefined;
  jobAd: (job: ActiveJob) => ClassAd;
  slotAds: () => ClassAd[];
  /** True when some slot's START/Requirements is not simply true. */
  constrained: () => boolean;
  evaluator: Evaluator;
}

/** How many slots' START refusals are named one by one before the rest are counted. */
const NAMED_SLOTS = 8;

/** A SchedAnalyzer (why-sched.ts) over the host's slot ads. */
export function policyAnalyzer(deps: AnalyzeDeps): (id: JobId) => Reason[] {
  return (id) => {
    const job = deps.active(id);
    if (job === undefined) return [];
    const ad = deps.jobAd(job);
    if (ad.lookup("Requirements") === undefined && !deps.constrained()) return [];
    return reasonsOf(analyzeRequirements(ad, deps.slotAds(), deps.evaluator));
  };
}

function reason(code: string, text: string, figures: Reason["figures"], key?: string): Reason {
  return { layer: "scheduler", source: "policy", code, text, figures, ...(key === undefined ? {} : { key }) };
}

/** The analysis as reasons, most telling first. */
export function reasonsOf(a: RequirementsAnalysis): Reason[] {
  const slots = a.slots.length;
  const out: Reason[] = [
    reason("match-slots", `${a.slotsMatching} of ${slots} slots match the job's Requirements and their own START`, { matching: a.slotsMatching, slots }),
  ];
  a.clauses.forEach((c, i) => {
    out.push(reason("requirements-clause", `clause ${i + 1} "${c.text}" holds against ${c.slotsMatching} of ${slots} slots`, { clause: i + 1, text: c.text, matching: c.slotsMatching }, `clause:${i + 1}`));
  });
  const refusing = a.slots.filter((s) => s.start !== "true");
  if (refusing.length > 0) {
    const named = refusing.slice(0, NAMED_SLOTS).map((s) => `${s.slot} (${s.start})`).join(", ");
    const more = refusing.length > NAMED_SLOTS ? ` and ${refusing.length - NAMED_SLOTS} more` : "";
    out.push(reason("slot-start", `START refuses the job on ${refusing.length} of ${slots} slots: ${named}${more}`, { refusing: refusing.length, slots }));
  }
  const first = a.firstUnsatisfied;
  if (first !== undefined) {
    const fix = first.suggestion === undefined ? "" : `; ${first.suggestion} would match`;
    out.push(reason("unsatisfied-clause", `no slot satisfies clause ${first.index + 1} "${first.text}"${fix}`, { clause: first.index + 1, text: first.text, suggestion: first.suggestion ?? null }));
  }
  return out;
}
