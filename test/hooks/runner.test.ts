import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { getEventListeners } from "node:events";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { HookRunner, hookSucceeded, type HookRan, type HookRunnerOptions } from "../../src/hooks/index.js";
import { SimulatedClock } from "../../src/manager/base/clock.js";
import { alive, dead, hookDir, hookScript, memoryLog, pidFrom, until } from "./helpers.js";

// Real programs; time limits on a simulated clock so that no test depends on how fast
// the machine is. Every case runs twice: processes spawned by the runner itself, and by a
// spawn helper process (`spawnHelpers`), which must keep every guarantee.
describe.each([
  ["spawned directly", 0],
  ["spawned by a helper process", 1],
])("hook runner, %s", (_mode, spawnHelpers) => {
  let dir: string;
  let cleanup: () => void;
  let runners: HookRunner[] = [];
  beforeEach(() => ({ dir, cleanup } = hookDir()));
  afterEach(async () => {
    await Promise.all(runners.map((r) => r.close()));
    runners = [];
    cleanup();
  });
  /** A runner in this mode, closed after the test (which ends its helper). */
  function newRunner(opts: HookRunnerOptions = {}): HookRunner {
    const runner = new HookRunner({ spawnHelpers, ...opts });
    runners.push(runner);
    return runner;
  }

  function ran(r: unknown): HookRan {
    const res = r as HookRan;
    if (res.kind !== "exited" && res.kind !== "signaled") throw new Error(`hook did not run: ${JSON.stringify(r)}`);
    return res;
  }

  it("runs argv without a shell, with the given environment and cwd; captures stdout and stderr", async () => {
    const hook = hookScript(dir, "show", 'printf "%s|" "$0" "$@"; echo; echo "GREETING=$GREETING SECRET=$JOBTAP_TEST_SECRET"; pwd; echo oops >&2; exit 3');
    const log = memoryLog();
    process.env.JOBTAP_TEST_SECRET = "daemon-only";
    const r = ran(await newRunner({ log }).run({ path: hook, args: ["a b", "$HOME", "*"], env: { GREETING: "hi" }, cwd: "/" }));
    delete process.env.JOBTAP_TEST_SECRET;
    expect(r.kind).toBe("exited");
    expect(r.exitCode).toBe(3);
    expect(r.signal).toBeNull();
    expect(r.stdout).toBe(`${hook}|a b|$HOME|*|\nGREETING=hi SECRET=\n/\n`);
    expect(r.stderr).toBe("oops\n");
    expect(hookSucceeded(r)).toBe(false);
    expect(r.truncated).toBe(false);
    // a failing hook's stderr is logged at warn, naming the hook
    expect(log.lines).toEqual([`warn: hook ${hook}: exit 3, stderr: oops`]);
  });

  it("delivers stdin byte for byte (binary, 3 MB) and as UTF-8 text", async () => {
    const hook = hookScript(dir, "copy", 'cat > "$1"');
    const bytes = Buffer.alloc(3 * 1024 * 1024 + 7);
    for (let i = 0; i < bytes.length; i++) bytes[i] = (i * 7 + (i >> 11)) & 0xff;
    const runner = newRunner();
    const r1 = ran(await runner.run({ path: hook, args: [join(dir, "bin.out")], stdin: bytes }));
    expect(r1.exitCode).toBe(0);
    expect(readFileSync(join(dir, "bin.out")).equals(bytes)).toBe(true);
    const text = 'MyType = "Job"\nName = "ünïcødé ✓"\n-----\nCpus = 4\n';
    ran(await runner.run({ path: hook, args: [join(dir, "text.out")], stdin: text }));
    expect(readFileSync(join(dir, "text.out"), "utf8")).toBe(text);
  });

  it("no stdin: the hook reads /dev/null; a hook that ignores a large stdin is not an error", async () => {
    const runner = newRunner();
    const count = hookScript(dir, "count", "wc -c");
    expect(ran(await runner.run({ path: count })).stdout.trim()).toBe("0");
    const ignore = hookScript(dir, "ignore", "exit 0");
    const r = ran(await runner.run({ path: ignore, stdin: Buffer.alloc(8 * 1024 * 1024, 65) }));
    expect(r.exitCode).toBe(0);
  });

  it("a hang is killed at its time limit with its whole process group, grandchild included", async () => {
    const clock = new SimulatedClock();
    const log = memoryLog();
    const hook = hookScript(dir, "hang", `sleep 1000 & echo $! > "${dir}/gc.pid"; echo $$ > "${dir}/hook.pid"; wait`);
    const result = newRunner({ clock, log }).run({ path: hook, name: "FETCH_WORK slot1", timeLimitMs: 30_000 });
    const gc = await pidFrom(join(dir, "gc.pid"));
    const pid = await pidFrom(join(dir, "hook.pid"));
    await clock.advance(29_999);
    expect(alive(gc) && alive(pid)).toBe(true);
    await clock.advance(1);
    const r = ran(await result);
    expect(r).toMatchObject({ kind: "signaled", signal: "SIGTERM", timedOut: true, exitCode: null, pid });
    expect(await dead(gc)).toBe(true);
    expect(log.lines[0]).toBe(
      `warn: hook FETCH_WORK slot1 (${hook}): time limit of 30 s reached: SIGTERM to process group ${pid}, SIGKILL after 1 s`,
    );
  });

  it("the time limit counts from the request: a clock that moves before the pid is known still kills", async () => {
    const clock = new SimulatedClock();
    const hook = hookScript(dir, "slow", `echo $$ > "${dir}/slow.pid"; exec sleep 1000`);
    const result = newRunner({ clock }).run({ path: hook, timeLimitMs: 1_000, checkPath: false });
    await clock.advance(1_000); // at once: a spawn helper has not reported the process yet
    const r = ran(await result);
    expect(r).toMatchObject({ kind: "signaled", signal: "SIGTERM", timedOut: true });
  });

  it("a hang that ignores SIGTERM gets SIGKILL after the grace period, children too", async () => {
    const clock = new SimulatedClock();
    const hook = hookScript(dir, "stubborn", `trap '' TERM; sleep 1000 & echo $! > "${dir}/gc.pid"; while :; do wait; done`);
    const result = newRunner({ clock }).run({ path: hook, timeLimitMs: 5_000, killGraceMs: 2_000 });
    const gc = await pidFrom(join(dir, "gc.pid"));
    await clock.advance(5_000);
    // SIGTERM is ignored by both: they live until the grace period ends
    await new Promise((r) => setTimeout(r, 50));
    expect(alive(gc)).toBe(true);
    await clock.advance(2_000);
    const r = ran(await result);
    expect(r).toMatchObject({ kind: "signaled", signal: "SIGKILL", timedOut: true });
    expect(await dead(gc)).toBe(true);
  });

  it("processes left behind by a hook that exits are killed (HTCondor kills the hook's family)", async () => {
    const hook = hookScript(dir, "daemonize", `sleep 1000 & echo $! > "${dir}/gc.pid"; echo done; exit 0`);
    const r = ran(await newRunner().run({ path: hook }));
    expect(r).toMatchObject({ kind: "exited", exitCode: 0, timedOut: false, stdout: "done\n" });
    expect(await dead(Number(readFileSync(join(dir, "gc.pid"), "utf8")))).toBe(true);
  });

  it("a time limit longer than Node's 32-bit timers (30 days) does not fire early", async () => {
    const hook = hookScript(dir, "nap", "sleep 0.2; echo rested");
    const r = ran(await newRunner().run({ path: hook, timeLimitMs: 30 * 24 * 3600 * 1000 }));
    expect(r).toMatchObject({ kind: "exited", exitCode: 0, timedOut: false, stdout: "rested\n" });
  });

  it("100 MB of stdout is capped at 1 MiB, the rest read and discarded, with one log line", async () => {
    const log = memoryLog();
    const hook = hookScript(dir, "flood", "head -c 104857600 /dev/zero | tr '\\0' x; echo bye >&2");
    const r = ran(await newRunner({ log }).run({ path: hook }));
    expect(r.exitCode).toBe(0);
    expect(r.stdout.length).toBe(1024 * 1024);
    expect(r.stdout).toBe("x".repeat(1024 * 1024));
    expect(r.stdoutDropped).toBe(100 * 1024 * 1024 - 1024 * 1024);
    expect(r.truncated).toBe(true);
    expect(r.stderr).toBe("bye\n");
    expect(log.lines.filter((l) => l.startsWith("warn"))).toEqual([
      `warn: hook ${hook}: stdout over its cap of 1048576 bytes: ${r.stdoutDropped} bytes discarded`,
    ]);
  });

  it("caps stderr separately; a cap of 0 keeps nothing", async () => {
    const hook = hookScript(dir, "noisy", "echo 0123456789abcdef >&2; echo out");
    const r = ran(await newRunner().run({ path: hook, stderrCap: 10, stdoutCap: 0 }));
    expect(r).toMatchObject({ stderr: "0123456789", stderrDropped: 7, stdout: "", stdoutDropped: 4, truncated: true });
  });

  it("streams stdout to onStdout as it arrives, whole, also past the cap", async () => {
    const hook = hookScript(dir, "stream", "i=0; while [ $i -lt 500 ]; do echo \"Line$i = $i\"; i=$((i+1)); done");
    let streamed = "";
    const r = ran(await newRunner().run({ path: hook, stdoutCap: 100, onStdout: (t) => (streamed += t) }));
    expect(r.stdout.length).toBe(100);
    expect(streamed.split("\n").length).toBe(501);
    expect(streamed.startsWith(r.stdout)).toBe(true);
  });

  it("reports death by a signal", async () => {
    const hook = hookScript(dir, "suicide", "echo before; kill -USR1 $$; echo after");
    const r = ran(await newRunner().run({ path: hook }));
    expect(r).toMatchObject({ kind: "signaled", signal: "SIGUSR1", exitCode: null, timedOut: false, stdout: "before\n" });
  });

  it("a missing program, a non-executable file and an oversized argv are results, not exceptions", async () => {
    const log = memoryLog();
    const runner = newRunner({ log });
    const missing = join(dir, "missing");
    expect(await runner.run({ path: missing })).toMatchObject({ kind: "refused", reason: "cannot stat: ENOENT (no such file or directory)" });
    expect(await runner.run({ path: missing, checkPath: false })).toMatchObject({ kind: "spawn-error", code: "ENOENT" });
    const plain = hookScript(dir, "plain", "exit 0", 0o644);
    expect(await runner.run({ path: plain })).toMatchObject({ kind: "refused", reason: "not executable (mode 0644)" });
    expect(await runner.run({ path: plain, checkPath: false })).toMatchObject({ kind: "spawn-error", code: "EACCES" });
    const ok = hookScript(dir, "ok", "exit 0");
    expect(await runner.run({ path: ok, args: ["x".repeat(4 * 1024 * 1024)] })).toMatchObject({ kind: "spawn-error", code: "E2BIG" });
    expect(await runner.run({ path: ok, args: ["nul\0byte"] })).toMatchObject({ kind: "spawn-error", code: "ERR_INVALID_ARG_VALUE" });
    expect(log.lines.filter((l) => l.startsWith("error")).length).toBe(4);
    expect(log.lines.filter((l) => l.startsWith("warn")).length).toBe(2);
  });

  it("aborting a running hook kills its group; aborting a queued one cancels it", async () => {
    const clock = new SimulatedClock();
    const runner = newRunner({ clock, maxInFlight: 1 });
    const hook = hookScript(dir, "wait", `echo $$ > "${dir}/$1.pid"; exec sleep 1000`);
    const a = new AbortController();
    const b = new AbortController();
    const first = runner.run({ path: hook, args: ["a"], signal: a.signal });
    const second = runner.run({ path: hook, args: ["b"], signal: b.signal });
    await pidFrom(join(dir, "a.pid"));
    expect(runner.queued).toBe(1);
    b.abort();
    expect(await second).toMatchObject({ kind: "cancelled", reason: "aborted while queued" });
    a.abort();
    expect(await first).toMatchObject({ kind: "signaled", signal: "SIGTERM", aborted: true, timedOut: false });
    expect(existsSync(join(dir, "b.pid"))).toBe(false);
  });

  it("close() kills what runs and cancels what waits", async () => {
    const runner = newRunner({ maxInFlight: 1, defaults: { killGraceMs: 100 } });
    const hook = hookScript(dir, "wait", `echo $$ > "${dir}/$1.pid"; exec sleep 1000`);
    const first = runner.run({ path: hook, args: ["a"] });
    const second = runner.run({ path: hook, args: ["b"] });
    const pid = await pidFrom(join(dir, "a.pid"));
    await runner.close();
    expect(await first).toMatchObject({ kind: "signaled", signal: "SIGTERM", aborted: true });
    expect(await second).toMatchObject({ kind: "cancelled" });
    expect(await dead(pid)).toBe(true);
    expect(await runner.run({ path: hook, args: ["c"] })).toMatchObject({ kind: "cancelled", reason: "the hook runner is closed" });
  });

  it("respects the in-flight limit: at most N run at once, the rest start in FIFO order", async () => {
    // Each hook registers itself in running/, records how many it sees there, waits for its
    // release file, then leaves. With a broken limit the late starters would see more than 3.
    const runner = newRunner({ maxInFlight: 3 });
    const hook = hookScript(
      dir,
      "member",
      `mkdir -p "${dir}/running"; touch "${dir}/running/$1"; echo "$1 $(ls "${dir}/running" | wc -l)" >> "${dir}/starts"
while [ ! -e "${dir}/release-$1" ]; do sleep 0.01; done; rm "${dir}/running/$1"`,
    );
    const runs = Array.from({ length: 10 }, (_, i) => runner.run({ path: hook, args: [String(i)] }));
    const starts = () => (existsSync(join(dir, "starts")) ? readFileSync(join(dir, "starts"), "utf8").trim().split("\n") : []);
    await until(() => starts().length >= 3, "three hooks to start");
    expect(runner.inFlight).toBe(3);
    expect(runner.queued).toBe(7);
    expect(starts().map((l) => l.split(" ")[0]).sort()).toEqual(["0", "1", "2"]);
    // release one at a time, oldest first: each release lets exactly the next queued hook in
    for (let i = 0; i < 10; i++) {
      writeFileSync(join(dir, `release-${i}`), "");
      await runs[i];
      if (i + 3 < 10) await until(() => starts().length === i + 4, `hook ${i + 3} to start`);
    }
    const log = starts().map((l) => l.split(" ").map(Number) as [number, number]);
    expect(log.slice(3).map(([id]) => id)).toEqual([3, 4, 5, 6, 7, 8, 9]);
    expect(Math.max(...log.map(([, seen]) => seen))).toBe(3);
    expect(runner.inFlight).toBe(0);
  });

  it("a throwing onStdout is logged once and stops being called; the hook's output is still captured", async () => {
    const log = memoryLog();
    const hook = hookScript(dir, "talk", "echo one; echo two");
    let calls = 0;
    const r = ran(
      await newRunner({ log }).run({
        path: hook,
        onStdout: () => {
          calls++;
          throw new Error("consumer bug");
        },
      }),
    );
    expect(r).toMatchObject({ kind: "exited", exitCode: 0, stdout: "one\ntwo\n" });
    expect(calls).toBe(1);
    expect(log.lines).toEqual([`error: hook ${hook}: onStdout threw (consumer bug); the rest of stdout is only captured`]);
  });

  it("one AbortSignal shared by many runs keeps no listener once they end", async () => {
    const hook = hookScript(dir, "quick", "exit 0");
    const ctl = new AbortController();
    const runner = newRunner({ maxInFlight: 2 });
    const results = await Promise.all(Array.from({ length: 20 }, () => runner.run({ path: hook, signal: ctl.signal })));
    expect(results.every(hookSucceeded)).toBe(true);
    expect(getEventListeners(ctl.signal, "abort")).toHaveLength(0);
  });

  it("a spec the runner cannot use is a result, and its place in flight is given back", async () => {
    const log = memoryLog();
    const runner = newRunner({ log, maxInFlight: 1 });
    const hook = hookScript(dir, "fine", "exit 0");
    const spec = {
      path: hook,
      get stdin(): string {
        throw new Error("no stdin for you");
      },
    };
    const bad = await runner.run(spec);
    expect(bad).toMatchObject({ kind: "spawn-error", code: "EINVAL" });
    expect(log.lines[0]).toBe(`error: hook ${hook}: invalid hook spec: no stdin for you`);
    expect(hookSucceeded(await runner.run({ path: hook }))).toBe(true);
    expect(runner.inFlight).toBe(0);
  });
});

