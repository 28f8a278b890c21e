/** Beyond Flux: re-applying a changed `[job-manager] plugins` list at runtime. */
import { describe, expect, it } from "vitest";
import { BUILTINS } from "../../plugins-builtin/index.js";
import { parseToml, reapplyPlugins } from "../../src/plugins/config.js";
import { jobtapPlugins } from "../../plugins-builtin/index.js";
import { FakeManager } from "./fake-manager.js";
import { fixture } from "./helpers.js";

const builtins = BUILTINS.filter((b) => b.name === ".priority-default");

function config(plugins: string): Record<string, unknown> {
  return parseToml(`[job-manager]\nplugins = [${plugins}]`);
}
const load = (name: string, conf = "{}") => `{ load = ${JSON.stringify(fixture(name))}, conf = ${conf} }`;

describe("reapplyPlugins", () => {
  it("swaps the plugin list, replaying active jobs, and skips an unchanged list", async () => {
    const mgr = new FakeManager();
    const host = await jobtapPlugins({ config: config(load("order-a.js")), builtins })(mgr);
    mgr.add("RUN", 1);
    const next = config(`{ remove = ".priority-default" }, ${load("sort-order.ts")}`);
    expect(await reapplyPlugins(host, next)).toBe(true);
    expect(host.list({ all: true }).map((p) => p.name)).toEqual(["sort-order.ts"]);
    expect(mgr.calls).toContain("reprioritize-all"); // the runtime-load replay ran
    expect(await reapplyPlugins(host, next)).toBe(false);
    // Back to the first list: the builtin returns, first in load order.
    expect(await reapplyPlugins(host, config(load("order-a.js")))).toBe(true);
    expect(host.list({ all: true }).map((p) => p.name)).toEqual([".priority-default", "order-a.js"]);
  });

  it("changes nothing when a load target does not resolve", async () => {
    const host = await jobtapPlugins({ config: config(load("order-a.js")), builtins })(new FakeManager());
    await expect(reapplyPlugins(host, config(`{ load = "/no/such.js" }`))).rejects.toMatchObject({
      code: "CONFIG",
      message: "[job-manager.plugins][0].load: /no/such.js: No such plugin found",
    });
    expect(host.list().map((p) => p.name)).toEqual(["order-a.js"]);
  });

  it("re-applies the previous list when a directive fails", async () => {
    const cfg = { ...config(load("order-a.js")), fixture: { limit: "ten" } };
    const host = await jobtapPlugins({ config: cfg, builtins })(new FakeManager());
    const bad = { ...config(`${load("order-b.js")}, ${load("conf-check.ts")}`), fixture: cfg.fixture };
    await expect(reapplyPlugins(host, bad)).rejects.toMatchObject({
      code: "CONFIG",
      message: "[job-manager.plugins][1].load: limit must be a number",
    });
    expect(host.list({ all: true }).map((p) => p.name)).toEqual([".priority-default", "order-a.js"]);
  });
});
