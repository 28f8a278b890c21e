/**
 * Submission (spec §4.3, §3): submit event → job.create → job.validate →
 * job.dependency.<scheme> per dependency → job.new → held until the batch commit →
 * `validate`. A rejection posts `invalidate`, calls job.destroy and drops the job.
 */
import { ErrorCode, JobtapError, codedError } from "../errors.js";
import type { Engine } from "./engine/engine.js";
import { SUBMIT_FLAG } from "./core/events.js";
import type { FluidGenerator, JobId } from "./base/ids.js";
import { newActiveJob, type ActiveJob } from "./engine/job.js";
import { checkJobspec, isPlainObject, type ResourceRequest } from "./core/jobspec.js";
import { checkJobLimits, checkJobsPerUser, checkJobspecBytesPerUser, DEFAULT_JOB_LIMITS, type JobLimits } from "./core/limits.js";
import { SubmitRate } from "./core/rate.js";
import { parseUserAttributes } from "./ads/jobad.js";
import type { StackResult } from "./port/port.js";
import type { Jobspec } from "./port/records.js";
import { URGENCY_DEFAULT, URGENCY_MAX, URGENCY_MIN } from "./base/states.js";
import { isThenable, runSteps, type Step } from "./base/steps.js";
import type { OutOf } from "./port/topics.js";
import { newJobCore } from "./core/transition.js";
import { frozenJobspec, sameData, shapeOf, type Shape } from "./core/frozen.js";
import { infeasibleAtSubmit, type InfeasibleCheck } from "./feasibility.js";

export interface SubmitOptions {
  /** Submitting user (default: the instance owner). */
  userid?: number;
  urgency?: number;
  /** "debug", "waitable", "novalidate" (owner only), or the Flux bit mask. */
  flags?: readonly string[] | number;
  /**
   * Called with the job's id as it enters the store's current batch: what the caller posts
   * from it is written in the same transaction as the job (the manager's requeued copies
   * record their id on the original so that a restart does not submit a second copy).
   */
  accepted?: (id: JobId) => void;
}

/** A jobspec that passed the checks of its own: its resource request and stored JSON. */
interface CheckedJobspec {
  jobspec: Jobspec;
  request: ResourceRequest;
  json: string;
  /** Bytes of `json` (UTF-8), as the store keeps it. */
  bytes: number;
  /** Set once the same text came again: what sameData compares the next jobspec with. */
  shape: Shape | undefined;
}

/**
 * Jobspec objects checked during one submitMany call: jobs often share one object (`--cc`),
 * whose environment (the submitter's whole environment) is then measured, and the object
 * serialized, once. Scoped to the call: the caller cannot change the object meanwhile.
 */
export type SharedJobspecs = Map<object, CheckedJobspec>;

/** Outcome of one job of a batch submit. */
export type SubmitOutcome = { id: JobId } | { error: JobtapError };

/** How one job's admission ends: `ok` gets its id once durable, or `fail` the error. */
type Ok = (id: JobId) => void;
type Fail = (err: unknown) => void;

/** Parses submit flags into Flux's bit mask; throws INVALID_ARGUMENT on an unknown name. */
export function submitFlags(flags: SubmitOptions["flags"]): number {
  if (flags === undefined) return 0;
  if (typeof flags === "number") return flags;
  let bits = 0;
  for (const f of flags) {
    const bit = SUBMIT_FLAG[f as keyof typeof SUBMIT_FLAG];
    if (bit === undefined) throw new JobtapError(ErrorCode.INVALID_ARGUMENT, `unknown submit flag "${f}"`);
    bits |= bit;
  }
  return bits;
}

/** Checks an urgency value, throwing BAD_URGENCY naming it. */
export function checkUrgency(u: unknown): number {
  if (typeof u !== "number" || !Number.isInteger(u) || u < URGENCY_MIN || u > URGENCY_MAX) {
    throw new JobtapError(ErrorCode.BAD_URGENCY, `urgency value ${JSON.stringify(u)} is out of range (0..31)`);
  }
  return u;
}

/**
 * The executor of every `submit` promise: it hands over the promise's resolve and reject
 * (called synchronously by the Promise constructor), so no executor closure is made per job.
 */
