/**
 * condor-fetch (loadable by name, not a builtin): HTCondor's job hooks that fetch work and
 * the starter hooks (spec htcondor.md §2, §3, §1), configured from the plugin's TOML `conf`
 * or a pasted HTCondor configuration.
 *
 * Each slot with a hook keyword runs FETCH_WORK (fetch.ts); an accepted job ad becomes a
 * jobtap job pinned to the slot, carrying `HookKeyword`, `FetchClaimId` and the whole
 * fetched ad in its job ad. The starter hooks (starter.ts) run around every job whose
 * keyword resolves, fetched or not. docs/condor-fetch.md.
 */
import { HookRunner, type ClassAd } from "jobtap/plugin";
import { fetchedOwner } from "./owner.js";
import type { FetchConfig } from "./config.js";
import type { PluginContext } from "jobtap/plugin";
import { readFetchConfig } from "./config.js";
import { explainStarter } from "./explain.js";
import { Fetcher } from "./fetch.js";
import { StarterHooks } from "./starter.js";

export { checkConfig } from "./config.js";

/** Registers conf.update, the job topics the starter hooks need, and query. */
export default function condorFetch(p: PluginContext): void {
  let cfg: FetchConfig | undefined;
  let fetcher: Fetcher | undefined;
  let allowRoot = false;
  const owner = (job: ClassAd) => fetchedOwner(job, { multiUser: p.hookUsers !== undefined, allowRoot, allowed: cfg?.allowedOwners });
  const runner = new HookRunner({ plugin: "condor-fetch", clock: p.clock, log: p.log, maxInFlight: 64, spawnHelpers: 2, users: p.hookUsers });
  const starter = new StarterHooks(p, runner, () => cfg, (oldId, newId) => fetcher?.jobReplaced(oldId, newId));
  p.on("conf.update", ({ conf }) => {
    allowRoot = (conf.exec as { "allow-root"?: unknown } | undefined)?.["allow-root"] === true;
    try {
      cfg = readFetchConfig(p.conf, p.slotAds().map((ad) => Number(ad.evaluate("SlotID"))));
    } catch (e) {
      return p.reject(`condor-fetch: ${(e as Error).message}`);
    }
    if (fetcher === undefined) fetcher = new Fetcher(p, runner, cfg, owner);
    else fetcher.reconfigure(cfg);
    return undefined;
  });
  // Fetching starts once every active job has been seen (restart: claims find their jobs).
  p.on("plugin.replay-done", () => fetcher?.start());
  p.on("job.new", (job) => {
    const ad = p.jobAd(job.id);
    const claim = ad.has("FetchClaimId") ? ad.evaluate("FetchClaimId") : undefined;
    if (typeof claim === "string" && job.state !== "INACTIVE") fetcher?.seenJob(job.id, claim);
    starter.onRestart(job);
  });
  p.on("job.state.run", (job) => starter.onRun(job));
  p.on("job.event.*", (job) => starter.onEvent(job));
  p.on("job.state.inactive", (job) => {
    starter.gone(job.id);
    fetcher?.jobGone(job.id);
  });
  p.on("job.explain", (job) => explainStarter(p, starter, job));
  p.on("plugin.query", () => ({ slots: fetcher?.query() ?? [], jobs: starter.query() }));
  // The runner's close kills the hooks still running (REPLY_FETCH, JOB_EXIT are not
  // waited for by anyone else): the manager's close waits until they have ended.
  p.onRemove(() => {
    fetcher?.stop();
    starter.stop();
    return runner.close();
  });
}
