/**
 * bin/jobtap's start-up path (issue 41): `submit` and `jobs` run from the one-file CommonJS
 * bundle (dist/src/cli/main.bundle.cjs) without starting Node's ES module loader; what they
 * load lazily (--wait, --classad's parser) still comes from the ES modules beside it; a
 * bundle older than one of its inputs (a `tsc` run alone) is passed over for the ES modules.
 * A probe preloaded with `node -r` reports, at exit, which loaders the process used.
 */
import { spawnSync } from "node:child_process";
import { cpSync, mkdtempSync, rmSync, utimesSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { BIN, ROOT, daemonForSuite } from "./harness.js";

const PROBE_DIR = mkdtempSync(join(tmpdir(), "jobtap-start-"));
const PROBE = join(PROBE_DIR, "probe.cjs");
writeFileSync(
  PROBE,
  `process.on("exit", () => process.stderr.write("PROBE " + JSON.stringify({
  esm: process.moduleLoadList.some((m) => m.includes("internal/modules/esm/module_job")),
  bundle: Object.keys(require.cache).some((f) => f.endsWith("main.bundle.cjs")),
}) + "\\n"));\n`,
);
afterAll(() => rmSync(PROBE_DIR, { recursive: true, force: true }));

interface Probed {
  status: number;
  stdout: string;
  stderr: string;
  esm: boolean;
  bundle: boolean;
}

describe("bin/jobtap start-up path", () => {
  const d = daemonForSuite();

  function probed(bin: string, args: string[]): Probed {
    const env: NodeJS.ProcessEnv = { ...process.env, JOBTAP_SOCKET: d.socket, JOBTAP_STATEDIR: d.statedir };
    delete env.NODE_OPTIONS;
    const r = spawnSync(process.execPath, ["-r", PROBE, bin, ...args], { env, encoding: "utf8", timeout: 30_000 });
    const line = r.stderr.split("\n").find((l) => l.startsWith("PROBE "));
    if (!line) throw new Error(`no probe line; stderr:\n${r.stderr}`);
    const stderr = r.stderr.replace(`${line}\n`, "");
    return { status: r.status ?? -1, stdout: r.stdout, stderr, ...(JSON.parse(line.slice(6)) as { esm: boolean; bundle: boolean }) };
  }

  it("submit and jobs run from the bundle without the ES module loader", () => {
    const s = probed(BIN, ["submit", "--urgency", "0", "true"]);
    expect(s).toMatchObject({ status: 0, stderr: "", esm: false, bundle: true });
    const id = s.stdout.trim();
    const j = probed(BIN, ["jobs", "-a"]);
    expect(j).toMatchObject({ status: 0, esm: false, bundle: true });
    expect(j.stdout).toContain(id);
  });

  it("a lazy import from the bundle loads the ES module beside it (--wait, --classad)", () => {
    const w = probed(BIN, ["submit", "--wait", "--setattr", "exec.test.run_duration=0", "true"]);
    expect(w).toMatchObject({ status: 0, stderr: "", bundle: true });
    const bad = probed(BIN, ["submit", "--classad", "Foo=(", "true"]);
    expect(bad.status).toBe(1);
    expect(bad.stderr).toMatch(/^jobtap submit: --classad 'Foo=\(': ClassAd syntax error/);
  });

  it("other commands keep the ES modules", () => {
    const v = probed(BIN, ["version"]);
    expect(v).toMatchObject({ status: 0, esm: true, bundle: false });
    expect(v.stdout).toMatch(/^jobtap \d/);
  });

  it("a bundle older than one of its inputs is passed over for the ES modules", () => {
    const copy = mkdtempSync(join(tmpdir(), "jobtap-stale-"));
    try {
      cpSync(join(ROOT, "bin"), join(copy, "bin"), { recursive: true, preserveTimestamps: true });
      cpSync(join(ROOT, "dist", "src"), join(copy, "dist", "src"), { recursive: true, preserveTimestamps: true, filter: (f) => !f.endsWith(".map") && !f.endsWith(".d.ts") });
      const bin = join(copy, "bin", "jobtap");
      expect(probed(bin, ["submit", "--urgency", "0", "true"])).toMatchObject({ status: 0, bundle: true });
      const later = new Date(Date.now() + 60_000);
      utimesSync(join(copy, "dist", "src", "cli", "submit.js"), later, later);
      const s = probed(bin, ["submit", "--urgency", "0", "true"]);
      expect(s).toMatchObject({ status: 0, stderr: "", esm: true, bundle: false });
    } finally {
      rmSync(copy, { recursive: true, force: true });
    }
  });
});
