/**
 * The startd policy of each slot (spec htcondor.md §9): START, RANK, PREEMPT and the
 * attributes STARTD_ATTRS (or its older name STARTD_EXPRS) publishes, read from
 *
 * 1. a pasted HTCondor config, `[policy] condor_config = FILE`: the plain knobs, then for
 *    slot N of type T `SLOT_TYPE_<T>_<KNOB>`, then `SLOT<N>_<KNOB>` (most specific wins, as
 *    the startd reads them);
 * 2. `[policy] start / rank / preempt / startd-attrs` in the TOML file, over the config file;
 * 3. the same keys on a `[resources] slots` entry, over both, for that entry's slots.
 *
 * SUSPEND, WANT_SUSPEND and KILL are refused by name: jobtap does not suspend, and its
 * eviction is PREEMPT's (docs/ads.md). Every error names the TOML path, or FILE:LINE and
 * the column of a ClassAd syntax error.
 */
import { dirname, isAbsolute, resolve } from "node:path";
import { formatSource, type CondorConfig } from "../../condor/config.js";
import type { Expr } from "../../classad/expr.js";
import type { JobtapError } from "../../errors.js";
import { parsePolicyExpr as parseAt, policyConfigError as configError, readPolicyCondor as readCondor } from "./policy-config.js";
import type { SlotPolicy } from "../ads/hostads.js";
import type { Slot } from "../scheduler/slots.js";

/** The policy keys of `[policy]` and of a `[resources] slots` entry. */
export const POLICY_KEYS = ["start", "rank", "preempt", "startd-attrs"] as const;
/** HTCondor knobs jobtap refuses (it cannot suspend; eviction is PREEMPT's). */
const REFUSED = ["SUSPEND", "WANT_SUSPEND", "KILL", "CONTINUE", "WANT_VACATE"];
/** The refused knobs as `[policy]` keys (`want-suspend`). */
export const REFUSED_KEYS = REFUSED.map((n) => n.toLowerCase().replaceAll("_", "-"));
const KNOBS = { start: "START", rank: "RANK", preempt: "PREEMPT" } as const;

/** One level of TOML policy: `[policy]` or a slots entry (other keys are ignored here). */
export type PolicyTable = Record<string, unknown>;

interface Level {
  start?: Expr;
  rank?: Expr;
  preempt?: Expr;
  attrs: Array<[string, Expr]>;
}

/**
 * The policy of every slot. `policy` is the `[policy]` table, `perType[i]` the `[resources]
 * slots[i]` entry (its policy keys), `configDir` the directory relative FILEs are read from.
 * Throws CONFIG naming where the first problem is.
 */
export function slotPolicies(
  slots: readonly Slot[],
  policy: PolicyTable | undefined,
  perType: readonly (PolicyTable | undefined)[] = [],
  configDir = process.cwd(),
): SlotPolicy[] {
  const file = policy?.condor_config;
  if (file !== undefined && typeof file !== "string") throw configError("[policy].condor_config", "must be a file path");
  const condor = file === undefined ? undefined : readCondor(isAbsolute(file) ? file : resolve(configDir, file));
  const global = readLevel(policy ?? {}, "[policy]");
  const types = perType.map((t, i) => readLevel(t ?? {}, `[resources].slots[${i}]`));
  return slots.map((slot) => {
    const fromCondor = condor === undefined ? emptyLevel() : condorLevel(condor, slot);
    const fromType = slot.typeId > 0 ? types[slot.typeId - 1] : undefined;
    return combine([fromCondor, global, ...(fromType ? [fromType] : [])]);
  });
}

/** True when a table has any policy key (the manager then installs the policy). */
export function hasPolicy(t: Record<string, unknown> | undefined): boolean {
  // A refused knob alone counts too, so that it is refused by name rather than ignored.
  return t !== undefined && ([...POLICY_KEYS, ...REFUSED_KEYS].some((k) => t[k] !== undefined) || t.condor_config !== undefined);
}

function emptyLevel(): Level {
  return { attrs: [] };
}

/** Later levels override earlier ones; published attributes accumulate by name. */
function combine(levels: Level[]): SlotPolicy {
  const out: { start?: Expr; rank?: Expr; preempt?: Expr } = {};
  const attrs = new Map<string, [string, Expr]>();
  for (const l of levels) {
    if (l.start) out.start = l.start;
    if (l.rank) out.rank = l.rank;
    if (l.preempt) out.preempt = l.preempt;
    for (const [n, e] of l.attrs) attrs.set(n.toLowerCase(), [n, e]);
  }
  return { ...out, attrs: [...attrs.values()] };
}

function readLevel(t: PolicyTable, where: string): Level {
  for (const name of REFUSED) {
    const key = name.toLowerCase().replace("_", "-");
    if (t[key] !== undefined) throw refused(`${where}.${key}`, name);
  }
  const level = emptyLevel();
  for (const key of ["start", "rank", "preempt"] as const) {
    const v = t[key];
    if (v === undefined) continue;
    if (typeof v === "boolean" || typeof v === "number") level[key] = parseAt(String(v), `${where}.${key}`);
    else if (typeof v === "string") level[key] = parseAt(v, `${where}.${key}`);
    else throw configError(`${where}.${key}`, "must be ClassAd expression text (a string)");
  }
  const attrs = t["startd-attrs"];
  if (attrs === undefined) return level;
  if (typeof attrs !== "object" || attrs === null || Array.isArray(attrs)) {
    throw configError(`${where}.startd-attrs`, 'must be a table of attribute = expression text, such as { HasJava = "true" }');
  }
  for (const [name, text] of Object.entries(attrs as Record<string, unknown>)) {
    const at = `${where}.startd-attrs.${name}`;
    if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(name)) throw configError(at, "not a ClassAd attribute name");
    if (typeof text !== "string" && typeof text !== "boolean" && typeof text !== "number") throw configError(at, "must be ClassAd expression text");
    level.attrs.push([name, parseAt(String(text), at)]);
  }
  return level;
}


/** Slot `slot`'s knobs from the HTCondor config: SLOT<N>_ over SLOT_TYPE_<T>_ over plain. */
function condorLevel(c: CondorConfig, slot: Slot): Level {
  const prefixes = [`SLOT${slot.id}_`, ...(slot.typeId > 0 ? [`SLOT_TYPE_${slot.typeId}_`] : []), ""];
  const knob = (name: string): { text: string; where: string } | undefined => {
    for (const p of prefixes) {
      const text = c.get(p + name);
      if (text !== undefined) return { text, where: `${formatSource(c.source(p + name)!)}: ${p + name}` };
    }
    return undefined;
  };
  for (const name of REFUSED) {
    const found = knob(name);
    if (found) throw refused(found.where.replace(/: [^:]*$/, ""), name);
  }
  const level = emptyLevel();
  for (const [key, name] of Object.entries(KNOBS) as Array<[keyof typeof KNOBS, string]>) {
    const found = knob(name);
    if (found) level[key] = parseAt(found.text, found.where);
  }
  const list = knob("STARTD_ATTRS") ?? knob("STARTD_EXPRS");
  for (const name of list === undefined ? [] : list.text.split(/[\s,]+/).filter((n) => n !== "")) {
    const found = knob(name);
    if (found) level.attrs.push([name, parseAt(found.text, found.where)]);
  }
  return level;
}


function refused(where: string, name: string): JobtapError {
  return configError(where, `${name} is not supported: jobtap does not suspend or kill by policy (use PREEMPT to evict)`);
}


/** The directory of a config file, for relative `condor_config` paths. */
export function configDirOf(path: string): string {
  return dirname(resolve(path));
}
