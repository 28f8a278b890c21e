/**
 * Isolated plugins (docs/plugins.md "Isolated plugins"): a plugin in a worker thread whose
 * misbehaviour — an endless loop, process.exit, a heap blow-up, a throw, a promise that
 * never settles — is contained: the manager and the other jobs keep going, the worker is
 * restarted by the restart policy, and past it the plugin is unloaded and listed as failed.
 */
import { describe, expect, it } from "vitest";
import { applyDirectives, readPluginConfig } from "../../src/plugins/config.js";
import { createMetrics } from "../../src/server/http/metrics.js";
import { createTestHost } from "../../src/testhost.js";
import { complete, fixture, isolatedHost, logged, realUntil, startSubmit, submit, until } from "./isolate-helpers.js";

describe("isolated plugin containment", () => {
  it("runs an isolated plugin's handlers in a worker: OUT merged as in process", async () => {
    const h = await isolatedHost("iso-misbehave.js");
    const id = await submit(h);
    await complete(h, id);
    expect(h.plugins.list()).toEqual([
      expect.objectContaining({ name: "iso-misbehave.js", isolated: "running" }),
    ]);
    // job.new annotations are kept on the job (not published): the worker's OUT arrived.
    expect(h.job(id).annotations).toEqual({ misbehave: "ok" });
  });

  it.each([
    ["loop", /job\.new did not settle within 5000 ms; the worker was terminated/],
    ["hang", /job\.new did not settle within 5000 ms; the worker was terminated/],
    ["exit", /isolated worker died: the worker exited with code 1/],
    ["heap", /isolated worker died: its heap passed the 64 MB limit/],
  ])("contains a handler that does %s: logged, restarted, other jobs complete", async (how, why) => {
    // The heap blow-up must meet the heap cap, not the deadline, on a loaded machine too.
    const h = await isolatedHost("iso-misbehave.js", how === "heap" ? { deadlineMs: 600_000 } : {});
    const before = await submit(h);
    const accepted = startSubmit(h, how);
    if (how === "loop" || how === "hang") {
      // The handler is running in the worker (it has stored that it saw the job, so the
      // restarted worker's replay of the job is answered); only its deadline ends it.
      await logged(h, new RegExp(`misbehaving: ${how}`));
      await realUntil(() => h.plugins.isolatedInFlight() > 0);
      await h.advance(5001);
    }
    const bad = await accepted();
    expect(await logged(h, why)).toMatch(/plugin iso-misbehave\.js: /);
    await logged(h, /plugin iso-misbehave\.js: restarting its worker \(1 of 3 restarts/);
    // The job whose handler failed goes on (a failing job.new handler is logged), as do the others.
    await complete(h, bad);
    await complete(h, before);
    await until(h, () => h.plugins.list()[0]?.isolated === "running");
    const after = await submit(h);
    await complete(h, after);
    expect(h.job(after).annotations).toEqual({ misbehave: "ok" });
  });

  it("awaits a handler's thenable that is not a Promise, as in process", async () => {
    const h = await isolatedHost("iso-misbehave.js");
    const id = await submit(h, "thenable");
    await complete(h, id);
    expect(h.job(id).annotations).toEqual({ misbehave: "thenable" });
  });

  it("labels a handler that throws, as in process; the worker stays", async () => {
    const h = await isolatedHost("iso-misbehave.js");
    const bad = await submit(h, "throw");
    await complete(h, bad);
    expect(h.log.join("\n")).toMatch(/plugin iso-misbehave\.js: job\.new: job \S+: misbehave: thrown on purpose/);
    expect(h.log.join("\n")).not.toMatch(/isolated worker died/);
  });

  it("fails the load of a module that throws at import, naming the plugin; the manager goes on", async () => {
    const h = await isolatedHost("iso-misbehave.js");
    await expect(h.plugins.load(fixture("iso-import-throws.js"), {}, { isolate: true })).rejects.toThrow(
      /iso-import-throws\.js: iso-import-throws: broken at import/,
    );
    await expect(h.plugins.load(fixture("bad-shape.js"), {}, { isolate: true })).rejects.toThrow(/bad-shape\.js: default export must be/);
    await expect(h.plugins.load(fixture("no-such.js"), {}, { isolate: true })).rejects.toThrow(/No such plugin found/);
    await expect(h.plugins.load("alloc-bypass", {}, { isolate: true })).rejects.toThrow(/run in the manager's thread/);
    expect(h.plugins.list().map((p) => p.name)).toEqual(["iso-misbehave.js"]);
    await complete(h, await submit(h));
  });
});

describe("isolated plugin restart policy", () => {
  it("restarts with persistent state and replays job.new for active jobs", async () => {
    const h = await isolatedHost("iso-stateful.js");
    const long = await submit(h, "long", 60);
    await submit(h, "exit-once", 60);
    await logged(h, /plugin iso-stateful\.js: isolated worker died: the worker exited with code 3/);
    await until(h, () => h.plugins.list()[0]?.isolated === "running" && h.plugins.isolatedInFlight() === 0);
    // Restarted: `starts` comes from persistent state; job.new was replayed for both jobs.
    expect(await h.plugins.query("iso-stateful.js")).toEqual({ name: "iso-stateful.js", path: fixture("iso-stateful.js"), starts: 2, seen: 2 });
    expect(h.job(long).state).toBe("RUN");
    // /metrics counts the restart (a real scrape of the daemon's registry).
    const metrics = createMetrics(h.manager, () => h.plugins);
    expect(await metrics.text()).toMatch(/^jobtap_plugin_restarts_total\{plugin="iso-stateful\.js"\} 1$/m);
    metrics.stop();
    await complete(h, long, 120_000);
  });

  it("unloads the plugin past its restart policy: one log line, listed as failed", async () => {
    const h = await isolatedHost("iso-stateful.js", { isolate: { restart: { max: 2, windowMs: 60_000 } } });
    const doomed = await submit(h, "exit", 60);
    // Each restart replays job.new for the job that kills it: three deaths, then unloaded.
    const line = await logged(h, /plugin iso-stateful\.js: unloaded/);
    expect(line).toBe(
      "error: plugin iso-stateful.js: unloaded: isolated worker died 3 times within 60 s (restart max 2); last: the worker exited with code 3",
    );
    expect(h.log.filter((l) => /unloaded/.test(l))).toHaveLength(1);
    expect(h.plugins.list()).toEqual([
      { name: "iso-stateful.js", path: fixture("iso-stateful.js"), builtin: false, isolated: "failed", reason: expect.stringMatching(/died 3 times/) },
    ]);
    // The manager and the job go on; removing the failed plugin clears the entry.
    await complete(h, doomed, 120_000);
    expect(h.plugins.remove("iso-stateful.js")).toEqual(["iso-stateful.js"]);
    expect(h.plugins.list()).toEqual([]);
  });
});


describe("isolate in [job-manager.plugins]", () => {
  it("reads isolate, heap-mb and restart, and names the TOML path of a bad one", async () => {
    const at = (entry: Record<string, unknown>) => () => readPluginConfig({ "job-manager": { plugins: [entry] } });
    expect(at({ load: "x.js", isolate: true, "heap-mb": 64, restart: { max: 1, window: "10s" } })().directives[0]).toEqual({
      index: 0,
      load: "x.js",
      isolate: { heapMb: 64, restart: { max: 1, windowMs: 10_000 } },
    });
    expect(at({ load: "x.js", isolate: true, restart: { probation: "2s" } })().directives[0]).toEqual({
      index: 0,
      load: "x.js",
      isolate: { restart: { max: 3, windowMs: 60_000, probationMs: 2000 } },
    });
    expect(at({ load: "x.js", isolate: true, restart: { probation: 0 } })).toThrow("[job-manager.plugins][0].restart.probation: must be a positive duration such as \"1s\"");
    expect(at({ load: "x.js", isolate: "yes" })).toThrow("[job-manager.plugins][0].isolate: must be true or false");
    expect(at({ load: "x.js", "heap-mb": 64 })).toThrow("[job-manager.plugins][0].heap-mb: only valid with isolate = true");
    expect(at({ load: "x.js", isolate: true, "heap-mb": 1 })).toThrow("[job-manager.plugins][0].heap-mb: must be an integer number of MiB >= 16");
    expect(at({ load: "x.js", isolate: true, restart: { max: -1 } })).toThrow("[job-manager.plugins][0].restart.max: must be an integer >= 0");
    expect(at({ load: "x.js", isolate: true, restart: { tries: 1 } })).toThrow("[job-manager.plugins][0].restart.tries: unknown key (expected max, window, probation)");
    // Applied at start: the plugin runs isolated.
    const h = await createTestHost({});
    try {
      await applyDirectives(h.plugins, at({ load: fixture("iso-behaviour.js"), isolate: true })().directives);
      expect(h.plugins.list()).toEqual([expect.objectContaining({ name: "behave", isolated: "running" })]);
    } finally {
      await h.close();
    }
  });
});

describe("jobs waiting on a dead isolated plugin", () => {
  it("finishes its prologs with status 1; unloaded, its dependencies raise", async () => {
    const h = await isolatedHost("iso-waits.js", { isolate: { restart: { max: 0, windowMs: 60_000 } } });
    const waiting = await submit(h, "waiting", 0, { dependencies: [{ scheme: "wait", value: "x" }] });
    const running = await submit(h);
    await until(h, () => h.events(running).includes("prolog-start") && h.job(waiting).state === "DEPEND");
    await expect(h.plugins.callService("iso-waits", "die", {}, { userid: 0, owner: true })).rejects.toThrow(/isolated worker died/);
    await complete(h, running);
    await complete(h, waiting);
    expect(h.eventlog(running)).toEqual(expect.arrayContaining([
      expect.objectContaining({ name: "prolog-finish", context: expect.objectContaining({ description: "iso-prolog", status: 1 }) }),
    ]));
    expect(h.log.join("\n")).toMatch(/plugin iso-waits\.js: prolog "iso-prolog" of job \S+ finished with status 1: the isolated worker died/);
    expect(h.eventlog(waiting)).toEqual(expect.arrayContaining([
      expect.objectContaining({
        name: "exception",
        context: expect.objectContaining({ type: "dependency", severity: 0, note: 'plugin iso-waits was unloaded: dependency "iso-wait" can never be resolved; isolated worker died 1 times within 60 s (restart max 0); last: the worker exited with code 1' }),
      }),
    ]));
  });
});
