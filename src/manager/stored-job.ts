/**
 * Reading a stored job back: its jobspec and eventlog (and exec eventlog) parsed, checked
 * line by line, and folded through `transition()` without callbacks (restart's phase 1,
 * a listing's view, reading a dropped eventlog back). A string error names the bad line:
 * the job is then corrupt (restart moves it to lost+found).
 */
import { formatJobId, type JobId } from "./base/ids.js";
import { dropEventlog, eventlogDropped, type ActiveJob, type EventlogReader } from "./engine/job.js";
import type { Engine } from "./engine/engine.js";
import { Kept } from "./engine/kept.js";
import { ErrorCode, JobtapError } from "../errors.js";
import { isPlainObject } from "./core/jobspec.js";
import { adoptParsedJobspec } from "./core/frozen.js";
import type { EventEntry, Jobspec } from "./port/records.js";
import type { JobStore, StoredJobText } from "./store/types.js";
import { newJobCore, transition, type JobCore } from "./core/transition.js";

export type Replayed = { core: JobCore; eventlog: EventEntry[]; execlog: EventEntry[] | undefined } | { error: string };

/**
 * Folds one stored job; a string error means the stored data is corrupt. With `shared`,
 * jobs whose stored jobspec text is the same share one jobspec object (see JobspecShare).
 */
export function replayJob(text: StoredJobText, shared?: JobspecShare): Replayed {
  let core: JobCore | undefined;
  const parsed = parseStoredJob(text, shared, (jobspec, e, line) => {
    core ??= newJobCore(text.id, jobspec);
    const r = transition(core, e);
    if (!r.ok) return `eventlog line ${line} (${e.name}): ${r.error}`;
    core = r.job;
    return undefined;
  });
  if ("error" in parsed) return parsed;
  const execlog = text.exec === undefined ? undefined : parseExecLog(text.exec);
  if (execlog !== undefined && "error" in execlog) return execlog;
  return { core: core!, eventlog: parsed.eventlog, execlog };
}

/** Parses a stored exec eventlog (RFC 18 lines); a string error names the bad line. */
export function parseExecLog(text: string): EventEntry[] | { error: string } {
  return parseLines(text, "exec eventlog");
}

/**
 * Parses one stored job's jobspec and eventlog; `each` (replayJob's fold) sees every entry
 * as it is read and may refuse it with a message. Without `each` the job is not folded: a
 * listing's view needs the entries, not the state machine's record.
 */
export function parseStoredJob(
  text: StoredJobText,
  shared?: JobspecShare,
  each?: (jobspec: Jobspec, e: EventEntry, line: number) => string | undefined,
): { jobspec: Jobspec; eventlog: EventEntry[] } | { error: string } {
  let jobspec = shared?.get(text.jobspec);
  if (jobspec === undefined) {
    try {
      const parsed: unknown = JSON.parse(text.jobspec);
      if (!isPlainObject(parsed)) return { error: "jobspec is not an object" };
      jobspec = adoptParsedJobspec(parsed as unknown as Jobspec);
    } catch (e) {
      return { error: `jobspec is not valid JSON: ${(e as Error).message}` };
    }
    shared?.set(text.jobspec, jobspec);
  }
  const eventlog = parseEventlog(text.eventlog, each && ((e, line) => each(jobspec, e, line)));
  if ("error" in eventlog) return eventlog;
  return { jobspec, eventlog };
}

/** Parses a stored eventlog (RFC 18 lines, starting with submit); `each` as parseStoredJob's. */
function parseEventlog(text: string, each?: (e: EventEntry, line: number) => string | undefined): EventEntry[] | { error: string } {
  const eventlog = parseLines(text, "eventlog", each);
  if ("error" in eventlog) return eventlog;
  if (eventlog.length === 0 || eventlog[0]!.name !== "submit") return { error: "eventlog does not start with submit" };
  return eventlog;
}

/** RFC 18 lines of `what` (named in errors with the line), each one shown to `each`. */
function parseLines(text: string, what: string, each?: (e: EventEntry, line: number) => string | undefined): EventEntry[] | { error: string } {
  const out: EventEntry[] = [];
  const lines = text.split("\n");
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    if (line === "") continue;
    let e: EventEntry;
    try {
      e = JSON.parse(line) as EventEntry;
    } catch (err) {
      return { error: `${what} line ${i + 1} is not valid JSON: ${(err as Error).message}` };
    }
    if (typeof e?.name !== "string" || typeof e.timestamp !== "number") return { error: `${what} line ${i + 1}: not an RFC 18 entry` };
    const refused = each?.(e, i + 1);
    if (refused !== undefined) return { error: refused };
    out.push(e);
  }
  return out;
}

/**
 * Reads a restored job's eventlog back from the store (engine/job.ts dropEventlog). It was
 * replayed from the same text at open, so it parses; if the store no longer gives it, the
 * failure names the job.
 */
export function storedEventlogReader(store: JobStore): EventlogReader {
  return (id) => {
    const text = store.load(id);
    const r = text === undefined ? { error: "not in the store" } : parseEventlog(text.eventlog);
    if ("error" in r) throw new JobtapError(ErrorCode.STORE_CORRUPT, `job ${formatJobId(id)}: cannot read its eventlog back: ${r.error}`);
    return r;
  };
}

/**
 * Jobs whose eventlog, read back, stays in memory; older ones are dropped again (kept.ts).
 * Few: what one look keeps past a young-generation GC is promoted, and a look over every
 * waiting job then leaves its whole read as old-space garbage. With 4,096 kept, one ad and
 * `why` of each of 50,000 held jobs peaked at 196 MB of heap and left the RSS at 331-351 MB
 * (512: 161 MB and 285-299); with 64 the heap stayed under 68 MB and the RSS at 189.
 */
export const EVENTLOGS_KEPT = 64;

/**
 * `read` for the jobs of `engine`, keeping at most `limit` eventlogs read back in memory:
 * beyond that the oldest are dropped again, each once all its text is durable and nothing
 * is processing it (a job with text not yet written keeps its entries until a later trim).
 */
export function keptEventlogReader(read: EventlogReader, engine: Engine, limit = EVENTLOGS_KEPT): EventlogReader {
  const kept = new Kept<ActiveJob>(limit, (job) => {
    if (engine.active.get(job.core.id) !== job || eventlogDropped(job)) return true;
    if (job.busy || job.hold > 0 || job.queue.length > 0 || !engine.batch.durableFor(job)) return false;
    dropEventlog(job, reader);
    return true;
  });
  const reader: EventlogReader = Object.assign((id: JobId) => read(id), { recalled: (job: ActiveJob) => kept.add(job) });
  return reader;
}

/**
 * Jobspecs parsed during one replay, by their stored text: jobs submitted with one jobspec
 * (a job array, `submit --cc`, condor_submit's `queue N`; HTCondor's procs share their
 * cluster's ad the same way) share one deep-frozen object after a restart, as they did
 * before it. Small and cleared when full: such jobs have neighbouring ids.
 */
export class JobspecShare {
  private readonly byText = new Map<string, Jobspec>();
  get(text: string): Jobspec | undefined {
    return this.byText.get(text);
  }
  set(text: string, jobspec: Jobspec): void {
    if (this.byText.size >= JOBSPEC_SHARE_MAX) this.byText.clear();
    this.byText.set(text, jobspec);
  }
}

/** Distinct jobspec texts a JobspecShare holds before it starts again. */
const JOBSPEC_SHARE_MAX = 256;
