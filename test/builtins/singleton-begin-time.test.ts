import { afterEach, describe, expect, it } from "vitest";
import type { JobId } from "../../src/manager/base/ids.js";
import { formatJobId } from "../../src/manager/base/ids.js";
import { host, rejected, until, type TestHost } from "./helpers.js";

let h: TestHost;
afterEach(async () => {
  await h?.close();
});

const singleton = [{ scheme: "singleton" }];
const startOf = (id: JobId) => h.eventlog(id).find((e) => e.name === "start")?.timestamp;
const endOf = (id: JobId) => h.eventlog(id).find((e) => e.name === "finish")?.timestamp;

describe(".dependency-singleton", () => {
  it("a singleton chain runs strictly one after another, in submit order", async () => {
    h = await host();
    const ids: JobId[] = [];
    for (let i = 0; i < 5; i++) ids.push(await h.submit({ name: "test", runDuration: 3, dependencies: singleton }));
    expect(ids.map((id) => h.job(id).state)).toEqual(["RUN", "DEPEND", "DEPEND", "DEPEND", "DEPEND"]);
    for (const id of ids) expect((await h.runToCompletion(id)).result).toBe("COMPLETED");
    for (let i = 1; i < ids.length; i++) expect(startOf(ids[i]!)!).toBeGreaterThanOrEqual(endOf(ids[i - 1]!)!);
  });

  it("a held job of the same name blocks; other users and names are independent", async () => {
    h = await host();
    const held = await h.submit({ name: "x", urgency: 0 });
    const s = await h.submit({ name: "x", dependencies: singleton });
    const other = await h.submit({ name: "x", userid: 4242, dependencies: singleton });
    const otherName = await h.submit({ name: "y", dependencies: singleton });
    await h.advance(100);
    expect(h.job(s).state).toBe("DEPEND");
    expect(h.job(other).state).not.toBe("DEPEND");
    expect(h.job(otherName).state).not.toBe("DEPEND");
    const q = await h.plugins.query(".dependency-singleton");
    expect(q[`${h.manager.owner}:x`]).toEqual({ count: 2, singletons: [formatJobId(s)] });
    h.manager.cancel(held);
    await until(h, () => h.job(s).state === "INACTIVE");
    expect(h.job(s).result).toBe("COMPLETED");
  });

  it("requires a job name", async () => {
    h = await host();
    expect(await rejected(h, { dependencies: singleton })).toBe("singleton jobs require a job name");
  });
});

describe(".begin-time", () => {
  it("holds the job in DEPEND until the wall-clock time on the manager's clock", async () => {
    h = await host();
    const at = h.clock.now() / 1000 + 3600;
    const id = await h.submit({ dependencies: [{ scheme: "begin-time", value: String(at) }] });
    expect(h.job(id).dependencies).toEqual([`begin-time=${at.toFixed(3)}`]);
    await h.advance(3599_000);
    expect(h.job(id).state).toBe("DEPEND");
    await h.advance(1000);
    expect(h.job(id).state).not.toBe("DEPEND");
    expect((await h.runToCompletion(id)).result).toBe("COMPLETED");
  });

  it("a time in the past releases at once; cancelling clears the timer", async () => {
    h = await host();
    const past = await h.submit({ dependencies: [{ scheme: "begin-time", value: 1000 }] });
    await h.advance(10);
    expect(h.events(past)).toContain("dependency-remove");
    const later = await h.submit({ dependencies: [{ scheme: "begin-time", value: h.clock.now() / 1000 + 86400 }] });
    h.manager.cancel(later);
    await until(h, () => h.job(later).state === "INACTIVE");
    await h.advance(2 * 86400_000);
    // Had the timer survived the job, its release would have failed and been logged.
    expect(h.log.filter((l) => l.includes("begin-time"))).toEqual([]);
  });

  it("invalid values are rejected naming the value", async () => {
    h = await host();
    for (const v of ["-1", "12abc", "NaN", "inf", "", "1e999"]) {
      expect(await rejected(h, { dependencies: [{ scheme: "begin-time", value: v }] })).toBe(`Invalid begin-time=${v}`);
    }
    expect(await rejected(h, { dependencies: [{ scheme: "begin-time" }] })).toBe("begin-time dependency requires a value");
  });
});
