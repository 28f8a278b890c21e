/**
 * `job why` of a job held up by an isolated plugin whose worker is restarting (issue 36):
 * a host-level reason names the plugin, its restarts, the attempt under way and what it
 * holds on the job (a dependency it added, the priority of a job in PRIORITY), whether or
 * not the plugin has a `job.explain` handler (when it has, that call's labelled error line
 * stays beside it). Once the restart policy gives up, the job's end says why.
 * A real plugin file in a worker thread; its restarted worker's setup never settles (conf
 * `stall`), so the plugin stays "restarting" until the simulated clock passes its deadline.
 */
import { describe, expect, it } from "vitest";
import type { JobId } from "../../src/manager/base/ids.js";
import type { Reason } from "../../src/manager/port/reasons.js";
import { localTime } from "../../src/manager/why-state.js";
import type { TestHost } from "../../src/testhost.js";
import { hostWith, logged, realUntil, submit, until } from "../plugins/isolate-helpers.js";
import { restartingReason } from "../../src/plugins/isolate-why.js";
import type { Isolation } from "../../src/plugins/isolate.js";
import type { JobArgs } from "../../src/manager/port/records.js";

const OWNER = { userid: 0, owner: true };
const reasons = async (h: TestHost, id: JobId) => (await h.manager.why(id)).reasons;
const restarting = (rs: Reason[]) => rs.filter((r) => r.code === "isolated-restarting");

/**
 * iso-holds.js isolated (restart max 1), a job it holds in DEPEND and one in PRIORITY; then
 * its worker dies (`die`: exits; `hang`: misses its 5 s deadline) and its restart stalls.
 */
async function holding(conf: Record<string, unknown>, how: "die" | "hang" = "die") {
  const isolate = { heapMb: 64, restart: { max: 1, windowMs: 60_000 } };
  const h = await hostWith([["iso-holds.js", { isolate, deadlineMs: 5000 }, { stall: true, ...conf }]]);
  const dep = await submit(h, "dep", 0, { dependencies: [{ scheme: "hold", value: "x" }] });
  const nopri = await submit(h, "nopri");
  await until(h, () => h.job(dep).state === "DEPEND" && h.job(nopri).state === "PRIORITY");
  expect(restarting(await reasons(h, dep))).toEqual([]);
  const died = h.clock.now() / 1000;
  const call = h.plugins.callService("iso-holds.js", how, {}, OWNER).catch((e: Error) => e.message);
  if (how === "hang") await h.advance(5000);
  expect(await call).toMatch(how === "die" ? /isolated worker died/ : /did not settle within 5000 ms/);
  // The restarted worker is up and its setup stalls: the plugin stays restarting.
  await logged(h, /start 2: setup stalls/);
  expect(h.plugins.list()).toEqual([expect.objectContaining({ name: "iso-holds.js", isolated: "restarting" })]);
  return { h, dep, nopri, died };
}

const attempt = (died: number) =>
  `1 of 1 restarts within 60 s, 1 since load; attempt under way since ${localTime(died)}, if it fails, the plugin is unloaded`;

