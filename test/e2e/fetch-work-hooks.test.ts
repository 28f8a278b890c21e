/**
 * The example work source's hook scripts (examples/fetch-work) run by hand, in the orders
 * the daemon may run them in: REPLY_FETCH and JOB_EXIT are fire-and-forget and unordered.
 */
import { cpSync, existsSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { spawnSync } from "node:child_process";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { ROOT } from "./harness.js";

let ex: string;
afterEach(() => rmSync(ex, { recursive: true, force: true }));

/** Runs one of the example's hooks with `stdin`; fails the test on any error. */
function hook(name: string, args: string[], stdin = ""): string {
  const r = spawnSync(join(ex, name), args, { input: stdin, encoding: "utf8" });
  expect(r.stderr).toBe("");
  expect(r.status).toBe(0);
  return r.stdout;
}

const slotAd = 'Name = "slot1@host"\nSlotID = 1\n';

describe("examples/fetch-work hooks", () => {
  it("a REPLY_FETCH accept that runs after its job's JOB_EXIT leaves no claim behind", () => {
    ex = mkdtempSync(join(tmpdir(), "jobtap-fetch-hooks-"));
    cpSync(join(ROOT, "examples", "fetch-work"), ex, { recursive: true });
    hook("submit_work", ["w1", "/bin/true"]);
    const ad = hook("fetch_work", [], slotAd);
    expect(ad).toMatch(/^WorkId = "w1"$/m);
    hook("job_exit", ["exit"], `${ad}ExitCode = 0\n`);
    hook("reply_fetch", ["accept"], `${ad}-----\n${slotAd}ClaimId = "<slot1@host>#1#1#condor-fetch"\n`);
    expect(readdirSync(join(ex, "spool", "taken"))).toEqual([]);
    expect(existsSync(join(ex, "spool", "done", "w1.exit"))).toBe(true);
  });

  it("a REPLY_FETCH reject puts the job back in the queue, to be fetched again", () => {
    ex = mkdtempSync(join(tmpdir(), "jobtap-fetch-hooks-"));
    cpSync(join(ROOT, "examples", "fetch-work"), ex, { recursive: true });
    hook("submit_work", ["w1", "/bin/true"]);
    const ad = hook("fetch_work", [], slotAd);
    hook("reply_fetch", ["reject"], `${ad}-----\n${slotAd}`);
    expect(readdirSync(join(ex, "spool", "taken"))).toEqual([]);
    expect(hook("fetch_work", [], slotAd)).toBe(ad);
  });
});
