import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { SimulatedClock } from "../../src/manager/base/clock.js";
import { formatJobId, type JobId } from "../../src/manager/base/ids.js";
import { createJobManager, type JobManager } from "../../src/manager/manager.js";
import { type JobtapHost } from "../../src/plugins/index.js";
import { jobtapPlugins } from "../../plugins-builtin/index.js";
import { testJobspec, type TestJob } from "../../src/testhost.js";

let dir: string;
const open: JobManager[] = [];
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "jobtap-builtins-restart-"));
});
afterEach(async () => {
  for (const m of open.splice(0)) await m.close();
  rmSync(dir, { recursive: true, force: true });
});

/** A manager on a SQLite store in `dir`, with every builtin, on a simulated clock. */
async function start(clock: SimulatedClock, config: Record<string, unknown> = {}): Promise<{ m: JobManager; host: JobtapHost }> {
  let host: JobtapHost | undefined;
  const factory = jobtapPlugins({ config, pluginPath: [], log: () => undefined });
  const m = await createJobManager({
    statedir: dir,
    clock,
    config,
    resources: { cores: 4 },
    log: () => undefined,
    plugins: async (port) => (host = await factory(port)),
  });
  open.push(m);
  return { m, host: host! };
}

async function submit(m: JobManager, clock: SimulatedClock, job: TestJob): Promise<JobId> {
  const p = m.submit(testJobspec(job), job.urgency !== undefined ? { urgency: job.urgency } : {});
  let done = false;
  p.then(() => (done = true), () => (done = true));
  while (!done) await clock.advance(10);
  return p;
}

async function until(clock: SimulatedClock, cond: () => boolean): Promise<void> {
  for (let i = 0; i < 100_000 && !cond(); i++) await clock.advance(10);
  expect(cond()).toBe(true);
}

describe("builtin dependencies across a restart", () => {
  it("after*, begin-time and singleton dependencies are rebuilt and still release", async () => {
    const clock = new SimulatedClock();
    const first = await start(clock);
    const a = await submit(first.m, clock, { urgency: 0 });
    const b = await submit(first.m, clock, { dependencies: [{ scheme: "afterany", value: formatJobId(a) }] });
    const c = await submit(first.m, clock, {
      dependencies: [{ scheme: "begin-time", value: clock.now() / 1000 + 3600 }],
    });
    const e = await submit(first.m, clock, { name: "x", urgency: 0 });
    const d = await submit(first.m, clock, { name: "x", dependencies: [{ scheme: "singleton" }] });
    for (const id of [b, c, d]) expect(first.m.job(id).state).toBe("DEPEND");
    await first.m.close();

    const second = await start(clock);
    const m = second.m;
    for (const id of [b, c, d]) expect(m.job(id).state).toBe("DEPEND");
    const q = await second.host.query(".dependency-after");
    expect(q.dependencies).toEqual([
      { id: formatJobId(a), depid: formatJobId(b), type: "after-finish", description: `after-finish=${formatJobId(a)}` },
    ]);
    m.cancel(a);
    await until(clock, () => m.job(b).state === "INACTIVE");
    expect(m.job(b).result).toBe("COMPLETED");
    await clock.advance(3000_000);
    expect(m.job(c).state).toBe("DEPEND");
    await clock.advance(600_000);
    await until(clock, () => m.job(c).state === "INACTIVE");
    expect(m.job(d).state).toBe("DEPEND");
    m.cancel(e);
    await until(clock, () => m.job(d).state === "INACTIVE");
    expect(m.job(d).result).toBe("COMPLETED");
    const hist = (await second.host.callService("history", "get", {}, { userid: m.owner, owner: true })) as { jobs: string[] };
    expect(hist.jobs).toEqual([d, e, c, b, a].map((id) => formatJobId(id)));
  });
});

describe(".update-queue across a restart", () => {
  it("keeps a disabled queue disabled", async () => {
    const clock = new SimulatedClock();
    const config = { queues: { a: {}, b: {} } };
    const first = await start(clock, config);
    const owner = { userid: first.m.owner, owner: true };
    await first.host.callService("update-queue", "disable", { name: "a", reason: "down" }, owner);
    await first.m.close();
    const second = await start(clock, config);
    await expect(second.m.submit(testJobspec({ system: { queue: "a" } }))).rejects.toThrow(
      "job submission to a is disabled: down",
    );
    await submit(second.m, clock, { system: { queue: "b" } });
  });
});

