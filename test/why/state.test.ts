/**
 * `job why` on the real manager with the builtins and a simulated clock (issue 36): each of
 * the manager's own producers, asserting the text and the JSON fields.
 */
import { afterEach, describe, expect, it } from "vitest";
import { createTestHost, type TestHost } from "../../src/testhost.js";
import { formatJobId, parseJobId } from "../../src/manager/base/ids.js";
import { localTime } from "../../src/manager/why-state.js";
import { fileURLToPath } from "node:url";

const fixture = (name: string) => fileURLToPath(new URL(`../fixtures/plugins/${name}`, import.meta.url));
let host: TestHost | undefined;
afterEach(async () => {
  await host?.close();
  host = undefined;
});

const start = async (opts: Parameters<typeof createTestHost>[0] = {}) => (host = await createTestHost(opts));
const first = async (h: TestHost, id: bigint) => (await h.manager.why(id as never)).reasons[0]!;

describe("job why: the state machine", () => {
  it("a held job: urgency 0, by whom and since when (the urgency event)", async () => {
    const h = await start();
    const blocker = await h.submit({ runDuration: 100, cores: 4 });
    const id = await h.submit({ runDuration: 1 });
    await h.advance(5_000);
    h.manager.setUrgency(id, 0, { userid: 0 });
    const t = h.eventlog(id).find((e) => e.name === "urgency")!.timestamp;
    const r = await first(h, id);
    expect(r).toMatchObject({ layer: "state", source: "manager", code: "held" });
    expect(r.figures).toEqual({ urgency: 0, userid: 0, user: "root", since: t });
    expect(r.text).toBe(`held (urgency 0) by root (uid 0) since ${localTime(t)}`);
    expect((await h.manager.why(id)).reasons).toHaveLength(1);
    void blocker;
  });

  it("held at submit: the submit event says when", async () => {
    const h = await start();
    const id = await h.submit({ urgency: 0 });
    const t = h.eventlog(id)[0]!.timestamp;
    expect((await first(h, id)).figures).toMatchObject({ userid: 0, since: t });
  });

  it("an outstanding dependency names the antecedent and its state", async () => {
    const h = await start({ plugin: fixture("dep-plain.js") });
    const ante = await h.submit({ runDuration: 100 });
    await h.advance(1_000);
    const dep = await h.submit({ dependencies: [{ scheme: "plain", value: formatJobId(ante) }] });
    const ex = await h.manager.why(dep);
    expect(ex.state).toBe("DEPEND");
    const r = ex.reasons.find((x) => x.code === "dependency")!;
    expect(r.figures).toMatchObject({ antecedent: formatJobId(ante), antecedent_state: "RUN" });
    expect(r.text).toBe(`dependency plain=${formatJobId(ante)} outstanding: job ${formatJobId(ante)} is RUN`);
    expect(r).toMatchObject({ source: "manager", key: `dependency:plain=${formatJobId(ante)}` });
  });

  it("a begin-time in local time", async () => {
    const h = await start({ plugin: fixture("dep-plain.js") });
    const at = Math.floor(h.clock.now() / 1000) + 3600;
    const id = await h.submit({ dependencies: [{ scheme: "later", value: at }] });
    const r = (await h.manager.why(id)).reasons.find((x) => x.code === "begin-time")!;
    expect(r.figures).toMatchObject({ begin: at });
    expect(r.text).toBe(`begin time not reached: ${localTime(at)}`);
  });

  it("priority unavailable names the plugin that returned it", async () => {
    const h = await start({ plugin: fixture("priority-wait.ts") });
    const id = await h.submit();
    await h.advance(100);
    const r = await first(h, id);
    expect(r).toMatchObject({ code: "priority-unavailable", figures: { plugin: "prioritywait" } });
    expect(r.text).toBe("priority unavailable: plugin prioritywait returned PRIORITY_UNAVAILABLE");
    expect(h.job(id).state).toBe("PRIORITY");
  });

  it("a stopped queue is named", async () => {
    const h = await start();
    h.manager.port.setQueueStarted!("", false);
    const id = await h.submit();
    await h.advance(100);
    const r = (await h.manager.why(id)).reasons.find((x) => x.code === "queue-stopped")!;
    expect(r).toMatchObject({ layer: "state", figures: { queue: "" } });
  });
});

