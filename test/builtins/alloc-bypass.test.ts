import { afterEach, describe, expect, it } from "vitest";
import allocBypass, { checkR } from "../../plugins-builtin/alloc-bypass/index.js";
import { SHIPPED } from "../../plugins-builtin/index.js";
import { host, rejected, type TestHost } from "./helpers.js";

let h: TestHost;
afterEach(async () => {
  await h?.close();
});

const R = { version: 1, execution: { R_lite: [{ rank: "0", children: { core: "0-63" } }], starttime: 0, expiration: 0 } };

describe("alloc-bypass", () => {
  it("is shipped but not loaded by default", async () => {
    h = await host();
    expect(SHIPPED.map((s) => s.name)).toEqual(["alloc-bypass", "alloc-check", "perilog", "submit-hold", "condor-cron", "condor-router", "condor-fetch", "accounting"]);
    expect(h.plugins.list({ all: true }).map((p) => p.name)).not.toContain("alloc-bypass");
  });

  it("runs an owner's job on the given R without the scheduler", async () => {
    h = await host({}, { plugin: allocBypass, name: "alloc-bypass", owner: 0, resources: { cores: 1 } });
    // 64 cores on a 1-core pool: only possible without the scheduler.
    const id = await h.submit({ userid: 0, cores: 64, runDuration: 1, system: { "alloc-bypass": { R } } });
    const info = await h.runToCompletion(id);
    expect(info.result).toBe("COMPLETED");
    const names = h.events(id);
    expect(names).toContain("set-flags");
    const alloc = h.eventlog(id).find((e) => e.name === "alloc");
    expect(alloc?.context).toMatchObject({ bypass: true });
    // The ordinary pool is untouched: a normal 1-core job still runs.
    const normal = await h.submit({ userid: 0, runDuration: 1 });
    expect((await h.runToCompletion(normal)).result).toBe("COMPLETED");
  });

  it("refuses guests and malformed R", async () => {
    h = await host({}, { plugin: allocBypass, name: "alloc-bypass", owner: 0 });
    expect(await rejected(h, { userid: 12, system: { "alloc-bypass": { R } } })).toBe("Guest user cannot use alloc bypass");
    expect(await rejected(h, { userid: 0, system: { "alloc-bypass": { R: "x" } } })).toBe("alloc-bypass: R must be an object");
    expect(checkR({ version: 1 })).toBe("alloc-bypass: R: missing execution object");
  });
});
