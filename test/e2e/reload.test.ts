/**
 * Config reload end to end: `jobtap config reload` and SIGHUP re-read the daemon's
 * `--config` file, hand it to every plugin (conf.update), re-apply a changed plugin list,
 * and keep the old config when a plugin refuses the new one.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DaemonUnderTest, requireBuild, waitFor } from "./harness.js";

/** Remembers `[picky] level` of the last config it accepted; refuses `[picky] fail`. */
const PICKY = `export default (p) => {
  let level;
  p.on("conf.update", ({ conf }) => {
    if (conf.picky?.fail) return p.reject("picky: fail is set, refusing");
    level = conf.picky?.level;
  });
  p.on("plugin.query", () => ({ level }));
};
`;

function config(level: number, plugins: string[], extra = ""): string {
  const list = plugins.map((f) => `[[job-manager.plugins]]\nload = "./${f}"\n`).join("");
  return `[resources]\ncores = 1\n[picky]\nlevel = ${level}\n${extra}\n${list}`;
}

describe("config reload", { timeout: 90_000 }, () => {
  let d: DaemonUnderTest;
  let file: string;

  beforeAll(async () => {
    requireBuild();
    d = new DaemonUnderTest();
    file = join(d.statedir, "jobtap.toml");
    writeFileSync(join(d.statedir, "picky.mjs"), PICKY);
    writeFileSync(join(d.statedir, "other.mjs"), "export default () => {};\n");
    writeFileSync(file, config(1, ["picky.mjs"]));
    await d.start(["--config", file]);
  }, 60_000);
  afterAll(async () => {
    await d?.dispose();
  });

  const level = () => JSON.parse(d.cli(["plugin", "query", "picky.mjs"]).stdout).level as number;
  const plugins = () => d.cli(["plugin", "list"]).stdout;

  it("re-reads the file, updates plugins and re-applies a changed plugin list", () => {
    expect(level()).toBe(1);
    writeFileSync(file, config(2, ["picky.mjs", "other.mjs"]));
    const r = d.cli(["config", "reload"]);
    expect(r).toMatchObject({ status: 0, stderr: "", stdout: `${file}: reloaded (plugin list re-applied)\n` });
    expect(plugins()).toBe("picky.mjs\nother.mjs\n");
    expect(level()).toBe(2);
    // Unchanged list: conf.update only.
    writeFileSync(file, config(3, ["picky.mjs", "other.mjs"]));
    expect(d.cli(["config", "reload"]).stdout).toBe(`${file}: reloaded\n`);
    expect(level()).toBe(3);
  });

  it("keeps the old config and plugin list when a plugin refuses, naming its reason", () => {
    writeFileSync(file, config(9, ["picky.mjs"], "fail = true"));
    const r = d.cli(["config", "reload"]);
    expect(r.status).toBe(1);
    expect(r.stderr).toContain("picky: fail is set, refusing");
    expect(level()).toBe(3);
    expect(plugins()).toBe("picky.mjs\nother.mjs\n");
    writeFileSync(file, "[daemon]\nshutdown = \"later\"\n");
    const bad = d.cli(["config", "reload"]);
    expect(bad.status).toBe(1);
    expect(bad.stderr).toContain("[daemon].shutdown");
    expect(level()).toBe(3);
  });

  it("puts the old list and config back when a newly listed plugin fails to load", () => {
    writeFileSync(join(d.statedir, "broken.mjs"), 'export default (p) => { p.on("conf.update", () => p.reject("broken: never happy")); };\n');
    writeFileSync(file, config(7, ["picky.mjs", "broken.mjs"]));
    const r = d.cli(["config", "reload"]);
    expect(r.status).toBe(1);
    expect(r.stderr).toContain("broken: never happy");
    expect(r.stderr).toContain("[job-manager.plugins][1].load");
    expect(plugins()).toBe("picky.mjs\nother.mjs\n");
    expect(level()).toBe(3);
  });

  it("reloads on SIGHUP and logs it", async () => {
    writeFileSync(file, config(4, ["picky.mjs"]));
    d.hup();
    await waitFor(() => plugins() === "picky.mjs\n", 20_000, "the plugin list from SIGHUP");
    expect(level()).toBe(4);
    await waitFor(() => d.log.includes(`configuration ${file} reloaded; plugin list re-applied`), 20_000, "the reload in the log");
    expect(d.cli(["jobs"]).status).toBe(0);
  });
});