describe("job why: the scheduler", () => {
  it("position in the queue and the request against the pool", async () => {
    const h = await start();
    await h.submit({ runDuration: 100, cores: 3 });
    const a = await h.submit({ runDuration: 1, cores: 2 });
    const b = await h.submit({ runDuration: 1, cores: 2 });
    await h.advance(100);
    const ex = await h.manager.why(b);
    const pos = ex.reasons.find((x) => x.code === "queue-position")!;
    expect(pos).toMatchObject({ layer: "scheduler", source: "scheduler", figures: { ahead: 1 } });
    expect(pos.text).toBe("1 job ahead with higher priority (or the same priority, submitted earlier)");
    const res = ex.reasons.find((x) => x.code === "resources")!;
    expect(res.figures).toMatchObject({ cores: 2, cores_free: 1, cores_total: 4, fits: false, where: "the pool" });
    expect(res.text).toBe("requests 2 of 1 free / 4 cores in the pool: does not fit now");
    expect((await h.manager.why(a)).reasons.find((x) => x.code === "queue-position")!.figures.ahead).toBe(0);
  });

  it("a named slot is measured alone", async () => {
    const h = await start({ slots: [{ count: 2, cores: 2 }] });
    await h.submit({ runDuration: 100, cores: 2, system: { slot: 2 } });
    const id = await h.submit({ runDuration: 1, cores: 1, system: { slot: 2 } });
    await h.advance(100);
    const res = (await h.manager.why(id)).reasons.find((x) => x.code === "resources")!;
    expect(res.figures).toMatchObject({ where: "slot 2", cores_free: 0, cores_total: 2 });
  });

  it("an analyzer plugs in after the resource reasons", async () => {
    const h = await start();
    await h.submit({ runDuration: 100, cores: 4 });
    const id = await h.submit({ runDuration: 1 });
    await h.advance(100);
    h.manager.setSchedAnalyzer(() => [{ layer: "scheduler", source: "policy", code: "requirements", text: "no slot matches", figures: {} }]);
    expect((await h.manager.why(id)).reasons.map((r) => r.code)).toEqual(["queue-position", "resources", "requirements"]);
  });
});

describe("job why: a job that ended", () => {
  it("the fatal exception: type and note", async () => {
    const h = await start();
    const id = await h.submit({ runDuration: 100 });
    await h.advance(100);
    h.manager.raise(id, { type: "test", severity: 0, note: "stop it" });
    await h.runToCompletion(id);
    const ex = await h.manager.why(id);
    expect(ex.state).toBe("INACTIVE");
    expect(ex.reasons[0]).toMatchObject({ layer: "end", code: "exception", text: "FAILED: test exception: stop it" });
    expect(ex.reasons[0]!.figures).toMatchObject({ result: "FAILED", type: "test", note: "stop it" });
  });

  it("the exit code, and a cancelled held job says it was held", async () => {
    const h = await start();
    const id = await h.submit({ runDuration: 1, waitStatus: 3 << 8 });
    await h.runToCompletion(id);
    expect((await first(h, id))).toMatchObject({ code: "ended", text: "FAILED: exit code 3", figures: { exit_code: 3 } });
    const held = await h.submit({ urgency: 0 });
    h.manager.cancel(held);
    await h.runToCompletion(held);
    expect((await h.manager.why(held)).reasons.map((r) => r.code)).toEqual(["exception", "ended-held"]);
  });

  it("an unknown id is UNKNOWN_JOB", async () => {
    const h = await start();
    await expect(h.manager.why(parseJobId("ƒ2"))).rejects.toMatchObject({ code: "UNKNOWN_JOB" });
  });
});
