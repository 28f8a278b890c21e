/**
 * The `[policy]` table's own keys. Its sub-tables (`[policy.limits]`, `[policy.jobspec]`,
 * `[policy.access]`) are Flux's and the plugins', so only plain values are checked here: a
 * misspelt `system-periodic-hold` or `start` would otherwise be read as no policy at all.
 */
import type { JobtapError } from "../../errors.js";
import { policyConfigError } from "./policy-config.js";
import { POLICY_KEYS, REFUSED_KEYS as SLOT_REFUSED } from "./slot-policy.js";
import { PERIODIC_KEYS, REFUSED_KEYS as PERIODIC_REFUSED } from "./system-periodic.js";

/** Every plain (non-table) key `[policy]` may hold: read, or refused by name with its own message. */
export const POLICY_VALUE_KEYS: ReadonlySet<string> = new Set([
  ...POLICY_KEYS,
  ...PERIODIC_KEYS,
  "condor_config",
  ...SLOT_REFUSED,
  ...PERIODIC_REFUSED,
]);

const isTable = (v: unknown) => typeof v === "object" && v !== null && !Array.isArray(v);

/** The CONFIG errors for `[policy]`'s unknown plain keys, each naming its TOML path. */
export function unknownPolicyKeys(policy: Record<string, unknown> | undefined): JobtapError[] {
  if (policy === undefined) return [];
  return Object.entries(policy)
    .filter(([k, v]) => !isTable(v) && !POLICY_VALUE_KEYS.has(k))
    .map(([k]) => policyConfigError(`[policy].${k}`, `unknown key; [policy] reads ${[...POLICY_KEYS, "condor_config", ...PERIODIC_KEYS].join(", ")} (tables such as [policy.limits] belong to plugins)`));
}
