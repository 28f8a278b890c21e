/**
 * Static slots (HTCondor's SLOT_TYPE_<N> / NUM_SLOTS_TYPE_<N>): the local pool carved into
 * fixed parts by `[resources] slots = [{ count, cores, gpus, memory }]`. A job runs inside
 * one slot (the one it names in `attributes.system.slot`, else the first that fits), so a
 * slot is a sub-pool; docs/ads.md says how its ad follows it. Without a layout the pool is
 * one slot with everything (SlotTypeID 0, HTCondor's "no slot type").
 */
import { ErrorCode, JobtapError } from "../../errors.js";

export interface ResourcePool {
  cores: number;
  gpus: number;
  /** Bytes. */
  memory: number;
}

/** One entry of `[resources] slots`. */
export interface SlotType {
  /** Slots of this type (default 1). */
  count?: number;
  /** Cores per slot (required, >= 1). */
  cores: number;
  /** GPUs per slot (default 0). */
  gpus?: number;
  /** Bytes per slot (default: an equal share of the memory no entry claims). */
  memory?: number;
  /** Startd policy for these slots (policy/slot-policy.ts reads them). */
  start?: string;
  rank?: string;
  preempt?: string;
  "startd-attrs"?: Record<string, string>;
}

/** Keys of a `slots` entry besides the sizes: the slot policy (policy/slot-policy.ts). */
const POLICY_KEYS = ["start", "rank", "preempt", "startd-attrs", "suspend", "want-suspend", "kill", "continue", "want-vacate"];

/** One carved slot: which of the pool's cores and gpus it owns, and its memory. */
export interface Slot {
  /** SlotID: 1, 2, ... in layout order. */
  readonly id: number;
  /** SlotTypeID: 1-based index of its `slots` entry; 0 for the default single slot. */
  readonly typeId: number;
  /** Pool core indices [coreLo, coreHi). */
  readonly coreLo: number;
  readonly coreHi: number;
  /** Pool gpu indices [gpuLo, gpuHi). */
  readonly gpuLo: number;
  readonly gpuHi: number;
  /** Bytes. */
  readonly memory: number;
}

/**
 * Carves the pool into slots. `types` undefined or empty: one slot with everything. A
 * layout that does not fit the pool throws a CONFIG error naming `where[i].key`.
 */
export function carveSlots(pool: ResourcePool, types: readonly SlotType[] | undefined, where = "[resources].slots"): Slot[] {
  if (types === undefined || types.length === 0) {
    return [{ id: 1, typeId: 0, coreLo: 0, coreHi: pool.cores, gpuLo: 0, gpuHi: pool.gpus, memory: pool.memory }];
  }
  const checked = types.map((t, i) => checkType(t, `${where}[${i}]`));
  let cores = 0;
  let gpus = 0;
  let claimed = 0;
  let unsized = 0;
  checked.forEach((t, i) => {
    const at = `${where}[${i}]`;
    if (cores + t.count * t.cores > pool.cores) throw misfit(at, "cores", t.count, t.cores, pool.cores - cores, pool.cores);
    if (gpus + t.count * t.gpus > pool.gpus) throw misfit(at, "gpus", t.count, t.gpus, pool.gpus - gpus, pool.gpus);
    if (t.memory !== undefined && claimed + t.count * t.memory > pool.memory) {
      throw misfit(at, "memory", t.count, t.memory, pool.memory - claimed, pool.memory);
    }
    cores += t.count * t.cores;
    gpus += t.count * t.gpus;
    if (t.memory === undefined) unsized += t.count;
    else claimed += t.count * t.memory;
  });
  const share = unsized > 0 ? Math.floor((pool.memory - claimed) / unsized) : 0;
  const slots: Slot[] = [];
  let core = 0;
  let gpu = 0;
  checked.forEach((t, i) => {
    for (let k = 0; k < t.count; k++) {
      slots.push({
        id: slots.length + 1,
        typeId: i + 1,
        coreLo: core,
        coreHi: core + t.cores,
        gpuLo: gpu,
        gpuHi: gpu + t.gpus,
        memory: t.memory ?? share,
      });
      core += t.cores;
      gpu += t.gpus;
    }
  });
  return slots;
}

function checkType(t: unknown, at: string): { count: number; cores: number; gpus: number; memory?: number } {
  if (typeof t !== "object" || t === null || Array.isArray(t)) throw configError(at, "must be a table such as { count = 2, cores = 4 }");
  const o = t as Record<string, unknown>;
  for (const key of Object.keys(o)) {
    if (!["count", "cores", "gpus", "memory", ...POLICY_KEYS].includes(key)) {
      throw configError(`${at}.${key}`, "unknown key (expected count, cores, gpus, memory, start, rank, preempt, startd-attrs)");
    }
  }
  const int = (key: string, min: number, fallback?: number): number => {
    const v = o[key] ?? fallback;
    if (v === undefined) throw configError(`${at}.${key}`, "is required");
    if (!Number.isInteger(v) || (v as number) < min) throw configError(`${at}.${key}`, `must be an integer >= ${min}, got ${JSON.stringify(v)}`);
    return v as number;
  };
  const memory = o.memory;
  if (memory !== undefined && (!Number.isInteger(memory) || (memory as number) < 0)) {
    throw configError(`${at}.memory`, `must be a byte count, got ${JSON.stringify(memory)}`);
  }
  return { count: int("count", 1, 1), cores: int("cores", 1), gpus: int("gpus", 0, 0), ...(memory === undefined ? {} : { memory: memory as number }) };
}

function misfit(at: string, what: string, count: number, each: number, left: number, total: number): JobtapError {
  const unit = what === "memory" ? " bytes" : "";
  return configError(
    at,
    `${count} slot(s) × ${each}${unit} ${what} = ${count * each}${unit} do not fit: ${Math.max(0, left)}${unit} of the ${total}${unit} ${what} in [resources] are left`,
  );
}

function configError(where: string, why: string): JobtapError {
  return new JobtapError(ErrorCode.CONFIG, `${where}: ${why}`, { path: where });
}

/** The slot named by a job (`attributes.system.slot`), checked against the layout. */
export function slotOf(slots: readonly Slot[], id: number): Slot | undefined {
  return slots[id - 1];
}

/** "slots 1-4" / "slot 1": for messages naming what exists. */
export function describeSlots(slots: readonly Slot[]): string {
  return slots.length === 1 ? "slot 1" : `slots 1-${slots.length}`;
}
