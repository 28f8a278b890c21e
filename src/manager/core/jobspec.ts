/**
 * Jobspec helpers: validation of what the manager uses (Flux jobspec v1), redaction of what
 * plugins must not see, dotted-path updates, and the resource request the scheduler needs.
 */
import { ErrorCode, JobtapError } from "../../errors.js";
import type { Jobspec } from "../port/records.js";

/** What a job asks of the local pool. */
export interface ResourceRequest {
  nnodes: number;
  cores: number;
  gpus: number;
  /** Bytes; 0 when the jobspec does not say. */
  memory: number;
  /** Number of task slots (ntasks when tasks count per_slot = 1). */
  slots: number;
  /** The host slot (SlotID) the job must run in: `attributes.system.slot` (slots.ts). */
  slot?: number;
  /** The job's ClassAd has Requirements or Rank: the scheduler matches it against slot ads. */
  matchmaking?: true;
}

/** Deep merge where `null` deletes a key (annotations, memo). */
export function mergeNullDeletes(
  base: Record<string, unknown>,
  patch: Record<string, unknown>,
): Record<string, unknown> {
  const out: Record<string, unknown> = { ...base };
  for (const [k, v] of Object.entries(patch)) {
    if (v === null) delete out[k];
    else if (isPlainObject(v) && isPlainObject(out[k])) {
      out[k] = mergeNullDeletes(out[k] as Record<string, unknown>, v);
      if (Object.keys(out[k] as object).length === 0) delete out[k];
    } else out[k] = v;
  }
  return out;
}

/** True for a JSON object (not null, not an array). */
export function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/** Applies `{"a.b.c": value}` updates to a copy of the jobspec (copy-on-write along paths). */
/**
 * Flux's checks on a jobspec update (spec §5 jobspec_update_pack): at least one key, every
 * key under `attributes`, `resources` or `tasks`, and the job not yet running. Throws a
 * coded error naming the job; `label` is its formatted id. Beyond Flux: `inProlog` (the job
 * is in RUN, not started, with a prolog active) allows `tasks` and `attributes` updates, so a
 * prolog can rewrite what will be started (HTCondor's PREPARE_JOB; docs/condor-fetch.md).
 */
export function checkJobspecUpdate(label: string, state: string, updates: Record<string, unknown>, inProlog = false): void {
  const keys = Object.keys(updates);
  const bad = keys.find((k) => !/^(attributes|resources|tasks)(\.|$)/.test(k));
  if (keys.length === 0 || bad !== undefined) {
    throw new JobtapError(ErrorCode.INVALID_ARGUMENT, `job ${label}: invalid jobspec update key ${JSON.stringify(bad ?? "")}`);
  }
  // A prolog may still rewrite what will be started (HTCondor's PREPARE_JOB), not the resources.
  if (inProlog && state === "RUN" && !keys.some((k) => k.startsWith("resources"))) return;
  if (state === "RUN" || state === "CLEANUP") {
    throw new JobtapError(ErrorCode.BAD_STATE, `job ${label} (${state}): jobspec cannot be updated once running`);
  }
}

/** A copy of the jobspec with period-delimited paths set to new values. */
export function applyJobspecUpdates(jobspec: Jobspec, updates: Record<string, unknown>): Jobspec {
  let root = jobspec as unknown as Record<string, unknown>;
  for (const [path, value] of Object.entries(updates)) root = setPath(root, path.split("."), value);
  return root as unknown as Jobspec;
}

function setPath(obj: Record<string, unknown>, keys: string[], value: unknown): Record<string, unknown> {
  const [head, ...rest] = keys as [string, ...string[]];
  const copy = { ...obj };
  if (rest.length === 0) copy[head] = value;
  else copy[head] = setPath(isPlainObject(obj[head]) ? (obj[head] as Record<string, unknown>) : {}, rest, value);
  return copy;
}

/** True if the jobspec carries `attributes.system.environment` (what redaction removes). */
export function hasEnvironment(jobspec: Jobspec): boolean {
  const system = jobspec.attributes?.system;
  return !!system && "environment" in system;
}

/** The jobspec plugins see: `attributes.system.environment` removed. Shares unchanged parts. */
export function redactJobspec(jobspec: Jobspec): Jobspec {
  if (!hasEnvironment(jobspec)) return jobspec;
  const { environment: _omit, ...rest } = jobspec.attributes.system!;
  return { ...jobspec, attributes: { ...jobspec.attributes, system: rest } };
}

function badSpec(msg: string): JobtapError {
  return new JobtapError(ErrorCode.BAD_JOBSPEC, `jobspec: ${msg}`);
}

/**
 * Checks the parts of a Flux jobspec v1 that the manager relies on and throws BAD_JOBSPEC
 * naming the offending path otherwise. Extra keys are allowed (plugins read them).
 */
export function validateJobspec(js: unknown): Jobspec {
  return checkJobspec(js).jobspec;
}