describe("hook runner with spawn helpers", () => {
  let dir: string;
  let cleanup: () => void;
  beforeEach(() => ({ dir, cleanup } = hookDir()));
  afterEach(() => cleanup());

  it("hooks are children of a helper process, not of the daemon; the helper ends with close()", async () => {
    const runner = new HookRunner({ spawnHelpers: 1 });
    const hook = hookScript(dir, "parent", "echo $PPID");
    const r = await runner.run({ path: hook });
    expect(hookSucceeded(r)).toBe(true);
    const [helper] = runner.spawnHelperPids;
    expect(helper).toBeDefined();
    expect(Number((r as HookRan).stdout.trim())).toBe(helper);
    expect(helper).not.toBe(process.pid);
    // one helper serves every run
    await runner.run({ path: hook });
    expect(runner.spawnHelperPids).toEqual([helper]);
    await runner.close();
    expect(await dead(helper!)).toBe(true);
  });

  it("a helper that dies fails its running hooks with a clear error, kills their groups, and is replaced", async () => {
    const log = memoryLog();
    const runner = new HookRunner({ spawnHelpers: 1, log });
    const hook = hookScript(dir, "wait", `sleep 1000 & echo $! > "${dir}/gc.pid"; echo $$ > "${dir}/$1.pid"; wait`);
    let started: number | undefined;
    const running = runner.run({ path: hook, args: ["a"], name: "probe", onSpawn: (p) => (started = p) });
    const pid = await pidFrom(join(dir, "a.pid"));
    // the helper has told us the pid (before that, its death would leave the hook unknown)
    await until(() => started === pid, "the helper to report the pid");
    const gc = await pidFrom(join(dir, "gc.pid"));
    const [helper] = runner.spawnHelperPids;
    process.kill(helper!, "SIGKILL");
    const r = await running;
    expect(r).toMatchObject({ kind: "spawn-error", code: "EHELPERLOST" });
    expect((r as { reason: string }).reason).toBe(
      `the spawn helper process ${helper} was killed by SIGKILL while the hook ran (pid ${pid}, its process group sent SIGKILL)`,
    );
    expect(await dead(pid)).toBe(true);
    expect(await dead(gc)).toBe(true);
    expect(log.lines).toContain(`error: hook probe (${hook}): lost: ${(r as { reason: string }).reason}`);
    // the next run gets a new helper and works
    const quick = hookScript(dir, "quick", "echo fine");
    expect(await runner.run({ path: quick })).toMatchObject({ kind: "exited", exitCode: 0, stdout: "fine\n" });
    expect(runner.spawnHelperPids).toHaveLength(1);
    expect(runner.spawnHelperPids[0]).not.toBe(helper);
    await runner.close();
  });
});
