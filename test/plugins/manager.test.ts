/** The host against the real job manager (in memory, simulated clock, test executor). */
import { describe, expect, it } from "vitest";
import { closeAfterEach } from "../closing.js";
import { createTestHost, type TestHost } from "jobtap/plugin";
import { ErrorCode } from "../../src/errors.js";
import { formatJobId } from "../../src/manager/base/ids.js";
import { fixture } from "./helpers.js";

let t: TestHost | undefined;
closeAfterEach(() => t);

describe("plugin host with the job manager", () => {
  it("runs a job through .priority-default to completion", async () => {
    t = await createTestHost();
    const id = await t.submit({ urgency: 12 });
    const info = await t.runToCompletion(id);
    expect(info.result).toBe("COMPLETED");
    expect(t.eventlog(id).find((e) => e.name === "priority")?.context).toEqual({ priority: 12 });
    expect(t.plugins.list({ all: true })[0]?.name).toBe(".priority-default");
    expect(t.plugins.list()).toEqual([]); // builtins are hidden
  });

  it("rejects a submission with the plugin's message", async () => {
    t = await createTestHost({ plugin: fixture("reject-validate.ts"), conf: { message: "no GPUs today" } });
    await expect(t.submit()).rejects.toMatchObject({ message: expect.stringContaining("no GPUs today") });
  });

  it("keeps a job in PRIORITY while its priority is unavailable, until reprioritized", async () => {
    t = await createTestHost({ plugin: fixture("priority-wait.ts") });
    const id = await t.submit();
    await t.advance(1000);
    expect(t.job(id).state).toBe("PRIORITY");
    await t.plugins.callService("prioritywait", "release", { id: String(id), priority: 5 }, { userid: 0, owner: true });
    const info = await t.runToCompletion(id);
    expect(info.result).toBe("COMPLETED");
    expect(t.eventlog(id).find((e) => e.name === "priority")?.context).toEqual({ priority: 5 });
  });

  it("labels a service handler's failed context call with the plugin and service once", async () => {
    t = await createTestHost({ plugin: fixture("service-post.ts") });
    const id = await t.submit();
    await t.runToCompletion(id);
    const f = formatJobId(id);
    const call = t.plugins.callService("service-post", "post", { id: String(id) }, { userid: 0, owner: true });
    await expect(call).rejects.toMatchObject({
      code: ErrorCode.JOB_INACTIVE,
      message: `plugin service-post: service post: job ${f}: postEvent: job ${f} is inactive`,
    });
  });

  it("calls plugin.replay-done on a runtime-loaded plugin only, after its job replay", async () => {
    t = await createTestHost();
    const id = await t.submit({ runDuration: 10_000 });
    const log: string[] = [];
    const record = (who: string) => (p: import("jobtap/plugin").PluginContext) => {
      p.on("job.new", async (job) => void log.push(`${who} job.new ${formatJobId(job.id)}`));
      p.on("plugin.replay-done", (args) => void log.push(`${who} replay-done ${args.reason}`));
    };
    await t.plugins.loadDefinition("first", record("first"));
    await t.plugins.loadDefinition("second", record("second"));
    const f = formatJobId(id);
    expect(log).toEqual([
      `first job.new ${f}`, "first replay-done load",
      `second job.new ${f}`, "second replay-done load",
    ]);
  });

  it("delivers events to subscribers and runs aux destructors when the job is inactive", async () => {
    const log: string[] = [];
    t = await createTestHost({ builtins: true });
    await t.plugins.load(fixture("subscriber.ts"), { log });
    await t.plugins.load(fixture("aux-destructor.ts"), { log });
    const id = await t.submit();
    await t.runToCompletion(id);
    const seen = log.filter((l) => l.startsWith("job.event.")).map((l) => l.split(" ")[1]);
    expect(seen).toEqual(t.events(id).filter((n) => n !== "submit"));
    expect(log.at(-1)).toBe(`destroy ${id}`);
  });

  it("holds the job in RUN until its prolog finishes and frees it after the epilog", async () => {
    t = await createTestHost({ plugin: fixture("perilog.ts") });
    const owner = { userid: 0, owner: true };
    const id = await t.submit();
    await t.advance(100);
    expect(t.job(id).state).toBe("RUN");
    expect(t.events(id)).not.toContain("start");
    await t.plugins.callService("perilog", "finish", { id: String(id), which: "prolog" }, owner);
    await t.advance(100);
    expect(t.job(id).state).toBe("CLEANUP");
    expect(t.events(id)).not.toContain("free");
    await t.plugins.callService("perilog", "finish", { id: String(id), which: "epilog" }, owner);
    await t.runToCompletion(id);
    const order = t.events(id).filter((n) => /^(alloc|prolog|start|finish|epilog|free|clean)/.test(n));
    expect(order).toEqual([
      "alloc", "prolog-start", "prolog-finish", "start", "finish",
      "epilog-start", "epilog-finish", "free", "clean",
    ]);
  });

  it("lets other jobs move while one job's async handler is pending, keeping its order", async () => {
    t = await createTestHost({ plugin: fixture("async-user.ts"), conf: { userid: 1001, delayMs: 5000 } });
    const slow = await t.submit({ userid: 1001 });
    const fast = await t.submit({ userid: 1002 });
    await t.advance(1000);
    expect(t.job(fast).state).toBe("INACTIVE");
    expect(t.job(slow).state).toBe("PRIORITY");
    const info = await t.runToCompletion(slow);
    expect(info.result).toBe("COMPLETED");
    expect(t.events(slow).slice(0, 5)).toEqual(["submit", "validate", "depend", "priority", "alloc"]);
  });

  it("rejects a submission whose validate handler misses its deadline", async () => {
    t = await createTestHost({ plugin: fixture("async-hang.js"), deadlineMs: 2000 });
    await expect(t.submit()).rejects.toMatchObject({
      message: expect.stringMatching(/async-hang\.js: job\.validate: job ƒ\S+: handler did not settle within 2000 ms/),
    });
  });

  it("replays active jobs to a plugin loaded at runtime", async () => {
    t = await createTestHost();
    const held = await t.submit({ urgency: 0 });
    const running = await t.submit({ runDuration: "1h" });
    await t.advance(100);
    expect([t.job(held).state, t.job(running).state]).toEqual(["SCHED", "RUN"]);
    const log: string[] = [];
    await t.plugins.load(fixture("sort-order.ts"), { order: "-state", log });
    expect(log).toEqual([`create ${running}`, `new ${running}`, `create ${held}`, `new ${held}`]);
  });
});
