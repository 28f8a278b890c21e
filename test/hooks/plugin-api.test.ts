import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createTestHost, HookRunner, readHookAd, writeHookAds, type PluginContext, type TestHost } from "jobtap/plugin";
import { hookDir, hookScript } from "./helpers.js";

/** Advances simulated time in small steps, letting real time pass too, until `cond()` holds. */
async function drive(host: TestHost, cond: () => boolean): Promise<void> {
  const end = Date.now() + 10_000;
  while (!cond()) {
    if (Date.now() > end) throw new Error(`the plugin did not finish; log:\n${host.log.join("\n")}`);
    await host.advance(10);
    await new Promise((r) => setTimeout(r, 5));
  }
}

// A plugin written against "jobtap/plugin" only runs a real hook with its own clock and log.
describe("the hook runner through jobtap/plugin", () => {
  let dir: string;
  let cleanup: () => void;
  let host: TestHost | undefined;
  beforeEach(() => ({ dir, cleanup } = hookDir()));
  afterEach(async () => {
    await host?.close();
    host = undefined;
    cleanup();
  });

  it("a plugin runs a hook per new job, reads its ClassAd reply and gets its stderr in the plugin's log", async () => {
    const hook = hookScript(dir, "score", `cat > "${dir}/stdin.txt"; echo 'Score = 6 * 7'; echo 'scored it' >&2; exit 1`);
    const plugin = (p: PluginContext) => {
      const hooks = new HookRunner({ clock: p.clock, log: p.log, maxInFlight: 2 });
      p.on("job.new", async (job) => {
        const r = await hooks.run({ path: hook, name: "SCORE", stdin: writeHookAds([`JobId = ${job.id}\nOwner = ${job.userid}`, "Cpus = 4"]) });
        if (r.kind !== "exited") return;
        const { ad, failed } = readHookAd(r.stdout);
        p.log.info(`score ${String(ad.evaluate("Score"))}, ${failed.length} bad lines`);
      });
    };
    host = await createTestHost({ plugin: { setup: plugin } });
    // The hook is a real process: drive simulated time while it runs in real time.
    let id: unknown;
    void host.submit().then((j) => (id = j));
    await drive(host, () => id !== undefined && host!.log.some((l) => l.includes("score 42")));
    expect(host.log.find((l) => l.includes("score 42"))).toMatch(/^info: .*score 42, 0 bad lines$/);
    expect(host.log.find((l) => l.includes("stderr: scored it"))).toMatch(/^warn: .*hook SCORE \(.*score\): exit 1, stderr: scored it$/);
    expect(readFileSync(join(dir, "stdin.txt"), "utf8")).toBe(`JobId = ${id}\nOwner = ${process.getuid!()}\n-----\nCpus = 4\n`);
  });
});
