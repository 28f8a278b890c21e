/**
 * The site's periodic job policy: `SYSTEM_PERIODIC_HOLD`, `_RELEASE`, `_REMOVE` (each with
 * `_REASON` and `_SUBCODE`) and `PERIODIC_EXPR_INTERVAL`, read from
 *
 * 1. a pasted HTCondor config, `[policy] condor_config = FILE` (the knobs by those names);
 * 2. `[policy] system-periodic-hold`, `system-periodic-hold-reason`,
 *    `system-periodic-hold-subcode` (likewise release and remove) and
 *    `periodic-expr-interval` (seconds) in the TOML file, over the config file.
 *
 * `SYSTEM_PERIODIC_VACATE` and the `_NAMES` lists are refused by name (jobtap has neither).
 * Every error names the TOML path, or FILE:LINE and the column of a ClassAd syntax error.
 * (slot-policy.ts reads the slots' knobs from the same two places.)
 */
import { isAbsolute, resolve } from "node:path";
import { formatSource, type CondorConfig } from "../../condor/config.js";
import { parsePolicyExpr as parseAt, policyConfigError as configError, readPolicyCondor as readCondor } from "./policy-config.js";
import type { SystemExpr, SystemPolicy } from "./user-policy.js";

/** The `[policy]` keys read here. */
export const PERIODIC_KEYS = ["hold", "release", "remove"].flatMap((a) => [
  `system-periodic-${a}`, `system-periodic-${a}-reason`, `system-periodic-${a}-subcode`,
]).concat(["periodic-expr-interval"]);

/** The site's periodic policy and interval (undefined: the default, 60 s). */
export interface PeriodicSettings {
  system: SystemPolicy;
  intervalMs?: number;
}

const REFUSED = ["SYSTEM_PERIODIC_VACATE", "SYSTEM_PERIODIC_HOLD_NAMES", "SYSTEM_PERIODIC_RELEASE_NAMES", "SYSTEM_PERIODIC_REMOVE_NAMES"];
/** The refused knobs as `[policy]` keys (`system-periodic-vacate`). */
export const REFUSED_KEYS = REFUSED.map((n) => n.toLowerCase().replaceAll("_", "-"));

/** Reads `[policy]` (and its condor_config FILE, relative to `configDir`); throws CONFIG naming where. */
export function periodicSettings(policy: Record<string, unknown> | undefined, configDir = process.cwd()): PeriodicSettings {
  const t = policy ?? {};
  const file = t.condor_config;
  if (file !== undefined && typeof file !== "string") throw configError("[policy].condor_config", "must be a file path");
  const condor = file === undefined ? undefined : readCondor(isAbsolute(file) ? file : resolve(configDir, file));
  const knob = (name: string, key: string): { text: string; where: string } | undefined => {
    const v = t[key];
    if (v !== undefined) {
      if (typeof v !== "string" && typeof v !== "number" && typeof v !== "boolean") throw configError(`[policy].${key}`, "must be ClassAd expression text (a string)");
      return { text: String(v), where: `[policy].${key}` };
    }
    const text = condor?.get(name);
    return text === undefined ? undefined : { text, where: `${formatSource(condor!.source(name)!)}: ${name}` };
  };
  for (const name of REFUSED) {
    const found = knob(name, name.toLowerCase().replaceAll("_", "-"));
    if (found) throw configError(found.where.replace(/: [^:]*$/, ""), `${name} is not supported by jobtap (it has no vacate and no policy lists; use SYSTEM_PERIODIC_HOLD/RELEASE/REMOVE)`);
  }
  const system: SystemPolicy = {};
  for (const action of ["hold", "release", "remove"] as const) {
    const name = `SYSTEM_PERIODIC_${action.toUpperCase()}`;
    const key = `system-periodic-${action}`;
    const main = knob(name, key);
    if (main === undefined) continue;
    const s: SystemExpr = { expr: parseAt(main.text, main.where) };
    const reason = knob(`${name}_REASON`, `${key}-reason`);
    if (reason) s.reason = parseAt(reason.text, reason.where);
    const sub = knob(`${name}_SUBCODE`, `${key}-subcode`);
    if (sub) s.subCode = parseAt(sub.text, sub.where);
    system[action] = s;
  }
  const interval = knob("PERIODIC_EXPR_INTERVAL", "periodic-expr-interval");
  return interval === undefined ? { system } : { system, intervalMs: seconds(interval.text, interval.where) * 1000 };
}

/** True when `[policy]` names anything read here (or a condor_config that may). */
export function hasPeriodicPolicy(t: Record<string, unknown> | undefined): boolean {
  // A refused knob alone counts too, so that it is refused by name rather than ignored.
  return t !== undefined && ([...PERIODIC_KEYS, ...REFUSED_KEYS].some((k) => t[k] !== undefined) || t.condor_config !== undefined);
}

/** Whole seconds, 0 or more (0: no periodic evaluation, as HTCondor). */
function seconds(text: string, where: string): number {
  const v = text.trim();
  if (!/^\d+$/.test(v) || !Number.isSafeInteger(Number(v))) {
    throw configError(where, `must be a whole number of seconds (0 turns periodic evaluation off), got ${JSON.stringify(text)}`);
  }
  return Number(v);
}



