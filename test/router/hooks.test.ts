import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { printOldAd } from "../../src/plugin.js";
import { formatJobId } from "../../src/manager/base/ids.js";
import { settle as settleUntil, writeScript, type TestHost } from "../builtins/helpers.js";
import { attr, copies, copiesOf, routeRows, routerHost, submitRoutable, until } from "./helpers.js";

let h: TestHost | undefined;
let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "jobtap-router-hooks-"));
});
afterEach(async () => {
  await h?.close();
  h = undefined;
  rmSync(dir, { recursive: true, force: true });
});

const script = (name: string, body: string): string => writeScript(dir, name, body);
/** Lets real hook processes run while simulated time moves in 200 ms steps. */
const settle = (t: TestHost, cond: () => boolean, realMs = 15_000): Promise<void> => settleUntil(t, cond, 200, realMs);

const read = (name: string) => (existsSync(join(dir, name)) ? readFileSync(join(dir, name), "utf8") : undefined);
const ROUTE = { R: { transform: 'REQUIREMENTS WantJobRouter\nGridResource = "local"\n' } };
const conf = (hooks: Record<string, string>, extra: Record<string, unknown> = {}) => ({ routes: ROUTE, hook_keyword: "ROUTER", hooks, ...extra });

describe("condor-router hooks", () => {
  it("TRANSLATE_JOB gets the route-info ad, ------, the original ad; its stdout is the new working ad", async () => {
    const translate = script("translate", `cat > ${dir}/translate.in\nsed '1,/^------$/d' ${dir}/translate.in\necho 'Translated = "yes"'`);
    const t = (h = await routerHost(conf({ ROUTER_HOOK_TRANSLATE_JOB: translate })));
    await t.submit({ runDuration: 1000 });
    const [orig] = await submitRoutable(t, 1, { classad: { Color: '"blue"' } });
    await t.advance(10_000);
    await settle(t, () => copiesOf(t, orig!).length === 1);
    const [copy] = copiesOf(t, orig!);
    // The original as the hook saw it: claimed, not yet pointing at its copy.
    const original = printOldAd(t.manager.jobAd(orig!)).split("\n").filter((l) => !l.startsWith("RoutedToJobId")).join("\n");
    expect(read("translate.in")).toBe(`[ Name = "R"; TargetUniverse = 9; GridResource = "local" ]\n------\n${original}`);
    expect(attr(t, copy!.id, "Translated")).toBe("yes");
    expect(attr(t, copy!.id, "Color")).toBe("blue");
    expect(attr(t, copy!.id, "RoutedFromJobId")).toBe(formatJobId(orig!));
  });

  it("TRANSLATE_JOB exiting non-zero drops the job (no copy, back to pending, a route failure); no fallback", async () => {
    const translate = script("translate", "echo 'Translated = true'\nexit 3");
    const t = (h = await routerHost(conf({ ROUTER_HOOK_TRANSLATE_JOB: translate })));
    await t.submit({ runDuration: 1000 });
    const [orig] = await submitRoutable(t, 1);
    await t.advance(10_000);
    await settle(t, () => t.log.some((l) => l.includes("TRANSLATE_JOB hook") && l.includes("exited with status 3")));
    await settle(t, () => attr(t, orig!, "Managed") === "Schedd");
    expect(copies(t)).toEqual([]);
    expect((await routeRows(t))[0]).toMatchObject({ recent_failed: 1, current: 0 });
  });

  it("a TRANSLATE_JOB output line that does not parse drops the job", async () => {
    const translate = script("translate", "sed '1,/^------$/d'\necho 'Broken = ('");
    const t = (h = await routerHost(conf({ ROUTER_HOOK_TRANSLATE_JOB: translate })));
    await t.submit({ runDuration: 1000 });
    const [orig] = await submitRoutable(t, 1);
    await t.advance(10_000);
    await settle(t, () => attr(t, orig!, "Managed") === "Schedd");
    expect(copies(t)).toEqual([]);
    expect(t.log.some((l) => /TRANSLATE_JOB hook .*output line \d+ "Broken = \("/.test(l))).toBe(true);
  });

  it("JOB_FINALIZE gets original, ------, copy; JOB_CLEANUP gets the copy; then the original finishes", async () => {
    const fin = script("finalize", `cat > ${dir}/finalize.in\necho x >> ${dir}/finalize.count\necho 'Finalized = true'`);
    const clean = script("cleanup", `cat > ${dir}/cleanup.in`);
    const t = (h = await routerHost(conf({ ROUTER_HOOK_JOB_FINALIZE: fin, ROUTER_HOOK_JOB_CLEANUP: clean })));
    await t.submit({ runDuration: 15 });
    const [orig] = await submitRoutable(t, 1, { runDuration: 1 });
    await t.advance(10_000);
    const [copy] = copiesOf(t, orig!);
    await settle(t, () => t.job(orig!).state === "INACTIVE");
    const finIn = read("finalize.in")!;
    const [origPart, copyPart] = finIn.split("------\n");
    expect(origPart).toMatch(/^JobId = "/m);
    expect(origPart).toContain(`RoutedToJobId = "${formatJobId(copy!.id)}"`);
    expect(copyPart).toContain(`RoutedFromJobId = "${formatJobId(orig!)}"`);
    expect(copyPart).toContain("JobStatus = 4");
    expect(read("cleanup.in")).toBe(copyPart);
    // JOB_FINALIZE's output updates the original's ad (a classad-update event: its jobspec is fixed).
    expect(t.eventlog(orig!).find((e) => e.name === "classad-update")?.context).toEqual({ attributes: { Finalized: "true" } });
    expect(attr(t, orig!, "Finalized")).toBe(true);
    expect(t.events(orig!).slice(-4)).toEqual(["finish", "release", "free", "clean"]);
    expect((await routeRows(t))[0]).toMatchObject({ recent_succeeded: 1 });
  });

  it("JOB_FINALIZE exiting non-zero ends the original with a router exception and counts a failure", async () => {
    const fin = script("finalize", "exit 1");
    const t = (h = await routerHost(conf({ ROUTER_HOOK_JOB_FINALIZE: fin })));
    await t.submit({ runDuration: 15 });
    const [orig] = await submitRoutable(t, 1, { runDuration: 1 });
    await t.advance(10_000);
    await settle(t, () => t.job(orig!).state === "INACTIVE");
    expect(t.eventlog(orig!).find((e) => e.name === "exception")?.context).toMatchObject({ type: "router", note: expect.stringMatching(/JOB_FINALIZE hook .* exited with status 1/) });
    expect((await routeRows(t))[0]).toMatchObject({ recent_failed: 1 });
  });

  it("JOB_CLEANUP exiting non-zero keeps the job in cleanup; retried at the next poll", async () => {
    const clean = script("cleanup", `echo x >> ${dir}/cleanup.count\n[ $(wc -l < ${dir}/cleanup.count) -ge 2 ]`);
    const fin = script("finalize", `echo x >> ${dir}/finalize.count`);
    const t = (h = await routerHost(conf({ ROUTER_HOOK_JOB_CLEANUP: clean, ROUTER_HOOK_JOB_FINALIZE: fin })));
    await t.submit({ runDuration: 15 });
    const [orig] = await submitRoutable(t, 1, { runDuration: 1 });
    await t.advance(10_000);
    await settle(t, () => read("cleanup.count") !== undefined);
    await settle(t, () => t.log.some((l) => l.includes("cleanup retried next poll")));
    expect(t.job(orig!).state).toBe("RUN"); // waits for its cleanup
    await settle(t, () => t.job(orig!).state === "INACTIVE", 30_000);
    expect(read("cleanup.count")).toBe("x\nx\n");
    expect(read("finalize.count")).toBe("x\n"); // only cleanup is retried
  });

  it("UPDATE_JOB_INFO gets the copy's ad each poll and its output updates the waiting copy", async () => {
    const upd = script("update", `cat > ${dir}/update.in\necho 'Checked = true'`);
    const t = (h = await routerHost(conf({ ROUTER_HOOK_UPDATE_JOB_INFO: upd })));
    await t.submit({ runDuration: 1000 });
    const [orig] = await submitRoutable(t, 1);
    await t.advance(10_000);
    const [copy] = copiesOf(t, orig!);
    await t.advance(10_000);
    await settle(t, () => attr(t, copy!.id, "Checked") === true);
    expect(read("update.in")).toContain(`RoutedFromJobId = "${formatJobId(orig!)}"`);
  });

  it("UPDATE_JOB_INFO also runs each poll while the copy runs; its output updates the running copy's ad", async () => {
    const upd = script("update", `cat > ${dir}/update.in\necho x >> ${dir}/update.count\necho "Polled = $(wc -l < ${dir}/update.count)"`);
    const t = (h = await routerHost(conf({ ROUTER_HOOK_UPDATE_JOB_INFO: upd })));
    await t.submit({ runDuration: 15 });
    const [orig] = await submitRoutable(t, 1, { runDuration: 1000 });
    await t.advance(10_000);
    const [copy] = copiesOf(t, orig!);
    await settle(t, () => t.job(copy!.id).state === "RUN");
    await t.advance(10_000);
    await settle(t, () => typeof attr(t, copy!.id, "Polled") === "bigint");
    const first = attr(t, copy!.id, "Polled") as bigint;
    await t.advance(10_000);
    await settle(t, () => (attr(t, copy!.id, "Polled") as bigint) > first);
    expect(t.job(copy!.id).state).toBe("RUN");
    expect(read("update.in")).toContain("JobStatus = 2");
  });

  it("a TRANSLATE_JOB hook that hangs holds up only its own job, and is killed at hook_time_limit (a failure)", async () => {
    const translate = script(
      "translate",
      `cat > ${dir}/in.$$\nif grep -q '^Hang = true' ${dir}/in.$$; then exec sleep 1000; fi\nsed '1,/^------$/d' ${dir}/in.$$`,
    );
    const t = (h = await routerHost(conf({ ROUTER_HOOK_TRANSLATE_JOB: translate }, { hook_time_limit: 30 })));
    await t.submit({ runDuration: 100_000 });
    const [hung] = await submitRoutable(t, 1, { classad: { Hang: "true" } });
    const [fine] = await submitRoutable(t, 1);
    await t.advance(10_000);
    await settle(t, () => copiesOf(t, fine!).length === 1);
    expect(copiesOf(t, hung!)).toEqual([]);
    expect(attr(t, hung!, "Managed")).toBe("External"); // still waiting for its hook
    await settle(t, () => attr(t, hung!, "Managed") === "Schedd", 30_000);
    expect(t.log.some((l) => /TRANSLATE_JOB hook .* (killed|exited).*time limit/.test(l))).toBe(true);
    expect((await routeRows(t))[0]).toMatchObject({ recent_failed: 1 });
  });
});