const noop = (): void => undefined;
const captured: { ok: Ok; fail: Fail } = { ok: noop, fail: noop };
const capture = (resolve: Ok, reject: Fail): void => {
  captured.ok = resolve;
  captured.fail = reject;
};

const NO_OPTIONS: SubmitOptions = Object.freeze({});

/** Admission topics by step; step 2 is the job.dependency.<scheme> calls. */
const ADMISSION_TOPICS = ["job.create", "job.validate", "", "job.new"] as const;

/** Admission: checks, `submit`, the admission topics, then the held wait for the batch. */
export class Submitter {
  constructor(
    private readonly engine: Engine,
    private readonly ids: FluidGenerator,
    private readonly owner: number,
    private readonly limits: JobLimits = DEFAULT_JOB_LIMITS,
    /** The host's slots: does SlotID `n` exist, which there are (for the message), and
     *  could the pool ever satisfy a request (the feasibility check: feasibility.ts). */
    private readonly slots: { exists(n: number): boolean; describe(): string; infeasible?: InfeasibleCheck } = { exists: () => true, describe: () => "" },
    /** Throws when a guest's job could not run as the guest here (manager.ts guestRunnable). */
    private readonly guestRunnable?: (userid: number, jobspec: Jobspec) => void,
  ) {}

  /** [limits] submit-rate's buckets, on the manager's clock. */
  private readonly rate = new SubmitRate(() => this.engine.clock.now());

  /** The stored JSON of the job `enter` just admitted, handed to `accept` (one serialization per job). */
  private enteredJson = "";

  /**
   * Submits one job. Resolves with its id once the batch holding its eventlog is durable;
   * rejects with JOB_REJECTED (the plugin's errmsg) or a bad-input code.
   */
  submit(jobspecIn: unknown, opts: SubmitOptions = NO_OPTIONS, shared?: SharedJobspecs): Promise<JobId> {
    // The job keeps the promise's own resolve and reject (no closure of ours per job): a
    // closure made in the executor would keep this call's arguments alive until the job's
    // acknowledgement, the submitter's jobspec among them.
    const p = new Promise<JobId>(capture);
    const { ok, fail } = captured;
    captured.ok = captured.fail = noop; // not kept past this call
    try {
      this.admit(jobspecIn, opts, shared, ok, fail);
    } catch (err) {
      fail(err);
    }
    return p;
  }

  /**
   * Submits jobs in order (one submitMany), admitted one after another as `submit` does;
   * resolves once every job has its outcome, in order. One Promise for the whole call
   * rather than one per job (and a settled-result wrapper per job).
   */
  submitAll(items: ReadonlyArray<{ jobspec: unknown; opts?: SubmitOptions }>, shared: SharedJobspecs): Promise<SubmitOutcome[]> {
    const out = new Array<SubmitOutcome>(items.length);
    let left = items.length;
    if (left === 0) return Promise.resolve(out);
    return new Promise<SubmitOutcome[]>((resolve) => {
      for (let i = 0; i < items.length; i++) {
        const settle = (o: SubmitOutcome): void => {
          if (out[i] !== undefined) return; // once per job, whatever goes wrong after
          out[i] = o;
          if (--left === 0) resolve(out);
        };
        const ok: Ok = (id) => settle({ id });
        const fail: Fail = (err) => settle({ error: codedError(err) ?? new JobtapError(ErrorCode.INTERNAL, String(err)) });
        try {
          this.admit(items[i]!.jobspec, items[i]!.opts ?? NO_OPTIONS, shared, ok, fail);
        } catch (err) {
          fail(err);
        }
      }
    });
  }

