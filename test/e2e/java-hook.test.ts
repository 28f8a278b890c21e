/**
 * The HTCondor manual's Java example end to end through the real daemon (spec htcondor.md
 * §3, the hooks manual's "HasJava5PrepareHook" pattern): one pasted startd config gives
 * slot 2 the JAVA5 PREPARE_JOB hook's advertisement through STARTD_ATTRS and the hook itself;
 * jobs requiring `HasJava5PrepareHook` run only in slot 2, with their Cmd rewritten by the
 * real hook script, while slot 1 stays free; a job without the requirement may use slot 1.
 */
import { chmodSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DaemonUnderTest, requireBuild, waitFor } from "./harness.js";

function script(path: string, body: string): string {
  writeFileSync(path, `#!/bin/sh\n${body}\n`);
  chmodSync(path, 0o755);
  return path;
}

/** The core the job was allocated (its alloc event's R): slot N of these one-core slots is core N-1. */
function coreOf(d: DaemonUnderTest, id: string): string | undefined {
  const events = d.cli(["eventlog", "--json", id]).stdout.trim().split("\n").map((l) => JSON.parse(l) as { name: string; context?: Record<string, unknown> });
  const alloc = events.find((e) => e.name === "alloc");
  const R = alloc?.context?.R as { execution: { R_lite: Array<{ children: { core: string } }> } } | undefined;
  return R?.execution.R_lite[0]?.children.core;
}

describe("STARTD_ATTRS + PREPARE_JOB: the seed's Java example", { timeout: 120_000 }, () => {
  let d: DaemonUnderTest;
  let dir: string;

  beforeAll(async () => {
    requireBuild();
    d = new DaemonUnderTest();
    dir = join(d.statedir, "site");
    mkdirSync(join(dir, "java5", "bin"), { recursive: true });
    const java = script(join(dir, "java5", "bin", "java"), 'echo "java5 ran: $*"');
    // The manual's hook: read and discard the job ad, print the new Cmd.
    const hook = script(join(dir, "java5_prepare_hook"), `cat > /dev/null\necho 'Cmd = "${java}"'`);
    const condor = join(dir, "50-java5");
    writeFileSync(condor, [
      `JAVA5_HOOK_PREPARE_JOB = ${hook}`,
      "# Only slot 2 has the hook's Java installed, so only it advertises the hook.",
      "SLOT2_HasJava5PrepareHook = True",
      "STARTD_ATTRS = HasJava5PrepareHook $(STARTD_ATTRS)",
      "",
    ].join("\n"));
    const toml = join(dir, "jobtap.toml");
    writeFileSync(toml, [
      "[resources]",
      "cores = 2",
      'memory = "2G"',
      "slots = [{ count = 2, cores = 1 }]",
      "[policy]",
      `condor_config = ${JSON.stringify(condor)}`,
      "[job-manager]",
      `plugins = [{ load = "condor-fetch", conf = { condor_config = ${JSON.stringify(condor)} } }]`,
      "",
    ].join("\n"));
    await d.start(["--config", toml]);
  }, 60_000);
  afterAll(async () => {
    await d?.dispose();
  });

  it("slot 2 advertises HasJava5PrepareHook, slot 1 does not", () => {
    const ads = JSON.parse(d.cli(["ads", "--json", "--constraint", "HasJava5PrepareHook"]).stdout) as Array<Record<string, unknown>>;
    expect(ads.map((a) => a.SlotID)).toEqual([2]);
    expect(d.cli(["ads", "--slot", "1", "-l"]).stdout).not.toContain("HasJava5PrepareHook");
  });

  it("jobs requiring the hook run only in slot 2, as the hook's java; slot 1 stays free for others", async () => {
    const submit = (...extra: string[]) => {
      const r = d.cli(["submit", ...extra, "--", "/usr/bin/java", "Hello"]);
      expect(r.stderr).toBe("");
      return r.stdout.trim();
    };
    const java = Array.from({ length: 4 }, () => submit("--classad", "Requirements = HasJava5PrepareHook", "--classad", 'HookKeyword = "JAVA5"'));
    await waitFor(() => java.every((id) => d.job(id)?.state === "INACTIVE"), 60_000, "the Java jobs to end");
    for (const id of java) {
      expect(coreOf(d, id)).toBe("1");
      expect(d.cli(["job", "output", id]).stdout).toBe("java5 ran: Hello\n");
      expect(d.cli(["job", "info", id, "--classad"]).stdout).toMatch(/Cmd = ".*\/java5\/bin\/java"/);
    }
    // A plain job (no Requirements) takes the first free slot, slot 1.
    const plain = d.cli(["submit", "--", "/bin/echo", "plain"]).stdout.trim();
    await waitFor(() => d.job(plain)?.state === "INACTIVE", 30_000, "the plain job to end");
    expect(coreOf(d, plain)).toBe("0");
  });
});
