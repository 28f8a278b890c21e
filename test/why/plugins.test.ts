/**
 * `job.explain` (issue 36): the builtins that hold jobs explain themselves, a site plugin's
 * reasons come back in load order with its name, and a handler that throws or hangs (in
 * process or isolated) leaves a labelled error line while the rest of the answer comes back.
 */
import { afterEach, describe, expect, it } from "vitest";
import { fileURLToPath } from "node:url";
import { createTestHost, type TestHost } from "../../src/testhost.js";
import { formatJobId, type JobId } from "../../src/manager/base/ids.js";
import { localTime } from "../../src/manager/why-state.js";

const fixture = (name: string) => fileURLToPath(new URL(`../fixtures/plugins/${name}`, import.meta.url));
const OWNER = { userid: 0, owner: true };
let host: TestHost | undefined;
afterEach(async () => {
  await host?.close();
  host = undefined;
});
const start = async (opts: Parameters<typeof createTestHost>[0] = {}) => (host = await createTestHost(opts));
const reasons = async (h: TestHost, id: JobId) => (await h.manager.why(id)).reasons;

describe("job.explain: the builtins", () => {
  it("dependency-after says what it waits for and the antecedent's state, replacing the generic line", async () => {
    const h = await start();
    const ante = await h.submit({ runDuration: 100 });
    await h.advance(100);
    const dep = await h.submit({ dependencies: [{ scheme: "afterok", value: formatJobId(ante) }] });
    const rs = await reasons(h, dep);
    expect(rs).toHaveLength(1);
    expect(rs[0]).toMatchObject({ layer: "state", source: ".dependency-after", code: "dependency" });
    expect(rs[0]!.text).toBe(`waits for job ${formatJobId(ante)} to complete successfully (after-success); it is RUN`);
    expect(rs[0]!.figures).toEqual({
      dependency: `after-success=${formatJobId(ante)}`,
      type: "after-success",
      antecedent: formatJobId(ante),
      antecedent_state: "RUN",
    });
  });

  it("begin-time gives the local time and how long is left", async () => {
    const h = await start();
    const at = Math.floor(h.clock.now() / 1000) + 3600;
    const id = await h.submit({ dependencies: [{ scheme: "begin-time", value: at }] });
    const rs = await reasons(h, id);
    expect(rs).toHaveLength(1);
    expect(rs[0]).toMatchObject({ source: ".begin-time", code: "begin-time", figures: { begin: at } });
    expect(rs[0]!.text).toBe(`begin time not reached: ${localTime(at)} (in 1h)`);
    expect(rs[0]!.figures.remaining).toBeGreaterThan(3500);
  });

  it("dependency-singleton names what blocks it", async () => {
    const h = await start();
    await h.submit({ runDuration: 100, name: "solo" });
    const id = await h.submit({ name: "solo", dependencies: [{ scheme: "singleton" }] });
    const rs = await reasons(h, id);
    expect(rs).toHaveLength(1);
    expect(rs[0]).toMatchObject({ source: ".dependency-singleton", code: "singleton", figures: { name: "solo", active: 1 } });
  });

  it("update-queue: a stopped queue since when and why, a disabled one too", async () => {
    const h = await start({ config: { queues: { batch: {} }, policy: { jobspec: { defaults: { system: { queue: "batch" } } } } } });
    await h.advance(60_000);
    const t = h.clock.now() / 1000;
    await h.plugins.callService("update-queue", "stop", { name: "batch", reason: "maintenance" }, OWNER);
    const id = await h.submit();
    await h.plugins.callService("update-queue", "disable", { name: "batch", reason: "drain" }, OWNER);
    await h.advance(100);
    const rs = await reasons(h, id);
    expect(rs.map((r) => [r.source, r.code])).toEqual([
      [".update-queue", "queue-stopped"],
      [".update-queue", "queue-disabled"],
    ]);
    expect(rs[0]!.text).toBe(`queue batch is stopped since ${localTime(t)}: maintenance`);
    expect(rs[0]!.figures).toEqual({ queue: "batch", since: t, reason: "maintenance" });
    expect(rs[1]!.figures).toMatchObject({ queue: "batch", reason: "drain" });
  });
});

describe("job.explain: site plugins and failures", () => {
  it("a site plugin's reason carries its name, after the manager's state reasons", async () => {
    const h = await start({ plugin: fixture("explain-site.js") });
    const id = await h.submit({ urgency: 0 });
    const rs = await reasons(h, id);
    expect(rs.map((r) => r.code)).toEqual(["held", "site-window"]);
    expect(rs[1]).toEqual({ layer: "plugin", source: "explain-site.js", code: "site-window", text: "site window closed for uid 0", figures: { opens: 3600 } });
  });

  it("a handler that throws leaves a labelled line; the next plugin still answers", async () => {
    const h = await start({ plugin: fixture("explain-throws.js") });
    await h.plugins.load(fixture("explain-site.js"));
    const id = await h.submit({ urgency: 0 });
    const rs = await reasons(h, id);
    expect(rs.map((r) => [r.source, r.code])).toEqual([
      ["manager", "held"],
      ["explain-throws.js", "explain-error"],
      ["explain-site.js", "site-window"],
    ]);
    expect(rs[1]!.text).toBe("plugin explain-throws.js could not explain: explainer broke");
  });

  it("a handler that hangs is cut at the plugin deadline", async () => {
    const h = await start({ plugin: fixture("explain-hang.js"), deadlineMs: 1000 });
    const id = await h.submit({ urgency: 0 });
    const pending = h.manager.why(id);
    await h.advance(1000);
    const rs = (await pending).reasons;
    expect(rs.map((r) => r.code)).toEqual(["held", "explain-error"]);
    expect(rs[1]!.text).toMatch(/^plugin explain-hang.js could not explain: .*did not settle within 1000 ms/);
  });

  it("an isolated plugin's throwing handler is labelled the same way", async () => {
    const h = await start();
    await h.plugins.load(fixture("explain-throws.js"), {}, { isolate: true });
    const id = await h.submit({ urgency: 0 });
    const rs = await reasons(h, id);
    expect(rs[1]).toMatchObject({ source: "explain-throws.js", code: "explain-error" });
    expect(rs[1]!.text).toContain("explainer broke");
  });
});
