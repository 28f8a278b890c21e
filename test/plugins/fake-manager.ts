/**
 * A tiny ManagerPort for tests that are about the host, not the manager: a job table and a
 * record of every call the host made. State rules are the bare minimum the host relies on
 * (unknown job, inactive job, NEW/DEPEND for dependencies).
 */
import { ErrorCode, JobtapError } from "../../src/errors.js";
import { SimulatedClock } from "../../src/manager/base/clock.js";
import type { JobId } from "../../src/manager/base/ids.js";
import type { ManagerPort } from "../../src/manager/port/port.js";
import type { JobArgs } from "../../src/manager/port/records.js";
import type { JobResult, State } from "../../src/manager/base/states.js";
import type { PluginPort } from "../../src/manager/port/port.js";

export class FakeManager implements ManagerPort {
  readonly clock = new SimulatedClock();
  jobs = new Map<JobId, JobArgs>();
  calls: string[] = [];
  host: PluginPort | undefined;
  conf: Record<string, unknown> = {};

  /** Adds a job in the given state and returns its id. */
  add(state: State, id: number, extra: Partial<JobArgs> = {}): JobId {
    const jid = BigInt(id) as JobId;
    this.jobs.set(jid, {
      id: jid,
      userid: 1000,
      urgency: 16,
      priority: -1,
      state,
      t_submit: 1,
      jobspec: { version: 1, resources: [], tasks: [], attributes: { system: {} } },
      dependencies: [],
      annotations: null,
      flags: [],
      ...extra,
    });
    return jid;
  }

  private job(id: JobId, active = true): JobArgs {
    const j = this.jobs.get(id);
    if (!j) throw new JobtapError(ErrorCode.UNKNOWN_JOB, `job ${id}: unknown job`);
    if (active && j.state === "INACTIVE") {
      throw new JobtapError(ErrorCode.JOB_INACTIVE, `job ${id}: job is inactive`);
    }
    return j;
  }

  private rec(s: string): void {
    this.calls.push(s);
  }

  lookup(id: JobId): JobArgs | undefined {
    const j = this.jobs.get(id);
    return j ? { ...j } : undefined;
  }
  activeJobs(): JobArgs[] {
    return [...this.jobs.values()].filter((j) => j.state !== "INACTIVE").map((j) => ({ ...j }));
  }
  postEvent(id: JobId, name: string): void {
    this.job(id);
    this.rec(`event ${id} ${name}`);
  }
  raiseException(id: JobId, type: string, severity: number, note: string): void {
    this.job(id);
    this.rec(`exception ${id} ${type} ${severity} ${note}`);
  }
  dependencyAdd(id: JobId, description: string): void {
    const j = this.job(id);
    if (j.state !== "NEW" && j.state !== "DEPEND") {
      throw new JobtapError(ErrorCode.BAD_STATE, `job ${id}: dependencyAdd in ${j.state}`);
    }
    this.rec(`dependency-add ${id} ${description}`);
  }
  dependencyRemove(id: JobId, description: string): void {
    this.job(id);
    this.rec(`dependency-remove ${id} ${description}`);
  }
  reprioritizeJob(id: JobId, priority: number): void {
    this.job(id);
    this.rec(`reprioritize ${id} ${priority}`);
  }
  reprioritizeAll(): void {
    this.rec("reprioritize-all");
  }
  jobResult(id: JobId): JobResult {
    this.job(id, false);
    return "COMPLETED";
  }
  eventPosted(id: JobId, name: string): boolean {
    this.job(id, false);
    return name === "submit";
  }
  execSaved(id: JobId): Record<string, unknown> {
    this.job(id, false);
    return {};
  }
  setFlag(id: JobId, flag: string): void {
    this.job(id);
    this.rec(`flag ${id} ${flag}`);
  }
  jobspecUpdate(id: JobId, updates: Record<string, unknown>): void {
    this.job(id);
    this.rec(`jobspec-update ${id} ${JSON.stringify(updates)}`);
  }
  prologStart(id: JobId, d: string): void {
    this.job(id);
    this.rec(`prolog-start ${id} ${d}`);
  }
  prologFinish(id: JobId, d: string, status: number): void {
    this.job(id);
    this.rec(`prolog-finish ${id} ${d} ${status}`);
  }
  epilogStart(id: JobId, d: string): void {
    const j = this.job(id);
    if (j.state !== "CLEANUP") {
      throw new JobtapError(ErrorCode.BAD_STATE, `job ${id}: epilog-start outside CLEANUP`);
    }
    this.rec(`epilog-start ${id} ${d}`);
  }
  epilogFinish(id: JobId, d: string, status: number): void {
    this.job(id);
    this.rec(`epilog-finish ${id} ${d} ${status}`);
  }
  config(): Record<string, unknown> {
    return this.conf;
  }
}
