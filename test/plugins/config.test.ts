import { describe, expect, it } from "vitest";
import { applyDirectives, parseToml, readPluginConfig } from "../../src/plugins/config.js";
import { jobtapPlugins } from "../../plugins-builtin/index.js";
import { BUILTINS } from "../../plugins-builtin/index.js";
import { FakeManager } from "./fake-manager.js";
import { fixture, makeHost } from "./helpers.js";

/** The CONFIG message readPluginConfig gives for a TOML text. */
function configError(toml: string): string {
  try {
    readPluginConfig(parseToml(toml, "t.toml"));
  } catch (e) {
    expect(e).toMatchObject({ code: "CONFIG" });
    return (e as Error).message;
  }
  throw new Error("expected a CONFIG error");
}

describe("TOML [job-manager] plugins", () => {
  it("names the file, line and column of a syntax error", () => {
    expect(() => parseToml("[job-manager]\nplugins = [\n  x", "site.toml")).toThrow(
      /^site\.toml:3:3: Unexpected character/,
    );
  });

  it.each([
    ["job-manager = 1", "[job-manager]: must be a table"],
    ["[job-manager]\nplugins = 1", "[job-manager.plugins]: config must be an array"],
    ["[job-manager]\nplugins = [1]", "[job-manager.plugins][0]: must be a table"],
    ['[job-manager]\nplugins = [{load="a"}, {lod="b"}]', "[job-manager.plugins][1].lod: unknown key"],
    ["[job-manager]\nplugins = [{load=1}]", "[job-manager.plugins][0].load: must be a non-empty string"],
    ['[job-manager]\nplugins = [{remove=""}]', "[job-manager.plugins][0].remove: must be a non-empty string"],
    ["[job-manager]\nplugins = [{}]", "[job-manager.plugins][0]: needs a load or remove key"],
    ['[job-manager]\nplugins = [{load="a", conf=3}]', "[job-manager.plugins][0].conf: plugin conf must be a table"],
    ['[job-manager]\nplugins = [{remove="a", conf={}}]', "[job-manager.plugins][0].conf: conf is only valid with load"],
    ['[job-manager]\nplugins = [{load="a", deadline="soon"}]', "[job-manager.plugins][0].deadline: "],
    ["[job-manager]\nplugin-path = 3", "[job-manager].plugin-path: must be a string"],
    ['[job-manager]\nplugin-deadline = true', "[job-manager].plugin-deadline: must be a duration"],
  ])("rejects %j", (toml, message) => {
    expect(configError(toml).startsWith(message)).toBe(true);
  });

  it("reads directives, search path and deadlines", () => {
    const pc = readPluginConfig(
      parseToml(`[job-manager]
plugin-path = "/a:/b"
plugin-deadline = "2s"
plugins = [ { remove = "all" }, { load = "x.js", conf = { k = 1 }, deadline = 0.5 } ]
`),
    );
    expect(pc).toEqual({
      pluginPath: ["/a", "/b"],
      deadlineMs: 2000,
      directives: [
        { index: 0, remove: "all" },
        { index: 1, load: "x.js", conf: { k: 1 }, deadlineMs: 500 },
      ],
    });
  });

  it("names the directive whose remove or load fails", async () => {
    const { host } = makeHost();
    await expect(applyDirectives(host, [{ index: 0, remove: "ghost" }])).rejects.toMatchObject({
      code: "CONFIG",
      message: '[job-manager.plugins][0].remove: failed to find plugin to remove "ghost"',
    });
    await expect(
      applyDirectives(host, [{ index: 0, remove: "all" }, { index: 1, load: "/no/such.js" }]),
    ).rejects.toMatchObject({
      message: "[job-manager.plugins][1].load: /no/such.js: No such plugin found",
    });
    await expect(
      applyDirectives(host, [{ index: 2, load: fixture("bad-shape.js") }]),
    ).rejects.toMatchObject({ message: expect.stringMatching(/^\[job-manager.plugins\]\[2\].load: .*default export/) });
  });

  it("starts a host: builtins, then directives in order, with env and config search path", async () => {
    const mgr = new FakeManager();
    const dir = fixture("");
    const config = parseToml(`[job-manager]
plugin-deadline = "2s"
plugins = [
  { load = "order-a.js", conf = { topic = "job.new" } },
  { remove = "order-a.js", load = "order-b" },
  { load = "async-hang.js", deadline = "1s" },
]
`);
    const host = await jobtapPlugins({
      config,
      builtins: BUILTINS.filter((b) => b.name === ".priority-default" || b.name === ".update-queue"),
      env: { JOBTAP_PLUGIN_PATH: `/nonexistent:${dir}` },
    })(mgr);
    // .update-queue after the configured plugins, where Flux's queue context loads it.
    expect(host.list({ all: true }).map((p) => p.name)).toEqual([
      ".priority-default",
      "order-b.js",
      "async-hang.js",
      ".update-queue",
    ]);
    expect(host.find("async-hang.js")!.deadlineMs).toBe(1000);
    expect(host.find("order-b.js")!.deadlineMs).toBe(2000); // [job-manager] plugin-deadline
    // Loaded at start: no runtime replay, no reprioritize-all.
    expect(mgr.calls).toEqual([]);
  });

  it("stops startup on the first bad directive", async () => {
    const config = parseToml('[job-manager]\nplugins = [{ load = "missing-plugin" }]');
    await expect(jobtapPlugins({ config, builtins: [] })(new FakeManager())).rejects.toMatchObject({
      code: "CONFIG",
      message: "[job-manager.plugins][0].load: missing-plugin: No such plugin found",
    });
  });
});
