import { chmodSync, chownSync, existsSync, mkdirSync, symlinkSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { checkHookPath, HookPathCache, HookRunner } from "../../src/hooks/index.js";
import { hookDir, hookScript, memoryLog } from "./helpers.js";

const isRoot = process.geteuid?.() === 0;

describe("hook path checks (HTCondor's validateHookPath, whole directory chain)", () => {
  let dir: string;
  let cleanup: () => void;
  beforeEach(() => ({ dir, cleanup } = hookDir()));
  afterEach(() => cleanup());

  /** A hook that leaves a marker when it runs: a refused hook must leave none. */
  const marker = (d: string, name = "hook") => hookScript(d, name, `touch "${dir}/ran-${name}"`);

  it("accepts an executable, non-world-writable file in an owner-only temp dir (under sticky /tmp)", async () => {
    const hook = marker(dir);
    expect(await checkHookPath(hook)).toEqual({ ok: true, path: hook });
    const r = await new HookRunner().run({ path: hook });
    expect(r.kind).toBe("exited");
    expect(existsSync(join(dir, "ran-hook"))).toBe(true);
  });

  it("refuses a world-writable hook with one log line naming the path and why; it does not run", async () => {
    const hook = marker(dir);
    chmodSync(hook, 0o757);
    const log = memoryLog();
    const r = await new HookRunner({ log }).run({ path: hook, name: "FETCH_WORK slot1" });
    expect(r).toEqual({ kind: "refused", name: "FETCH_WORK slot1", path: hook, reason: "the file is world-writable (mode 0757)" });
    expect(log.lines).toEqual([`warn: hook FETCH_WORK slot1 (${hook}): refused: the file is world-writable (mode 0757)`]);
    expect(existsSync(join(dir, "ran-hook"))).toBe(false);
  });

  it("refuses a hook in a world-writable directory, sticky or not (as HTCondor does)", async () => {
    for (const mode of [0o777, 0o1777]) {
      const ww = join(dir, `ww${mode.toString(8)}`);
      mkdirSync(ww);
      chmodSync(ww, mode);
      const hook = marker(ww);
      const log = memoryLog();
      const r = await new HookRunner({ log }).run({ path: hook });
      expect(r).toMatchObject({ kind: "refused", reason: `it is in a world-writable directory (${ww}, mode 0${mode.toString(8)})` });
      expect(log.lines.length).toBe(1);
      expect(log.lines[0]).toContain(hook);
    }
    expect(existsSync(join(dir, "ran-hook"))).toBe(false);
  });

  it("refuses a hook below a world-writable directory without the sticky bit", async () => {
    const ww = join(dir, "ww");
    mkdirSync(join(ww, "sub"), { recursive: true });
    chmodSync(ww, 0o777);
    const hook = marker(join(ww, "sub"));
    expect(await checkHookPath(hook)).toMatchObject({ ok: false, reason: `it is below a world-writable directory (${ww}, mode 0777)` });
  });

  it("a sticky world-writable ancestor is fine when our entry in it is owned by root or us", async () => {
    const sticky = join(dir, "sticky");
    mkdirSync(join(sticky, "mine"), { recursive: true });
    chmodSync(sticky, 0o1777);
    const hook = marker(join(sticky, "mine"));
    expect(await checkHookPath(hook)).toMatchObject({ ok: true });
  });

  it.skipIf(!isRoot)("...and refused when that entry belongs to another user, who could replace it", async () => {
    const sticky = join(dir, "sticky");
    mkdirSync(join(sticky, "theirs"), { recursive: true });
    chmodSync(sticky, 0o1777);
    chownSync(join(sticky, "theirs"), 4242, 4242);
    const hook = marker(join(sticky, "theirs"));
    expect(await checkHookPath(hook)).toMatchObject({
      ok: false,
      reason: `${join(sticky, "theirs")} is in the sticky world-writable directory ${sticky} and owned by uid 4242, neither root nor us`,
    });
  });

  it("checks the real path too: a symlink from a safe directory into a world-writable one is refused", async () => {
    const ww = join(dir, "ww");
    mkdirSync(ww);
    chmodSync(ww, 0o777);
    const target = marker(ww);
    const safe = join(dir, "safe");
    mkdirSync(safe);
    symlinkSync(target, join(safe, "link"));
    expect(await checkHookPath(join(safe, "link"))).toMatchObject({
      ok: false,
      reason: `it is in a world-writable directory (${ww}, mode 0777) (on its real path ${target})`,
    });
  });

  it("refuses relative paths, directories, missing files and files without an execute bit", async () => {
    expect(await checkHookPath("bin/hook")).toMatchObject({ ok: false, reason: "not an absolute path" });
    expect(await checkHookPath("")).toMatchObject({ ok: false, reason: "the hook path is empty" });
    expect(await checkHookPath(dir)).toMatchObject({ ok: false, reason: "not a regular file" });
    expect(await checkHookPath(join(dir, "nope"))).toMatchObject({ ok: false, reason: "cannot stat: ENOENT (no such file or directory)" });
    const plain = hookScript(dir, "plain", "exit 0", 0o600);
    expect(await checkHookPath(plain)).toMatchObject({ ok: false, reason: "not executable (mode 0600)" });
  });

  it("system programs pass (/bin/true)", async () => {
    expect(await checkHookPath("/bin/true")).toMatchObject({ ok: true });
  });

  it("a runner trusts a safe verdict for pathCheckCacheMs; a refusal is looked at again every run", async () => {
    const hook = hookScript(dir, "hook", "exit 0");
    const trusting = new HookRunner({ pathCheckCacheMs: 3600_000 });
    const strict = new HookRunner({ pathCheckCacheMs: 0 });
    expect((await trusting.run({ path: hook })).kind).toBe("exited");
    expect((await strict.run({ path: hook })).kind).toBe("exited");
    chmodSync(hook, 0o777);
    expect((await trusting.run({ path: hook })).kind).toBe("exited");
    expect(await strict.run({ path: hook })).toMatchObject({ kind: "refused" });
    const fresh = new HookRunner({ pathCheckCacheMs: 3600_000 });
    expect(await fresh.run({ path: hook })).toMatchObject({ kind: "refused" });
    chmodSync(hook, 0o755);
    expect((await fresh.run({ path: hook })).kind).toBe("exited");
  });

  it("checks that start together share one examination of the path", async () => {
    const hook = hookScript(dir, "hook", "exit 0");
    const cache = new HookPathCache(60_000);
    const a = cache.check(hook);
    expect(cache.check(hook)).toBe(a);
    expect(await a).toEqual({ ok: true, path: hook });
    const uncached = new HookPathCache(0);
    expect(uncached.check(hook)).not.toBe(uncached.check(hook));
  });
});
