import { describe, expect, it } from "vitest";
import { closeAfterEach } from "../closing.js";
import { parseToml } from "../../src/plugins/config.js";
import { host, type TestHost } from "./helpers.js";

let h: TestHost | undefined;
closeAfterEach(() => h);

/** Advances simulated time and lets real processes (the prolog) run until `cond` holds. */
async function settle(t: TestHost, cond: () => boolean, realMs = 10_000): Promise<void> {
  const end = Date.now() + realMs;
  while (!cond() && Date.now() < end) {
    await t.advance(10);
    await new Promise((r) => setTimeout(r, 5));
  }
  if (!cond()) throw new Error("condition not reached");
}

const TOML = `
[job-manager]
plugins = [
  { load = "perilog" },
  { load = "alloc-bypass", conf = { note = "from toml" } },
]
[job-manager.prolog]
command = ["/bin/sh", "-c", "true"]
`;

describe("shipped plugins (alloc-bypass, perilog) load by plain name", () => {
  it("loads from [job-manager] plugins, lists them under plain names, and they work", async () => {
    const t = (h = await host(parseToml(TOML, "shipped.toml")));
    expect(t.plugins.list()).toEqual([
      { name: "perilog", path: "shipped", builtin: false },
      { name: "alloc-bypass", path: "shipped", builtin: false },
    ]);
    expect(t.plugins.find("alloc-bypass")?.conf).toEqual({ note: "from toml" });
    const id = await t.submit({ runDuration: 1 });
    await settle(t, () => t.job(id).state === "INACTIVE");
    expect(t.events(id)).toContain("prolog-finish");
    expect(t.job(id).result).toBe("COMPLETED");
  });

  it("loads at runtime by name, refuses a second load, and is removed by * and all", async () => {
    const t = (h = await host());
    await t.plugins.load("alloc-bypass");
    await expect(t.plugins.load("alloc-bypass")).rejects.toMatchObject({ code: "PLUGIN_ALREADY_LOADED" });
    await t.plugins.load("perilog");
    expect(t.plugins.list().map((p) => p.name)).toEqual(["alloc-bypass", "perilog"]);
    expect(t.plugins.remove("*")).toEqual(["alloc-bypass", "perilog"]);
    expect(t.plugins.list({ all: true }).map((p) => p.name)).toContain(".priority-default");
    await t.plugins.load("perilog");
    expect(t.plugins.remove("all")).toEqual(["perilog"]);
    expect(t.plugins.list()).toEqual([]);
  });

  it("a path-looking name does not fall back to the shipped table", async () => {
    const t = (h = await host());
    await expect(t.plugins.load("./perilog")).rejects.toMatchObject({ code: "PLUGIN_NOT_FOUND" });
  });
});
