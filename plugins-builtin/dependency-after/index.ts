/**
 * .dependency-after: the after* dependency schemes (spec flux-jobtap §6.2). A dependent job
 * waits in DEPEND on an antecedent job's start (afterstart), end (afterany), success
 * (afterok), failure (afternotok) or exception (afterexcept).
 *
 * Bookkeeping is per antecedent: the dependents waiting on it, released at its `start`
 * event (afterstart, via a subscription) or when it becomes inactive. A dependent with
 * several dependencies leaves DEPEND when the last is removed; a dependency that can never
 * be satisfied raises a fatal `dependency` exception and drops the others. It is rebuilt after a
 * restart or reload because jobtap re-runs `job.dependency.*` for jobs still in DEPEND.
 */
import type { DependencyArgs, ExplainOut, JobArgs, JobId, PluginContext, ReasonInput, Rejection } from "jobtap/plugin";
import { ErrorCode, formatJobId, isJobtapError, parseJobId, withRead } from "jobtap/plugin";
import { endingOf, inactiveAtSubmit, releasedAtEnd, SCHEMES, type AfterType, type Ending } from "./rules.js";

/** FLUX_JOBID_ANY: never a valid antecedent. */
const JOBID_ANY = 0xffffffffffffffffn;

/** One dependent waiting on one antecedent. */
interface Waiter {
  depid: JobId;
  type: AfterType;
  description: string;
}

const NONE: readonly Waiter[] = Object.freeze([]);
const EVERY = (): boolean => true;

/** The plugin's state: antecedent id → waiters, and dependent id → antecedents. */
class AfterGraph {
  readonly waiting = new Map<JobId, Waiter[]>();
  private readonly refs = new Map<JobId, Set<JobId>>();

  add(antecedent: JobId, w: Waiter): void {
    const list = this.waiting.get(antecedent) ?? [];
    if (!list.some((x) => x.depid === w.depid && x.description === w.description)) list.push(w);
    this.waiting.set(antecedent, list);
    const r = this.refs.get(w.depid) ?? new Set<JobId>();
    r.add(antecedent);
    this.refs.set(w.depid, r);
  }

  /** Removes and returns the waiters on `antecedent` that `pick` selects. */
  take(antecedent: JobId, pick: (w: Waiter) => boolean): readonly Waiter[] {
    // Most jobs have no dependents: nothing to filter (this runs for every job that ends),
    // and an empty graph is not searched (a lookup by bigint id hashes it each time).
    const list = this.waiting.size === 0 ? undefined : this.waiting.get(antecedent);
    if (list === undefined) return NONE;
    const taken = list.filter(pick);
    const kept = list.filter((w) => !pick(w));
    if (kept.length > 0) this.waiting.set(antecedent, kept);
    else this.waiting.delete(antecedent);
    return taken;
  }

  /**
   * One dependency of `depid` on `antecedent` was released (its waiter already taken):
   * drop that reference only while no other waiter of `depid` remains on `antecedent`.
   * The dependent's other antecedents still hold it in DEPEND (issue 32: forgetting them
   * all here left a job with two dependencies waiting forever on the second).
   */
  released(antecedent: JobId, depid: JobId): void {
    const left = this.waiting.get(antecedent);
    if (left?.some((w) => w.depid === depid)) return;
    const r = this.refs.get(depid);
    if (r === undefined) return;
    r.delete(antecedent);
    if (r.size === 0) this.refs.delete(depid);
  }

  /** A dependent is gone (inactive, rejected, failed): drop all its references. */
  forget(depid: JobId): void {
    const antecedents = this.refs.size === 0 ? undefined : this.refs.get(depid);
    if (antecedents === undefined) return;
    for (const a of antecedents) this.take(a, (w) => w.depid === depid);
    this.refs.delete(depid);
  }
}

/** Parses the dependency value as a job id, or returns Flux's rejection text. */
function antecedentId(scheme: string, value: unknown): JobId | string {
  const bad = `dependency: ${scheme}: "${String(value)}" is not a valid jobid`;
  if (typeof value !== "string" && typeof value !== "number") return bad;
  try {
    const id = parseJobId(value);
    return BigInt(id) === JOBID_ANY ? bad : id;
  } catch {
    return bad;
  }
}