describe(".dependency-singleton across a restart", () => {
  it("a waiter replayed before a later-submitted job of its name is not released early", async () => {
    const clock = new SimulatedClock();
    const first = await start(clock);
    const a = await submit(first.m, clock, { name: "x", runDuration: 10_000 });
    const w = await submit(first.m, clock, { name: "x", runDuration: 10_000, dependencies: [{ scheme: "singleton" }] });
    // Not a singleton itself: runs at once, and blocks the waiter as a named job.
    const later = await submit(first.m, clock, { name: "x", runDuration: 10_000 });
    await until(clock, () => first.m.job(later).state === "RUN");
    first.m.cancel(a);
    await until(clock, () => first.m.job(a).state === "INACTIVE");
    expect(first.m.job(w).state).toBe("DEPEND");
    await first.m.close();

    const second = await start(clock);
    const m = second.m;
    await clock.advance(1000);
    expect(m.job(w).state).toBe("DEPEND");
    expect(await second.host.query(".dependency-singleton")).toMatchObject({
      [`${m.owner}:x`]: { count: 2, singletons: [formatJobId(w)] },
    });
    m.cancel(later);
    await until(clock, () => m.job(w).state === "RUN");
  });

  it("the same holds when the plugin is reloaded at runtime (replay in id order)", async () => {
    const clock = new SimulatedClock();
    const { m, host } = await start(clock);
    const a = await submit(m, clock, { name: "z", runDuration: 10_000 });
    const w = await submit(m, clock, { name: "z", runDuration: 10_000, dependencies: [{ scheme: "singleton" }] });
    const later = await submit(m, clock, { name: "z", runDuration: 10_000 });
    m.cancel(a);
    await until(clock, () => m.job(a).state === "INACTIVE");
    host.remove(".dependency-singleton");
    await host.load(".dependency-singleton");
    await clock.advance(1000);
    expect(m.job(w).state).toBe("DEPEND");
    m.cancel(later);
    await until(clock, () => m.job(w).state === "RUN");
  });

  it("is not released early when another plugin's async job.new stalls the restart replay", async () => {
    const clock = new SimulatedClock();
    const stall = fileURLToPath(new URL("../fixtures/plugins/async-job-new.ts", import.meta.url));
    const config = { "job-manager": { plugins: [{ load: stall, conf: { delayMs: 5 } }] } };
    const first = await start(clock);
    const a = await submit(first.m, clock, { name: "s", runDuration: 10_000 });
    const w = await submit(first.m, clock, { name: "s", runDuration: 10_000, dependencies: [{ scheme: "singleton" }] });
    const later = await submit(first.m, clock, { name: "s", runDuration: 10_000 });
    await until(clock, () => first.m.job(later).state === "RUN");
    first.m.cancel(a);
    await until(clock, () => first.m.job(a).state === "INACTIVE");
    await first.m.close();

    // The stalling plugin's timers fire while the replay is between w and `later`.
    let second: { m: JobManager; host: JobtapHost } | undefined;
    const starting = start(clock, config).then((s) => (second = s));
    while (second === undefined) await clock.advance(1);
    await starting;
    const m = second.m;
    await clock.advance(1000);
    expect(m.job(w).state).toBe("DEPEND");
    m.cancel(later);
    await until(clock, () => m.job(w).state === "RUN");
  });

  it("a waiter held across a restart by an earlier job is released when that job ends", async () => {
    const clock = new SimulatedClock();
    const first = await start(clock);
    const a = await submit(first.m, clock, { name: "y", runDuration: 10_000 });
    const w = await submit(first.m, clock, { name: "y", runDuration: 10_000, dependencies: [{ scheme: "singleton" }] });
    await first.m.close();
    const second = await start(clock);
    await clock.advance(1000);
    expect(second.m.job(w).state).toBe("DEPEND");
    second.m.cancel(a);
    await until(clock, () => second.m.job(w).state === "RUN");
  });
});