  /**
   * One job's admission; `ok` gets its id once the batch holding its eventlog is durable,
   * or `fail` the error (JOB_REJECTED with the plugin's errmsg, a bad-input code). Synchronous up
   * to the commit while every handler is.
   */
  private admit(jobspecIn: unknown, opts: SubmitOptions, shared: SharedJobspecs | undefined, ok: Ok, fail: Fail): void {
    let job: ActiveJob;
    try {
      job = this.enter(jobspecIn, opts, shared);
    } catch (err) {
      fail(err);
      return;
    }
    job.admitted = ok;
    job.refused = fail;
    const json = this.enteredJson;
    this.enteredJson = "";
    // Nobody listens and no dependencies: no callbacks at all (the common, fast case).
    if (!this.needsCallbacks(job.core.jobspec)) {
      this.settle(job, undefined, json, opts.accepted);
      return;
    }
    let why: string | undefined | Promise<string | undefined>;
    try {
      why = this.admission(job);
    } catch (err) {
      this.reject(job);
      fail(err);
      return;
    }
    // Synchronous handlers (the builtins) cost no promise round trips per topic.
    if (!(why instanceof Promise)) {
      this.settle(job, why, json, opts.accepted);
      return;
    }
    why.then(
      (w) => {
        try {
          this.settle(job, w, json, opts.accepted);
        } catch (err) {
          fail(err);
        }
      },
      (err: unknown) => {
        try {
          this.reject(job);
        } finally {
          fail(err);
        }
      },
    );
  }

  /** Accepts the job, or rejects it with the plugin's message. */
  private settle(job: ActiveJob, rejection: string | undefined, json: string, accepted?: (id: JobId) => void): void {
    if (rejection === undefined && this.slots.infeasible) rejection = infeasibleAtSubmit(job, this.slots.infeasible);
    if (rejection === undefined) {
      this.accept(job, json);
      accepted?.(job.core.id);
      return;
    }
    const fail = job.refused!;
    this.reject(job);
    fail(new JobtapError(ErrorCode.JOB_REJECTED, rejection, { id: job.core.id.toString() }));
  }

  /** What only the instance owner may submit (Flux job-ingest): urgency > 16, waitable, novalidate. */
  private checkGuest(urgency: number, flags: number): void {
    if (urgency > URGENCY_DEFAULT) {
      throw new JobtapError(ErrorCode.PERMISSION_DENIED, `urgency ${urgency}: only the instance owner can submit with urgency >${URGENCY_DEFAULT}`);
    }
    if (flags & SUBMIT_FLAG.waitable) throw new JobtapError(ErrorCode.PERMISSION_DENIED, "only the instance owner can submit with the waitable flag");
    if (flags & SUBMIT_FLAG.novalidate) throw new JobtapError(ErrorCode.PERMISSION_DENIED, "novalidate flag requires instance owner");
  }

  /**
   * Checks the request, creates the job, processes `submit`; the job is held and admitted.
   * The jobspec is serialized here once (its size is checked, and the same text is what
   * `accept` stores): left in `enteredJson`. `shared` (one submitMany call) checks and
   * serializes a jobspec object shared by many jobs once.
   */
  private enter(jobspecIn: unknown, opts: SubmitOptions, shared: SharedJobspecs | undefined): ActiveJob {
    const e = this.engine;
    if (e.fatal) throw e.fatal;
    const known = typeof jobspecIn === "object" && jobspecIn !== null ? shared?.get(jobspecIn) : undefined;
    const checked = known ?? this.checked(jobspecIn);
    if (known === undefined) shared?.set(jobspecIn as object, checked);
    const { jobspec, request, json, bytes } = checked;
    const urgency = checkUrgency(opts.urgency ?? URGENCY_DEFAULT);
    const userid = opts.userid ?? this.owner;
    const flags = submitFlags(opts.flags);
    if (userid !== this.owner) {
      this.checkGuest(urgency, flags);
      this.guestRunnable?.(userid, jobspec);
    }
    checkJobsPerUser(userid, e.activeOf(userid), this.limits);
    this.rate.take(userid, this.limits);
    checkJobspecBytesPerUser(userid, e.storedBytesOf(userid), bytes, this.limits);
    const job = newActiveJob(newJobCore(this.ids.next(), jobspec));
    job.jobspecBytes = bytes;
    job.request = request;
    job.unstoredFrom = 0;
    job.queue.push(e.entry("submit", this.submitContext(userid, urgency, flags)));
    e.drain(job);
    // Held from here on: events plugins post during admission queue behind `submit`, and
    // `validate` waits for the batch commit.
    job.hold++;
    // Admitted before the callbacks so plugins can look the job up and post to it.
    e.admit(job);
    // Counted from admission on (a rejected job gives it back): jobs of one user under
    // admission together cannot pass the limit between them.
    e.countStored(userid, bytes);
    this.enteredJson = json;
    return job;
  }