/** The plugin's handlers over one AfterGraph. */
class AfterPlugin {
  private readonly graph = new AfterGraph();
  /**
   * Dependents whose fatal exception was refused because they were still being admitted
   * (NEW, `validate` not yet queued: an admission handler answered later): dependent id →
   * the exception's note, raised when the job reaches DEPEND (its `dependency-add` takes
   * it there), dropped if it is rejected or ends first.
   */
  private readonly refusedInNew = new Map<JobId, string>();

  constructor(private readonly p: PluginContext) {}

  /** What is known of an antecedent in CLEANUP or INACTIVE (or not yet ended), to `fn`. */
  private ending<R>(args: JobArgs, fn: (end: Ending) => R): R | Promise<Awaited<R>> {
    const ended = args.state === "INACTIVE" || args.state === "CLEANUP";
    const p = this.p;
    const alloc = p.eventPosted(args.id, "alloc");
    const start = p.eventPosted(args.id, "start");
    if (!ended) return fn(endingOf(args, alloc, start, undefined));
    return withRead(p.jobResult(args.id), (result) => fn(endingOf(args, alloc, start, result)));
  }

  /** Satisfied at submit: add then remove, so the eventlog shows the dependency. */
  private resolveNow(id: JobId, description: string): undefined {
    this.p.dependencyAdd(id, description);
    this.p.dependencyRemove(id, description);
    return undefined;
  }

  /** `job.dependency.<scheme>`: check the antecedent, then resolve, reject or wait. */
  onScheme(args: DependencyArgs): Rejection | undefined | Promise<Rejection | undefined> {
    const ante = antecedentId(args.dependency.scheme, args.dependency.value);
    if (typeof ante === "string") return this.p.reject(ante);
    return withRead(this.p.lookup(ante), (target) => this.onTarget(args, ante, target));
  }

  /** `job.dependency.<scheme>` once the antecedent is looked up. */
  private onTarget(args: DependencyArgs, ante: JobId, target: JobArgs | undefined): Rejection | undefined | Promise<Rejection | undefined> {
    const p = this.p;
    const scheme = args.dependency.scheme;
    const type = SCHEMES[scheme]!;
    const value = String(args.dependency.value ?? "");
    if (target === undefined) return p.reject(`${scheme}: job ${value} not found`);
    if (target.userid !== args.userid) return p.reject(`${scheme}: Permission denied for job ${value}`);
    if (scheme === "after") {
      p.raiseException(args.id, "dependency", 3, "after: dependency scheme is deprecated, use afterstart");
    }
    const description = `${type}=${value}`;
    // Re-run at restart or reload (the job is already in DEPEND): a dependency no longer
    // outstanding was satisfied before; adding and removing it again would post duplicate
    // events and the removal would fail, raising an exception on a job that should run.
    if (args.state === "DEPEND" && !args.dependencies.includes(description)) return undefined;
    if (target.state === "INACTIVE") {
      return this.ending(target, (end) => {
        const why = inactiveAtSubmit(scheme, type, value, end);
        return why !== undefined ? p.reject(why) : this.resolveNow(args.id, description);
      });
    }
    if (type === "after-start" && p.eventPosted(ante, "start")) return this.resolveNow(args.id, description);
    p.dependencyAdd(args.id, description);
    this.graph.add(ante, { depid: args.id, type, description });
    if (type === "after-start") p.subscribe(ante);
    return undefined;
  }

  private release(antecedent: JobId, w: Waiter): void {
    this.graph.released(antecedent, w.depid);
    try {
      this.p.dependencyRemove(w.depid, w.description);
    } catch (e) {
      this.p.log.warn(`${formatJobId(w.depid)}: cannot release ${w.description}: ${(e as Error).message}`);
    }
  }

  private fail(w: Waiter, reason: string): void {
    this.graph.forget(w.depid);
    const note = `dependency ${w.description} ${reason}`;
    try {
      this.p.raiseException(w.depid, "dependency", 0, note);
    } catch (e) {
      if (!isJobtapError(e, ErrorCode.BAD_STATE)) return this.p.log.warn(`${formatJobId(w.depid)}: ${(e as Error).message}`);
      // Refused in NEW: the dependent's admission is still under way. It ends on reaching DEPEND.
      if (!this.refusedInNew.has(w.depid)) this.refusedInNew.set(w.depid, note);
    }
  }

