import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { BUILTINS } from "../../plugins-builtin/index.js";

const PRIORITY_DEFAULT = BUILTINS.find((b) => b.name === ".priority-default")!;
import { fixture, makeHost } from "./helpers.js";

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "jobtap-loader-"));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

describe("loading", () => {
  it("finds a name on the search path, with or without its extension", async () => {
    writeFileSync(join(dir, "mine.js"), "export default (p) => p.on('job.new', () => undefined);\n");
    const { host } = makeHost();
    host.searchPath = ["/nonexistent", dir];
    expect(await host.load("mine")).toEqual({ name: "mine.js", path: join(dir, "mine.js"), builtin: false });
    await expect(host.load("mine.js")).rejects.toMatchObject({
      code: "PLUGIN_ALREADY_LOADED",
      message: "mine.js already loaded",
    });
    await expect(host.load("nope")).rejects.toMatchObject({
      code: "PLUGIN_NOT_FOUND",
      message: "nope: No such plugin found",
    });
    await expect(host.load(".nope")).rejects.toMatchObject({ code: "PLUGIN_NOT_FOUND" });
  });

  it("rejects a module of the wrong shape", async () => {
    const { host } = makeHost();
    await expect(host.load(fixture("bad-shape.js"))).rejects.toMatchObject({
      code: "PLUGIN_BAD_SHAPE",
    });
    expect(host.list()).toEqual([]);
  });

  it("transpiles a .ts plugin on load and reports syntax errors with line:column", async () => {
    const { host, mgr } = makeHost();
    await host.load(fixture("ts-value-import.ts"));
    const r = host.callJob("job.state.priority", mgr.lookup(mgr.add("PRIORITY", 1))!);
    expect(r).toMatchObject({ out: { priority: -2 } });
    const bad = join(dir, "broken.ts");
    writeFileSync(bad, "// broken\nexport default (p => { p.on('job.new', ( => 1) };\n");
    await expect(host.load(bad)).rejects.toMatchObject({
      code: "PLUGIN_LOAD",
      message: expect.stringMatching(new RegExp(`^${bad}:2:\\d+: `)),
    });
  });

  it("loads builtins first, hides them from list and spares them from * and all", async () => {
    const { host } = makeHost({ builtins: [PRIORITY_DEFAULT] });
    await host.loadBuiltins();
    await host.load(fixture("order-a.js"));
    await host.load(fixture("order-b.js"));
    expect(host.list().map((p) => p.name)).toEqual(["order-a.js", "order-b.js"]);
    expect(host.list({ all: true }).map((p) => p.name)).toEqual([
      ".priority-default",
      "order-a.js",
      "order-b.js",
    ]);
    expect(host.remove("all")).toEqual(["order-a.js", "order-b.js"]);
    expect(host.remove("all")).toEqual([]);
    await host.load(fixture("order-a.js"));
    expect(host.remove("*")).toEqual(["order-a.js"]);
    expect(() => host.remove("*")).toThrow(/Failed to find plugin to remove/);
    expect(host.remove(".*")).toEqual([".priority-default"]);
    expect(host.list({ all: true })).toEqual([]);
  });

  it("answers query with name, path and the plugin's own data", async () => {
    const { host } = makeHost({ builtins: [PRIORITY_DEFAULT] });
    await host.loadBuiltins();
    await host.load(fixture("conf-check.ts"), { seen: [] });
    expect(await host.query(".priority-default")).toEqual({ name: ".priority-default", path: "builtin" });
    expect(await host.query("conf-check.ts")).toEqual({
      name: "conf-check.ts",
      path: fixture("conf-check.ts"),
      seen: 1,
    });
    await expect(host.query("x")).rejects.toMatchObject({ message: "x: plugin not found" });
  });

  it("replays active jobs to a plugin loaded at runtime, in its sort order", async () => {
    const { host, mgr } = makeHost();
    const dep = { version: 1, resources: [], tasks: [],
      attributes: { system: { dependencies: [{ scheme: "x", value: 7 }] } } };
    mgr.add("SCHED", 5);
    mgr.add("DEPEND", 2, { jobspec: dep });
    mgr.add("RUN", 3);
    mgr.add("PRIORITY", 4);
    mgr.add("INACTIVE", 1);
    const log: string[] = [];
    await host.load(fixture("sort-order.ts"), { order: "state", log });
    expect(log).toEqual([
      "create 2", "new 2", "dependency 2 x", "depend 2",
      "create 4", "new 4", "create 5", "new 5", "create 3", "new 3",
    ]);
    expect(mgr.calls).toEqual(["dependency-add 2 fixture=7", "reprioritize-all"]);

    host.remove("sort-order.ts");
    log.length = 0;
    await host.load(fixture("sort-order.ts"), { order: "-state", log });
    expect(log.filter((l) => l.startsWith("create"))).toEqual([
      "create 3", "create 5", "create 4", "create 2",
    ]);
  });

  it("fails the load when conf.update rejects, and leaves the plugin out", async () => {
    const { host } = makeHost();
    host.config = { fixture: { limit: "ten" } };
    await expect(host.load(fixture("conf-check.ts"))).rejects.toMatchObject({
      code: "CONFIG",
      message: "limit must be a number",
    });
    expect(host.list()).toEqual([]);
  });

  it("keeps the old config when a reload is rejected, rolling back earlier plugins", async () => {
    const { host } = makeHost();
    const seen: unknown[] = [];
    host.config = { fixture: { limit: 1 } };
    await host.load(fixture("conf-check.ts"), { seen });
    writeFileSync(
      join(dir, "picky.js"),
      "export default (p) => p.on('conf.update', ({ conf }) =>\n" +
        "  conf.fixture.limit === 3 ? { reject: '' } : undefined);\n",
    );
    await host.load(join(dir, "picky.js"));
    await host.reloadConfig({ fixture: { limit: 2 } });
    await expect(host.reloadConfig({ fixture: { limit: 3 } })).rejects.toMatchObject({
      code: "CONFIG",
      message: "config rejected by picky.js jobtap plugin",
    });
    expect(host.config).toEqual({ fixture: { limit: 2 } });
    // conf-check accepted 3, then got the old config (2) back.
    expect(seen).toEqual([1, 2, 3, 2]);
    // A malformed plugin section fails before any plugin is asked.
    await expect(
      host.reloadConfig({ fixture: { limit: 4 }, "job-manager": { plugins: "x" } }),
    ).rejects.toMatchObject({ code: "CONFIG", message: "[job-manager.plugins]: config must be an array" });
    expect(seen).toEqual([1, 2, 3, 2]);
  });

  it("logs, never throws, handler errors during the runtime-load replay", async () => {
    const { host, mgr, logged } = makeHost();
    mgr.add("RUN", 1);
    await host.load(fixture("throws.js"));
    expect(host.list().map((p) => p.name)).toEqual(["throws.js"]);
    expect(logged.filter((l) => l.includes("boom")).length).toBe(2); // job.create, job.new
  });

  it("lists, queries and removes a plugin by the name its module exports", async () => {
    const { host } = makeHost();
    const mod = (name: string) => `export default { name: ${JSON.stringify(name)}, setup: (p) => p.on("plugin.query", () => ({ mine: true })) };\n`;
    writeFileSync(join(dir, "fair-1.js"), mod("fair"));
    writeFileSync(join(dir, "other.js"), mod("fair"));
    writeFileSync(join(dir, "dotted.js"), mod(".sneaky"));
    expect(await host.load(join(dir, "fair-1.js"))).toEqual({ name: "fair", path: join(dir, "fair-1.js"), builtin: false });
    expect(host.list().map((p) => p.name)).toEqual(["fair"]);
    expect(await host.query("fair")).toEqual({ name: "fair", path: join(dir, "fair-1.js"), mine: true });
    await expect(host.load(join(dir, "other.js"))).rejects.toMatchObject({ code: "PLUGIN_ALREADY_LOADED", message: "fair already loaded" });
    await expect(host.load(join(dir, "dotted.js"))).rejects.toMatchObject({ code: "PLUGIN_BAD_SHAPE", message: expect.stringContaining('exported name ".sneaky"') });
    // The file's name is no longer the plugin's: a glob on it matches nothing.
    expect(() => host.remove("fair-*")).toThrow(expect.objectContaining({ code: "PLUGIN_NOT_FOUND" }));
    expect(host.remove("fa*")).toEqual(["fair"]);
    expect(host.list()).toEqual([]);
  });

  it("derives the service namespace from the plugin's own name or its basename", async () => {
    const { internalName } = await import("../../src/plugins/loader.js");
    expect(internalName("foo.bar.js", undefined)).toBe("foo");
    expect(internalName("fairshare.ts", "fair")).toBe("fair");
    expect(internalName("fairshare.ts", "fair.share")).toBe("fairshare");
  });
});

describe("jobtap/plugin in plugins outside the package", () => {
  it("points the specifier at the host's own API module", async () => {
    const { rewriteApiImports } = await import("../../src/plugins/loader.js");
    const code = `import { PRIORITY_UNAVAILABLE } from "jobtap/plugin";\nimport x from 'jobtap/plugin';\nimport y from "jobtap/plugins";`;
    expect(rewriteApiImports(code, "file:///api.js").split("\n")).toEqual([
      'import { PRIORITY_UNAVAILABLE } from "file:///api.js";',
      'import x from "file:///api.js";',
      'import y from "jobtap/plugins";',
    ]);
  });

  it("loads a JS plugin from a directory outside the package that imports jobtap/plugin", async () => {
    const { host, mgr } = makeHost();
    writeFileSync(
      join(dir, "site.js"),
      'import { PRIORITY_UNAVAILABLE } from "jobtap/plugin";\n' +
        'export default (p) => p.on("job.state.priority", () => ({ priority: PRIORITY_UNAVAILABLE }));\n',
    );
    await host.load(join(dir, "site.js"));
    const r = host.callJob("job.state.priority", mgr.lookup(mgr.add("PRIORITY", 1))!);
    expect(r).toMatchObject({ out: { priority: -2 } });
  });
});