  /**
   * The `submit` event's context, deep-frozen and shared by the jobs one user submits one
   * after another at one urgency and flags (its eventlog text is then made once: eventlog-text.ts).
   */
  private submitContext(userid: number, urgency: number, flags: number): Record<string, unknown> {
    const c = this.lastSubmitContext;
    if (c.userid === userid && c.urgency === urgency && c.flags === flags) return c;
    return (this.lastSubmitContext = Object.freeze({ userid, urgency, flags, version: 1 }));
  }

  private lastSubmitContext: Readonly<{ userid: number; urgency: number; flags: number; version: number }> = Object.freeze({
    userid: -1,
    urgency: -1,
    flags: -1,
    version: 1,
  });

  /**
   * The checks of a jobspec that depend on it alone (shape, size limits, slot, ClassAd
   * attributes); the job keeps a deep-frozen copy (frozen.ts), not the submitter's object.
   */
  private checked(jobspecIn: unknown): CheckedJobspec {
    // Jobs are often submitted many times over with the same jobspec (job arrays, `--cc`
    // over separate requests, benches): the same data shares the last job's checks, frozen
    // copy, request and stored text (semantics.md, "A job's jobspec"). Compared as data
    // (sameData: cheaper than serializing) once the same text has been seen twice in a row.
    const last = this.lastChecked;
    if (last?.shape !== undefined && sameData(jobspecIn, last.jobspec, last.shape)) return this.slotChecked(last);
    const { jobspec, request } = checkJobspec(jobspecIn);
    const json = JSON.stringify(jobspec);
    const bytes = Buffer.byteLength(json);
    checkJobLimits(jobspec, this.limits, bytes);
    parseUserAttributes(jobspec);
    if (last !== undefined && last.json === json) {
      last.shape ??= shapeOf(last.jobspec);
      return this.slotChecked(last);
    }
    const fresh: CheckedJobspec = { jobspec: frozenJobspec(jobspec), request: Object.freeze(request), json, bytes, shape: undefined };
    this.lastChecked = fresh;
    return this.slotChecked(fresh);
  }

  /** `checked` passed its slot check: the slot it names exists on this host. */
  private slotChecked(checked: CheckedJobspec): CheckedJobspec {
    const slot = checked.request.slot;
    if (slot !== undefined && !this.slots.exists(slot)) {
      throw new JobtapError(ErrorCode.UNKNOWN_SLOT, `jobspec: attributes.system.slot: no slot ${slot} on this host (it has ${this.slots.describe()})`);
    }
    return checked;
  }

  /** The jobspec checked last, shared by the next job whose jobspec serializes the same. */
  private lastChecked: CheckedJobspec | undefined;

  /** The job is accepted: it enters the store (`json`: its jobspec as `enter` serialized
   *  it), `validate` is queued behind the commit; once the batch is durable the hold is
   *  released and the job's `admitted` gets its id (`durable`). */
  private accept(job: ActiveJob, json: string): void {
    job.announced = true;
    this.engine.counts.submitted++;
    this.engine.batch.storeNewJob(job, json);
    job.queue.push(this.engine.entry("validate"));
    this.engine.batch.afterCommitWith(this.durable, job);
  }

  /**
   * An accepted job's batch is durable (or failed): `validate` goes ahead; the submitter is
   * told now, or, when plugins posted events while admitting it (queued behind `submit`,
   * ahead of `validate`), once the batch that writes them is durable too.
   */
  private readonly durable = (job: ActiveJob, err?: JobtapError): void => {
    if (err) return this.acknowledge(job, err);
    const posted = job.queue[0]?.name !== "validate";
    job.hold--;
    this.engine.drain(job);
    if (posted) this.engine.batch.afterCommitWith(this.acknowledge, job);
    else this.acknowledge(job);
  };

  /** Tells the submitter: the job's id, or the error of the batch that failed. */
  private readonly acknowledge = (job: ActiveJob, err?: JobtapError): void => {
    const ok = job.admitted!;
    const fail = job.refused!;
    job.admitted = undefined;
    job.refused = undefined;
    if (err) fail(err);
    else ok(job.core.id);
  };

