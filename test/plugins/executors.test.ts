/**
 * Pluggable executors: a plugin-registered executor runs real jobs end to end and is
 * reattached after a restart (real SQLite store in a temp dir); the registry's edges
 * (unknown names, throwing executors, misuse of registerExecutor, plugin removal).
 */
import { existsSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { RealClock, SimulatedClock } from "../../src/manager/base/clock.js";
import type { ExecJob, ExecReport, Executor } from "../../src/manager/port/executor.js";
import type { JobId } from "../../src/manager/base/ids.js";
import { createJobManager, type JobManager } from "../../src/manager/manager.js";
import type { Jobspec } from "../../src/manager/port/records.js";
import type { PluginContext } from "../../src/plugins/context.js";
import { parseToml, type BuiltinEntry, type JobtapHost } from "../../src/plugins/index.js";
import { BUILTINS, jobtapPlugins } from "../../plugins-builtin/index.js";
import { jobspec, tempDir } from "../manager/helpers.js";
import { fixture } from "./helpers.js";

const cleanups: Array<() => void | Promise<void>> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

function batchJob(dir: string, script: string, cores = 1): Jobspec {
  const js = jobspec(["sh", "-c", script], { cwd: dir }, { cores });
  js.attributes.user = { batch: true };
  return js;
}

async function until(cond: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 1000; i++) {
    if (cond()) return;
    await new Promise((r) => setTimeout(r, 10));
  }
  throw new Error(`timed out waiting for ${what}`);
}

describe("a plugin-registered executor (test/fixtures/plugins/batch-executor.ts)", () => {
  async function start(dir: string, withPlugin: boolean): Promise<{ mgr: JobManager; logs: string[] }> {
    const load = withPlugin ? `{ load = ${JSON.stringify(fixture("batch-executor.ts"))}, conf = { dir = ${JSON.stringify(dir)} } }` : "";
    const config = parseToml(`[job-manager]\nplugins = [ ${load} ]\n`);
    const logs: string[] = [];
    const mgr = await createJobManager({
      statedir: dir,
      store: "sqlite",
      clock: new RealClock(),
      batchWindowMs: 1,
      resources: { cores: 1 },
      config,
      plugins: jobtapPlugins({ config, log: (l, m) => void logs.push(`${l}: ${m}`) }),
      log: (l, m) => void logs.push(`${l}: ${m}`),
    });
    return { mgr, logs };
  }

  it("runs a job end to end, with the allocation it supplies, and reattaches after a restart", async () => {
    const { dir, cleanup } = tempDir();
    cleanups.push(cleanup);
    const a = await start(dir, true);
    cleanups.push(() => a.mgr.close());
    // 4 cores on a 1-core pool: only the plugin's own allocation lets it run.
    const failed = await a.mgr.submit(batchJob(dir, "exit 3", 4));
    expect(await a.mgr.wait(failed)).toMatchObject({ result: "FAILED", errstr: "task(s) exited with exit code 3" });
    const log = a.mgr.eventlog(failed);
    expect(log.find((e) => e.name === "jobspec-update")?.context).toEqual({ "attributes.system.exec.name": "batch" });
    expect(log.find((e) => e.name === "alloc")?.context).toMatchObject({ bypass: true });
    expect(a.mgr.execEventlog(failed).find((e) => e.name === "exec-state")?.context).toMatchObject({ batch: { statusFile: expect.any(String), pid: expect.any(Number) } });
    expect(log.map((e) => e.name).slice(-5)).toEqual(["start", "finish", "release", "free", "clean"]);

    const running = await a.mgr.submit(batchJob(dir, "while [ ! -e go ]; do sleep 0.01; done; exit 0"));
    await until(() => a.mgr.eventlog(running).some((e) => e.name === "start"), "start");
    await a.mgr.close();

    const b = await start(dir, true);
    cleanups.push(() => b.mgr.close());
    expect(b.mgr.job(running).state).toBe("RUN");
    expect(b.logs.some((l) => l.includes("executor batch: reattaching"))).toBe(true);
    writeFileSync(join(dir, "go"), "");
    expect(await b.mgr.wait(running)).toMatchObject({ result: "COMPLETED" });
    expect(b.mgr.eventlog(running).filter((e) => e.name === "start")).toHaveLength(1);
    await b.mgr.close();
  });

  it("a job whose executor is not registered after a restart ends with an exception naming it", async () => {
    const { dir, cleanup } = tempDir();
    cleanups.push(cleanup);
    const a = await start(dir, true);
    cleanups.push(() => a.mgr.close());
    const id = await a.mgr.submit(batchJob(dir, "while [ ! -e go ]; do sleep 0.01; done"));
    await until(() => a.mgr.eventlog(id).some((e) => e.name === "start"), "start");
    const pid = (a.mgr.execEventlog(id).find((e) => e.name === "exec-state")!.context!.batch as { pid: number }).pid;
    cleanups.push(() => {
      try {
        process.kill(-pid, "SIGKILL"); // nobody watches the orphaned shell any more
      } catch {
        // already gone
      }
    });
    await a.mgr.close();

    const b = await start(dir, false);
    cleanups.push(() => b.mgr.close());
    const r = await b.mgr.wait(id);
    expect(r.result).toBe("FAILED");
    expect(r.errstr).toMatch(/type=exec executor "batch" is not registered after a restart/);
    expect(existsSync(join(dir, "go"))).toBe(false);
    expect(() => process.kill(pid, 0)).not.toThrow(); // its work was left running, as the exception says
  });
});