/** validateJobspec that also returns the resource request it computed on the way. */
export function checkJobspec(js: unknown): { jobspec: Jobspec; request: ResourceRequest } {
  if (!isPlainObject(js)) throw badSpec("must be an object");
  if (js.version !== 1) throw badSpec(`version: expected 1, got ${JSON.stringify(js.version)}`);
  if (!Array.isArray(js.resources) || js.resources.length === 0) throw badSpec("resources: must be a non-empty array");
  if (!Array.isArray(js.tasks) || js.tasks.length === 0) throw badSpec("tasks: must be a non-empty array");
  // Loops, not forEach/every: no closures per submitted job.
  for (let i = 0; i < js.tasks.length; i++) {
    const t: unknown = js.tasks[i];
    if (!isPlainObject(t)) throw badSpec(`tasks[${i}]: must be an object`);
    if (!Array.isArray(t.command) || t.command.length === 0 || !allStrings(t.command)) {
      throw badSpec(`tasks[${i}].command: must be a non-empty array of strings`);
    }
  }
  if (!isPlainObject(js.attributes)) throw badSpec("attributes: must be an object");
  const sys = js.attributes.system;
  if (sys !== undefined && !isPlainObject(sys)) throw badSpec("attributes.system: must be an object");
  const slot = (sys as Record<string, unknown> | undefined)?.slot;
  if (slot !== undefined && (!Number.isInteger(slot) || (slot as number) < 1)) {
    throw badSpec(`attributes.system.slot: must be a slot number (SlotID >= 1), got ${JSON.stringify(slot)}`);
  }
  // Flux's validator: the time limit is a number of seconds, 0 meaning none (as `-t` checks).
  const duration = sys?.duration;
  if (duration !== undefined && !(typeof duration === "number" && duration >= 0 && Number.isFinite(duration))) {
    throw badSpec(`attributes.system.duration: must be a number of seconds >= 0 (0: no limit), got ${JSON.stringify(duration)}`);
  }
  const jobspec = js as unknown as Jobspec;
  return { jobspec, request: resourceRequest(jobspec) };
}

function allStrings(a: unknown[]): boolean {
  for (let i = 0; i < a.length; i++) if (typeof a[i] !== "string") return false;
  return true;
}

/** Sums a jobspec v1 resource tree into a request: slots × (cores, gpus, memory), × nodes. */
export function resourceRequest(js: Jobspec): ResourceRequest {
  const req: ResourceRequest = { nnodes: 0, cores: 0, gpus: 0, memory: 0, slots: 0 };
  walk(js.resources, 1, req, [], false);
  if (req.slots === 0) throw badSpec("resources: no slot found");
  const slot = js.attributes?.system?.slot;
  if (typeof slot === "number") req.slot = slot;
  if (hasMatchAttributes(js.attributes?.user?.classad)) req.matchmaking = true;
  return req;
}

/** Whether a `attributes.user.classad` table sets Requirements or Rank (any case). */
function hasMatchAttributes(table: unknown): boolean {
  if (!isPlainObject(table)) return false;
  for (const name of Object.keys(table)) {
    const key = name.toLowerCase();
    if (key === "requirements" || key === "rank") return true;
  }
  return false;
}

/** The jobspec path of resource `path` (indices from the top, each level under `.with`). */
function resourcePath(path: readonly number[]): string {
  return `resources${path.map((i) => `[${i}]`).join(".with")}`;
}

/** Sums one level of the resource tree; `path` (indices from the top, reused in place)
 *  becomes text only for an error message. */
function walk(list: unknown[], mult: number, req: ResourceRequest, path: number[], inSlot: boolean): void {
  const depth = path.length;
  for (let i = 0; i < list.length; i++) {
    path[depth] = i;
    path.length = depth + 1;
    const r: unknown = list[i];
    if (!isPlainObject(r) || typeof r.type !== "string") throw badSpec(`${resourcePath(path)}: needs a string type`);
    const count = countOf(r.count, path);
    const n = mult * count;
    if (r.type === "node") req.nnodes += n;
    else if (r.type === "slot") req.slots += n;
    else if (r.type === "core") req.cores += n;
    else if (r.type === "gpu") req.gpus += n;
    else if (r.type === "memory") req.memory += n * unitBytes(r.unit);
    if ((r.type === "core" || r.type === "gpu") && !inSlot) throw badSpec(`${resourcePath(path)}: ${r.type} must be inside a slot`);
    if (r.with !== undefined) {
      if (!Array.isArray(r.with)) throw badSpec(`${resourcePath(path)}.with: must be an array`);
      walk(r.with, n, req, path, inSlot || r.type === "slot");
    }
  }
}

function countOf(count: unknown, path: readonly number[]): number {
  if (typeof count === "number" && Number.isInteger(count) && count >= 1) return count;
  if (isPlainObject(count) && typeof count.min === "number" && count.min >= 1) return count.min;
  throw badSpec(`${resourcePath(path)}.count: must be an integer >= 1`);
}

function unitBytes(unit: unknown): number {
  const units: Record<string, number> = { B: 1, KB: 1024, MB: 1024 ** 2, GB: 1024 ** 3 };
  return typeof unit === "string" ? (units[unit.toUpperCase()] ?? 1) : 1;
}