  private needsCallbacks(jobspec: Jobspec): boolean {
    const p = this.engine.port;
    return (
      jobspec.attributes.system?.dependencies !== undefined ||
      p.matches("job.create") ||
      p.matches("job.validate") ||
      p.matches("job.new")
    );
  }

  /**
   * job.create, job.validate, job.dependency.*, job.new: a rejection message or undefined.
   * Synchronous while every handler is, so the jobs of one submitMany are admitted one after
   * another (a job's job.new runs before the next job's callbacks); from the first handler
   * that returns a Promise the rest runs after it settles.
   */
  private admission(job: ActiveJob): string | undefined | Promise<string | undefined> {
    return runSteps<Admission, string>({ submitter: this, job }, ADMISSION_TOPICS.length, Submitter.admissionStep);
  }

  private static admissionStep({ submitter, job }: Admission, step: number): Step<string> {
    const e = submitter.engine;
    if (step === 1 && job.core.submitFlags & SUBMIT_FLAG.novalidate) return undefined;
    if (step === 2) {
      const deps = job.core.jobspec.attributes.system?.dependencies;
      if (deps === undefined) return undefined;
      if (!Array.isArray(deps)) return "dependencies object must be an array";
      return runSteps<Dependencies, string>({ e, job, deps }, deps.length, dependencyStep);
    }
    const topic = ADMISSION_TOPICS[step] as (typeof ADMISSION_TOPICS)[0 | 1 | 3];
    // From job.new on the job counts as accepted for the plugins (as in Flux): a plugin
    // restarted while this call is under way (it may be the call that killed its worker)
    // gets job.new for it in its replay.
    if (step === 3) job.announced = true;
    if (!e.port.matches(topic)) return undefined;
    const res = e.port.callJob(topic, e.args(job));
    return isThenable(res) ? res.then((r) => submitter.stackOutcome(job, step, r)) : submitter.stackOutcome(job, step, res);
  }

  /** A rejection message from one admission stack call; job.new OUT is applied. */
  private stackOutcome(job: ActiveJob, step: number, res: StackResult<OutOf<"job.new">>): string | undefined {
    if (step === 3) {
      this.engine.applyOut(job, "job.new", res);
      return undefined;
    }
    if (!res.error) return undefined;
    return typeof res.out.errmsg === "string" ? res.out.errmsg : "rejected by job-manager plugin";
  }

  private reject(job: ActiveJob): void {
    const e = this.engine;
    job.queue.length = 0;
    job.hold = 0;
    e.post(job, "invalidate");
    const pending = e.callJob(job, "job.destroy");
    if (pending) pending.catch(() => undefined);
    e.port.jobGone(job.core.id);
    // Its bytes were counted at admission; a job dismissed already gave them back.
    if (e.active.has(job.core.id)) e.countStored(job.core.userid, -job.jobspecBytes);
    e.dismiss(job);
  }
}

/** One job's admission (the step loop's context). */
interface Admission {
  submitter: Submitter;
  job: ActiveJob;
}

/** One job's dependency list (the step loop's context). */
interface Dependencies {
  e: Engine;
  job: ActiveJob;
  deps: unknown[];
}

/** job.dependency.<scheme> for dependency `i`: a rejection message or undefined. */
function dependencyStep({ e, job, deps }: Dependencies, i: number): Step<string> {
  const d: unknown = deps[i];
  if (!isPlainObject(d) || typeof d.scheme !== "string") return `dependency[${i}] missing string scheme`;
  const scheme = d.scheme;
  const topic = `job.dependency.${scheme}` as const;
  if (topic.length > 128) return "rejecting absurdly long dependency scheme";
  if (!e.port.matches(topic)) return `dependency scheme "${scheme}" not supported`;
  const res = e.port.callJob(topic, e.args(job, { dependency: d as { scheme: string } }));
  return isThenable(res) ? res.then((r) => dependencyOutcome(r, scheme)) : dependencyOutcome(res, scheme);
}

/** A rejection message from one job.dependency.<scheme> stack call, or undefined. */
function dependencyOutcome(res: StackResult, scheme: string): string | undefined {
  if (res.handled === 0) return `dependency scheme "${scheme}" not supported`;
  if (!res.error) return undefined;
  return typeof res.out.errmsg === "string" ? res.out.errmsg : "rejected by job-manager dependency plugin";
}