describe("job why: an isolated plugin restarting", () => {
  it("names the plugin, its restarts and the dependency it holds (no explain handler); given up, the end says why", async () => {
    const { h, dep, nopri, died } = await holding({});
    const rs = await reasons(h, dep);
    expect(rs.map((r) => [r.layer, r.source, r.code])).toEqual([
      ["state", "manager", "dependency"],
      ["plugin", "iso-holds.js", "isolated-restarting"],
    ]);
    expect(rs[1]!.text).toBe(`plugin iso-holds.js is restarting its isolated worker (${attempt(died)}): holds its dependency "iso-hold" outstanding`);
    expect(rs[1]!.figures).toEqual({
      plugin: "iso-holds.js",
      status: "restarting",
      restarts: 1,
      deaths_in_window: 1,
      restart_max: 1,
      window_s: 60,
      attempt_since: died,
      restarts_left: 0,
      probation_until: null,
      dependencies: "iso-hold",
      perilogs: "",
      priority: false,
    });

    const pri = restarting(await reasons(h, nopri));
    expect(pri).toHaveLength(1);
    expect(pri[0]!.text).toBe(`plugin iso-holds.js is restarting its isolated worker (${attempt(died)}): holds the job's priority (it cannot be asked until its worker is back)`);
    expect(pri[0]!.figures).toMatchObject({ priority: true, dependencies: "" });

    // The restarted worker's setup passes its deadline: a second death, past max 1.
    await h.advance(5000);
    await realUntil(() => h.job(dep).state === "INACTIVE");
    expect(h.plugins.list()).toEqual([expect.objectContaining({ name: "iso-holds.js", isolated: "failed" })]);
    const ended = await reasons(h, dep);
    expect(restarting(ended)).toEqual([]);
    expect(ended.at(-1)).toMatchObject({ layer: "end", code: "exception", figures: { type: "dependency" } });
    expect(ended.at(-1)!.text).toMatch(
      /^FAILED: dependency exception: plugin iso-holds.js was unloaded: dependency "iso-hold" can never be resolved; isolated worker died 2 times within 60 s \(restart max 1\); last: restart failed: iso-holds.js: setup failed: setup did not settle within 5000 ms$/,
    );
    expect(restarting(await reasons(h, nopri))).toEqual([]);
  });

  it("with a job.explain handler: its labelled error line and the host's reason", async () => {
    const { h, dep } = await holding({ explain: true });
    const rs = await reasons(h, dep);
    expect(rs.map((r) => [r.source, r.code])).toEqual([
      ["manager", "dependency"],
      ["iso-holds.js", "isolated-restarting"],
      ["iso-holds.js", "explain-error"],
    ]);
    expect(rs[2]!.text).toMatch(/^plugin iso-holds.js could not explain: .*isolated worker is gone: the worker exited with code 1/);
  });

  it("a worker that missed its deadline restarts on probation, and says until when", async () => {
    const { h, dep, died } = await holding({}, "hang");
    const [r] = restarting(await reasons(h, dep));
    // The deadline's death, within the 5 s advanced: the attempt began then.
    const missed = r!.figures.attempt_since as number;
    expect(missed).toBeGreaterThan(died);
    expect(missed).toBeLessThanOrEqual(died + 5);
    expect(r!.figures).toMatchObject({ status: "restarting-on-probation", restarts: 1, restarts_left: 0 });
    expect(r!.figures.probation_until).toBeCloseTo(missed + 60, 6);
    expect(r!.text).toBe(
      `plugin iso-holds.js is restarting its isolated worker (1 of 1 restarts within 60 s, 1 since load; attempt under way since ${localTime(missed)}, if it fails, the plugin is unloaded; ` +
        `on probation after a missed deadline until ${localTime(missed + 60)} (its calls get a 1000 ms deadline)): holds its dependency "iso-hold" outstanding`,
    );
  });

  // A dead worker's prologs and epilogs are finished with status 1 when it dies, so only a
  // restarted worker's own can be open while it restarts: the producer alone, on its data.
  it("names the prologs and epilogs the worker under way started on the job", () => {
    const id = 7 as unknown as JobArgs["id"];
    const iso = {
      state: "restarting", restarts: 2, deaths: [0, 1000], restart: { max: 3, windowMs: 60_000 }, restartSince: 1000,
      dependencies: new Map(), inFlight: () => 1,
      started: () => [{ kind: "epilog", id, description: "cleanup" }, { kind: "prolog", id: 8, description: "other job" }],
    } as unknown as Isolation;
    const job = { id, state: "CLEANUP", dependencies: [] } as unknown as JobArgs;
    const r = restartingReason("p.js", iso, job, true, 2000)!;
    expect(r.figures).toMatchObject({ perilogs: 'epilog "cleanup"', dependencies: "", priority: false, restarts_left: 1 });
    expect(r.text).toMatch(/: holds epilog "cleanup" started and not finished$/);
    expect(restartingReason("p.js", { ...iso, state: "running" } as Isolation, job, true, 2000)).toBeUndefined();
    expect(restartingReason("p.js", { ...iso, started: () => [] } as unknown as Isolation, job, true, 2000)).toBeUndefined();
  });
});