/** A manager on the simulated clock whose builtins include `extra` plugins. */
async function simWith(extra: Record<string, (p: PluginContext) => void>, cores = 1) {
  const clock = new SimulatedClock();
  const logs: string[] = [];
  const builtins: BuiltinEntry[] = [
    ...BUILTINS,
    ...Object.entries(extra).map(([name, setup]) => ({ name: `.${name}` as const, load: async () => ({ default: setup }) })),
  ];
  let host: JobtapHost | undefined;
  const factory = jobtapPlugins({ builtins, config: {}, log: (l, m) => void logs.push(`${l}: ${m}`) });
  const mgr = await createJobManager({
    store: "memory",
    clock,
    owner: 1000,
    resources: { cores },
    plugins: async (m) => (host = await factory(m)),
    log: (l, m) => void logs.push(`${l}: ${m}`),
  });
  cleanups.push(() => mgr.close());
  const submit = async (js: Jobspec): Promise<JobId> => {
    const p = mgr.submit(js, { userid: 1000 });
    await clock.advance(20);
    return p;
  };
  return { mgr, clock, logs, host: host!, submit };
}

function named(name: unknown, command = ["true"]): Jobspec {
  return jobspec(command, { exec: { name } });
}

describe("the executor registry", () => {
  it("a name nobody registered is an exec exception naming it; the job ends and frees its cores", async () => {
    const s = await simWith({});
    const lost = await s.submit(named("lsf"));
    const r = await s.mgr.wait(lost);
    expect(r).toMatchObject({ result: "FAILED" });
    expect(r.errstr).toMatch(/type=exec executor "lsf" is not registered$/);
    expect(s.mgr.eventlog(lost).map((e) => e.name)).not.toContain("start");
    const bad = await s.submit(named(42));
    expect((await s.mgr.wait(bad)).errstr).toMatch(/attributes\.system\.exec\.name: 42 is not an executor name/);
    // The one core came back: a test-executor job runs.
    const next = await s.submit(jobspec(["true"], { exec: { test: { run_duration: "1s" } } }));
    await s.clock.advance(1000);
    expect((await s.mgr.wait(next)).result).toBe("COMPLETED");
  });

  it("an executor that throws (or rejects) ends that job with an exception; the manager goes on", async () => {
    const s = await simWith({
      boom: (p) => {
        p.registerExecutor("boom", { start: () => { throw new Error("kaboom"); }, kill: () => undefined, reattach: () => undefined });
        p.registerExecutor("later", { start: async () => { throw new Error("no cluster"); }, kill: () => undefined, reattach: () => undefined });
      },
    });
    const a = await s.submit(named("boom"));
    expect((await s.mgr.wait(a)).errstr).toMatch(/type=exec executor "boom": start failed: kaboom/);
    const b = await s.submit(named("later"));
    await s.clock.advance(1);
    expect((await s.mgr.wait(b)).errstr).toMatch(/type=exec executor "later": start failed: no cluster/);
    expect(s.logs.some((l) => l.includes("executor boom: start failed: kaboom"))).toBe(true);
  });

  it("reports are checked: only the executor running a job may report on it", async () => {
    let report: ExecReport | undefined;
    const jobs: ExecJob[] = [];
    const s = await simWith({
      mine: (p) => {
        p.registerExecutor("mine", {
          start(job, r) {
            report = r;
            jobs.push(job);
            r.start(job.id);
          },
          kill(id) {
            report!.finish(id, 15);
            report!.release(id);
          },
          reattach: () => undefined,
        });
      },
    }, 2);
    const other = await s.submit(jobspec(["true"], { exec: { test: { run_duration: "1h" } } }));
    const mine = await s.submit(named("mine"));
    expect(s.mgr.job(mine).state).toBe("RUN");
    expect(jobs[0]).toMatchObject({ id: mine, duration: 0, saved: {} });
    report!.finish(other, 0);
    expect(s.logs.some((l) => l.includes(`executor mine: finish for job`) && l.includes("which it does not run"))).toBe(true);
    expect(s.mgr.job(other).state).toBe("RUN");
    s.mgr.cancel(mine);
    expect((await s.mgr.wait(mine)).result).toBe("CANCELED");
    report!.finish(mine, 0); // after release: ignored
    expect(s.logs.filter((l) => l.includes("which it does not run"))).toHaveLength(2);
  });

  it("a release right after a finish is checked like any report: it ends only the job it names, if bound", async () => {
    let report: ExecReport | undefined;
    const s = await simWith({
      pair: (p) => {
        p.registerExecutor("pair", {
          start(job, r) {
            report = r;
            r.start(job.id);
          },
          kill: () => undefined,
          reattach: () => undefined,
        });
      },
    }, 3);
    const other = await s.submit(jobspec(["true"], { exec: { test: { run_duration: "1h" } } }));
    const a = await s.submit(named("pair"));
    const b = await s.submit(named("pair"));
    expect([a, b].map((id) => s.mgr.job(id).state)).toEqual(["RUN", "RUN"]);
    report!.finish(a, 0);
    report!.release(other); // not this executor's job: ignored, `a` stays unreleased
    expect(s.logs.some((l) => l.includes("executor pair: release for job") && l.includes("which it does not run"))).toBe(true);
    expect(s.mgr.job(other).state).toBe("RUN");
    expect(s.mgr.job(a).state).toBe("CLEANUP");
    report!.finish(b, 0);
    report!.release(a);
    report!.release(b);
    await s.clock.advance(1);
    expect((await s.mgr.wait(a)).result).toBe("COMPLETED");
    expect((await s.mgr.wait(b)).result).toBe("COMPLETED");
    expect(s.mgr.eventlog(a).filter((e) => e.name === "release")).toHaveLength(1);
    expect(s.mgr.job(other).state).toBe("RUN");
  });

  it("nothing saved is one shared frozen {}: an executor writing to it fails that job only", async () => {
    const seen: Array<Record<string, unknown>> = [];
    const s = await simWith({
      scribble: (p) => {
        p.registerExecutor("scribble", {
          start(job, r) {
            seen.push({ ...job.saved });
            (job.saved as Record<string, unknown>).mark = job.id;
            r.start(job.id);
          },
          kill: () => undefined,
          reattach: () => undefined,
        });
      },
    });
    const a = await s.submit(named("scribble"));
    expect((await s.mgr.wait(a)).errstr).toMatch(/type=exec executor "scribble": start failed: .*not extensible/);
    const b = await s.submit(named("scribble"));
    expect((await s.mgr.wait(b)).result).toBe("FAILED");
    expect(seen).toEqual([{}, {}]);
  });

  it("registerExecutor: setup only, names are unique, removal unregisters (running jobs keep it)", async () => {
    const calls: string[] = [];
    const ex: Executor = {
      start: (job, r) => {
        calls.push("start");
        r.start(job.id);
      },
      kill: () => undefined,
      reattach: () => undefined,
      close: () => void calls.push("close"),
    };
    let ctx: PluginContext | undefined;
    const s = await simWith({}, 2);
    await s.host.loadDefinition("dup", (p: PluginContext) => {
      ctx = p;
      p.registerExecutor("x", ex);
    });
    expect(() => ctx!.registerExecutor("y", ex)).toThrow(expect.objectContaining({ code: "PLUGIN_PHASE" }));
    await expect(s.host.loadDefinition("taken", (p: PluginContext) => p.registerExecutor("local", ex))).rejects.toThrow(
      /plugin taken: registerExecutor: executor "local" is already registered by the job manager/,
    );
    const running = await s.submit(named("x"));
    expect(s.mgr.job(running).state).toBe("RUN");
    s.host.remove("dup");
    const after = await s.submit(named("x"));
    expect((await s.mgr.wait(after)).errstr).toMatch(/executor "x" is not registered/);
    expect(calls).toEqual(["start"]);
    expect(s.mgr.job(running).state).toBe("RUN");
    // Unregistered, yet still running a job: closed with the manager.
    await s.mgr.close();
    expect(calls).toEqual(["start", "close"]);
  });

  it("a plugin loaded again takes over the jobs its earlier instance ran (reattach with what was saved)", async () => {
    const calls: string[] = [];
    const make = (tag: string): Executor => ({
      start(job, r) {
        r.save(job.id, { remote: `R-${tag}` });
        r.start(job.id);
      },
      kill: () => void calls.push(`kill ${tag}`),
      reattach(job, r) {
        calls.push(`reattach ${tag} ${String(job.saved.remote)} started=${job.startedAt !== undefined}`);
        r.finish(job.id, 0);
        r.release(job.id);
      },
      close: () => void calls.push(`close ${tag}`),
    });
    const s = await simWith({}, 2);
    await s.host.loadDefinition("remote", (p: PluginContext) => p.registerExecutor("remote", make("one")));
    const id = await s.submit(named("remote"));
    expect(s.mgr.job(id).state).toBe("RUN");
    s.host.remove("remote");
    expect(s.mgr.job(id).state).toBe("RUN");
    await s.host.loadDefinition("remote", (p: PluginContext) => p.registerExecutor("remote", make("two")));
    await s.clock.advance(1);
    expect(calls).toEqual(["reattach two R-one started=true", "close one"]);
    expect((await s.mgr.wait(id)).result).toBe("COMPLETED");
  });
});
