/**
 * The ClassAd part of the plugin context: job ads (src/manager/ads/jobad.ts) and the host's
 * machine and slot ads (src/manager/ads/hostads.ts), read and published through the manager
 * port. Documented in docs/ads.md and docs/plugins.md.
 */
import type { ClassAd } from "../classad/classad.js";
import { ErrorCode, JobtapError } from "../errors.js";
import { formatJobId, type JobId } from "../manager/base/ids.js";
import type { AdTarget, HostAdsApi, ManagerPort } from "../manager/port/port.js";

/** What a plugin can do with ads. */
export interface AdsApi {
  /**
   * The job's ad (HTCondor's ClassAd view of it), active or inactive. Read-only and shared
   * until the job's next event: `clone()` it to change it. Cheap: cached per job.
   * Throws UNKNOWN_JOB.
   */
  jobAd(id: JobId): ClassAd;
  /** A fresh copy of the machine ad (with what was published into it). */
  machineAd(): ClassAd;
  /** Fresh copies of the slot ads, in SlotID order. */
  slotAds(): ClassAd[];
  /** A fresh copy of slot `id`'s ad (its SlotID), or undefined. */
  slotAd(id: number): ClassAd | undefined;
  /**
   * Merges `ad` into the host's ads under this plugin's `source` (HTCondor's later-wins
   * rules, docs/ads.md): publishing the same source again replaces its ad in place.
   * Withdrawn automatically when the plugin is removed.
   */
  publishAd(source: string, ad: ClassAd, target?: AdTarget): void;
  /** Removes what this plugin published under `source`; false if nothing was. */
  withdrawAd(source: string): boolean;
}

/** The pieces of the host the ads API needs (kept narrow so the host can change shape). */
export interface AdsHost {
  /** The manager port, or a coded error naming `what` when none is attached. */
  manager(what: string): ManagerPort;
}

/** The plugin-side record the ads API keeps per plugin. */
export interface AdsRecord {
  readonly name: string;
  readonly removed: boolean;
  /** Run when the plugin is removed. */
  readonly onRemove: Array<() => void>;
}

/** Builds the ads part of one plugin's context. `live` fails once the plugin is removed. */
export function adsApi(host: AdsHost, rec: AdsRecord, live: (what: string) => void): AdsApi {
  const sources = new Set<string>();
  const hostAds = (what: string): HostAdsApi => {
    live(what);
    const h = host.manager(`plugin ${rec.name}: ${what}`).hostAds;
    if (!h) throw new JobtapError(ErrorCode.NOT_SUPPORTED, `plugin ${rec.name}: ${what}: this job manager has no host ads`);
    return h;
  };
  // A plugin's sources are named after it, so two plugins never replace each other's ads.
  const qualified = (source: string) => `${rec.name}:${source}`;
  return {
    jobAd(id) {
      live("jobAd");
      const m = host.manager(`plugin ${rec.name}: jobAd`);
      if (typeof m.jobAd !== "function") throw new JobtapError(ErrorCode.NOT_SUPPORTED, `plugin ${rec.name}: jobAd: this job manager has no job ads`);
      const ad = m.jobAd(id);
      if (!ad) throw new JobtapError(ErrorCode.UNKNOWN_JOB, `plugin ${rec.name}: jobAd: unknown job ${formatJobId(id)}`, { plugin: rec.name });
      return ad;
    },
    machineAd: () => hostAds("machineAd").machineAd(),
    slotAds: () => hostAds("slotAds").slotAds(),
    slotAd: (id) => hostAds("slotAd").slotAd(id),
    publishAd(source, ad, target) {
      const h = hostAds("publishAd");
      if (typeof source !== "string" || source === "") {
        throw new JobtapError(ErrorCode.INVALID_ARGUMENT, `plugin ${rec.name}: publishAd: a source name is required`);
      }
      h.publish(qualified(source), ad, target);
      if (sources.size === 0) rec.onRemove.push(() => withdrawAll(host, rec, sources));
      sources.add(source);
    },
    withdrawAd(source) {
      const gone = hostAds("withdrawAd").withdraw(qualified(source));
      sources.delete(source);
      return gone;
    },
  };
}

function withdrawAll(host: AdsHost, rec: AdsRecord, sources: Set<string>): void {
  const h = host.manager(`plugin ${rec.name}: remove`).hostAds;
  for (const s of sources) h?.withdraw(`${rec.name}:${s}`);
  sources.clear();
}
