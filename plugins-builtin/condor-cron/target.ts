/**
 * Which slot ads a startd cron ad merges into (spec htcondor.md §7.6): the ad's own
 * selector attributes, turned into the host's generic `AdTarget`.
 */
import { adTargetSelects, unparse, type AdTarget, type ClassAd } from "jobtap/plugin";

/**
 * The target HTCondor gives a startd cron ad (§7.6): `SlotMergeConstraint`, else a
 * non-empty string `SlotName` (else `Name`), else an integer `SlotTypeId`, else an integer
 * `SlotId`, else every slot; `slotIds` is the cron job's SLOTS list, if any.
 */
export function cronTarget(ad: ClassAd, slotIds?: readonly number[]): AdTarget {
  const base: AdTarget = slotIds === undefined ? {} : { slotIds };
  const constraint = ad.lookup("SlotMergeConstraint");
  if (constraint !== undefined) return { ...base, constraint: unparse(constraint, true) };
  const nameAttr = ad.has("SlotName") ? "SlotName" : "Name";
  const name = ad.has(nameAttr) ? ad.evaluate(nameAttr) : undefined;
  if (typeof name === "string" && name !== "") return { ...base, namePrefix: name };
  const typeId = ad.has("SlotTypeId") ? ad.evaluate("SlotTypeId") : undefined;
  if (typeof typeId === "bigint") return { ...base, slotTypeId: Number(typeId) };
  const slotId = ad.has("SlotId") ? ad.evaluate("SlotId") : undefined;
  if (typeof slotId === "bigint") return { ...base, slotId: Number(slotId) };
  return base;
}

/**
 * Whether a startd cron ad (`slotIds` the job's SLOTS) merges into the slot whose ad is
 * `slotAd`: the rule the host applies to a publication at `cronTarget(ad)`.
 */
export function cronAdSelects(ad: ClassAd, slotIds: readonly number[] | undefined, slotAd: ClassAd): boolean {
  return adTargetSelects(cronTarget(ad, slotIds), ad, slotAd);
}
