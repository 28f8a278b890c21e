/**
 * `job why` for a job that ended (issue 36): its result and why — the fatal exception (type,
 * note, who raised it), the hold it was in when cancelled, its exit status or signal — read
 * from the eventlog. Plugins add their part (the router's copy, Slurm's final state) through
 * `job.explain`.
 */
import { resultOf, type JobCore } from "./core/transition.js";
import type { EventEntry } from "./port/records.js";
import type { Reason } from "./port/reasons.js";
import { lastEvent } from "./why-state.js";

function endReason(code: string, text: string, figures: Reason["figures"]): Reason {
  return { layer: "end", source: "manager", code, text, figures };
}

/** The end reasons of a job in CLEANUP or INACTIVE ([] if it has not ended). */
export function endedReasons(core: JobCore, eventlog: readonly EventEntry[]): Reason[] {
  const result = resultOf(core);
  if (result === undefined) return [];
  const out: Reason[] = [];
  const fatal = eventlog.find((e) => e.name === "exception" && e.context?.severity === 0);
  if (fatal !== undefined) out.push(exceptionReason(fatal, result));
  else out.push(finishReason(lastEvent(eventlog, "finish"), result));
  if (core.urgency === 0 && !eventlog.some((e) => e.name === "start")) {
    const held = lastEvent(eventlog, "urgency");
    out.push(endReason("ended-held", "it was held (urgency 0) when it ended", { since: held?.timestamp ?? null }));
  }
  return out;
}

function exceptionReason(e: EventEntry, result: string): Reason {
  const c = e.context ?? {};
  const type = typeof c.type === "string" ? c.type : "exception";
  const note = typeof c.note === "string" ? c.note : "";
  const by = typeof c.userid === "number" ? c.userid : null;
  const text = `${result}: ${type} exception${note ? `: ${note}` : ""}`;
  return endReason("exception", text, { result, type, note, severity: 0, userid: by, at: e.timestamp });
}

function finishReason(finish: EventEntry | undefined, result: string): Reason {
  const status = typeof finish?.context?.status === "number" ? finish.context.status : null;
  if (status === null) return endReason("ended", result, { result, status: null });
  const signal = status & 0x7f;
  const code = (status >> 8) & 0xff;
  const how = signal !== 0 ? `killed by signal ${signal}` : `exit code ${code}`;
  return endReason("ended", `${result}: ${how}`, { result, status, exit_code: signal !== 0 ? null : code, signal: signal || null });
}