  /** `job.state.depend`: a dependent whose antecedent failed while it was admitted ends now. */
  onDepend(id: JobId): void {
    const note = this.refusedInNew.size === 0 ? undefined : this.refusedInNew.get(id);
    if (note === undefined) return;
    this.refusedInNew.delete(id);
    try {
      this.p.raiseException(id, "dependency", 0, note);
    } catch (e) {
      this.p.log.warn(`${formatJobId(id)}: ${(e as Error).message}`);
    }
  }

  /** The antecedent started: release its afterstart waiters. */
  onStart(id: JobId): void {
    for (const w of this.graph.take(id, (x) => x.type === "after-start")) this.release(id, w);
  }

  /** Any job became inactive: release or fail what waits on it; forget its own waits. */
  onInactive(args: JobArgs): void | Promise<void> {
    if (this.refusedInNew.size > 0) this.refusedInNew.delete(args.id);
    const waiters = this.graph.take(args.id, EVERY);
    if (waiters.length === 0) return this.graph.forget(args.id);
    return this.ending(args, (end) => {
      for (const w of waiters) {
        const r = releasedAtEnd(w.type, end);
        if (r === true) this.release(args.id, w);
        else this.fail(w, r === "never started" ? "job never started" : "can never be satisfied");
      }
      this.graph.forget(args.id);
    });
  }

  forget(id: JobId): void {
    this.graph.forget(id);
    this.refusedInNew.delete(id);
  }

  /**
   * `job.explain`: each dependency of the job this plugin holds, with what it waits for and
   * the antecedent's state now (same key as the manager's generic line, which it replaces).
   */
  explain(args: JobArgs): ExplainOut | Promise<ExplainOut> | undefined {
    const waits = [...this.graph.waiting].flatMap(([ante, list]) =>
      list.filter((w) => w.depid === args.id).map((w) => ({ ante, w })),
    );
    if (waits.length === 0) return undefined;
    const reasons: ReasonInput[] = [];
    const steps = waits.map(({ ante, w }) =>
      withRead(this.p.lookup(ante), (target) => {
        reasons.push(explainWait(ante, w, target?.state));
        return 0;
      }),
    );
    const pending = steps.filter((s) => s instanceof Promise);
    if (pending.length === 0) return { reasons };
    return Promise.all(pending).then(() => ({ reasons }));
  }

  /** `plugin.query`: every pending dependency, ids in f58. */
  query(): Record<string, unknown> {
    const dependencies = [...this.graph.waiting].flatMap(([ante, list]) =>
      list.map((w) => ({ id: formatJobId(ante), depid: formatJobId(w.depid), type: w.type, description: w.description })),
    );
    return { dependencies };
  }
}

const WAITS_FOR: Record<AfterType, string> = {
  "after-start": "to start",
  "after-finish": "to finish",
  "after-success": "to complete successfully",
  "after-failure": "to fail",
  "after-except": "to end with an exception",
};

/** One waiting dependency as a reason. */
function explainWait(ante: JobId, w: Waiter, state: string | undefined): ReasonInput {
  const id = formatJobId(ante);
  return {
    layer: "state",
    code: "dependency",
    key: `dependency:${w.description}`,
    text: `waits for job ${id} ${WAITS_FOR[w.type]} (${w.type}); it is ${state ?? "gone"}`,
    figures: { dependency: w.description, type: w.type, antecedent: id, antecedent_state: state ?? null },
  };
}

/** Registers the scheme handlers, the release paths and plugin.query. */
export default function dependencyAfter(p: PluginContext): void {
  const after = new AfterPlugin(p);
  for (const scheme of Object.keys(SCHEMES)) p.on(`job.dependency.${scheme}`, (args) => after.onScheme(args));
  p.on("job.event.start", ({ id }) => after.onStart(id));
  p.on("job.state.depend", ({ id }) => after.onDepend(id));
  p.on("job.state.inactive", (args) => after.onInactive(args));
  // A dependent rejected at submit after its entry was made: drop its references.
  // (Released dependents are forgotten at release, cancelled ones at job.state.inactive.)
  p.on("job.destroy", ({ id }) => after.forget(id));
  p.on("plugin.query", () => after.query());
  p.on("job.explain", (args) => after.explain(args));
}
