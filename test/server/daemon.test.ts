/**
 * The daemon in-process: the real job manager with its SQLite store and plugin host behind
 * a real socket, driven through the protocol client.
 */
import { mkdtempSync, rmSync, writeFileSync, existsSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { ErrorCode } from "../../src/errors.js";
import { connectDaemon, type DaemonClient } from "../../src/server/client.js";
import { startDaemon, type Daemon } from "../../src/server/daemon.js";
import type { Jobspec } from "../../src/manager/port/records.js";

const UID = process.getuid?.() ?? 0;

function testJob(runDuration: string, extra: Record<string, unknown> = {}): Jobspec {
  return {
    version: 1,
    resources: [{ type: "slot", count: 1, label: "task", with: [{ type: "core", count: 1 }] }],
    tasks: [{ command: ["true"], slot: "task", count: { per_slot: 1 } }],
    attributes: { system: { duration: 0, cwd: "/tmp", exec: { test: { run_duration: runDuration } }, ...extra } },
  };
}

async function until(cond: () => Promise<boolean>, what: string): Promise<void> {
  const end = Date.now() + 10_000;
  while (!(await cond())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

describe("daemon (in-process)", () => {
  let dir: string;
  let daemon: Daemon | undefined;
  let client: DaemonClient;
  const log: string[] = [];

  const start = async (toml = "[resources]\ncores = 1\n") => {
    writeFileSync(join(dir, "c.toml"), toml);
    daemon = await startDaemon({ statedir: dir, configPath: join(dir, "c.toml"), env: {}, log: (l) => log.push(l) });
    client = connectDaemon(daemon.socketPath);
  };
  const stop = async () => {
    client?.close();
    await daemon?.shutdown("test");
    daemon = undefined;
  };
  const view = async (id: string) => (await client.call("info", { id })).job;

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), "jobtap-daemon-"));
    log.length = 0;
  });
  afterEach(async () => {
    await stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it("submits a counted batch and lists by state, result and priority order", async () => {
    await start();
    const { ids: held } = await client.call("submit", { jobspecs: [testJob("0s")], count: 3, urgency: 0 });
    expect(held).toHaveLength(3);
    const { ids: [fast] } = await client.call("submit", { jobspecs: [testJob("0s")] });
    await client.call("wait", { id: fast as string });
    const { ids: [urgent] } = await client.call("submit", { jobspecs: [testJob("0s")], urgency: 31 });
    await client.call("wait", { id: urgent as string });
    const sched = (await client.call("list", { states: ["SCHED"] })).jobs.map((j) => j.id);
    expect(sched).toEqual(held);
    const completed = (await client.call("list", { states: [], results: ["COMPLETED"] })).jobs.map((j) => j.id);
    expect(completed).toEqual([urgent, fast]);
    expect((await client.call("list", { states: [], results: ["CANCELED"] })).jobs).toEqual([]);
    expect((await client.call("list", { limit: 1 })).jobs).toHaveLength(1);
    const done = await view(fast as string);
    expect(done).toMatchObject({ state: "INACTIVE", result: "COMPLETED", ntasks: 1 });
    expect(done.t_run).toBeGreaterThanOrEqual(done.t_submit);
    expect((await client.call("info", { id: fast as string })).R).toMatchObject({
      version: 1,
      execution: { R_lite: [expect.objectContaining({ rank: "0", children: { core: expect.stringMatching(/^\d+$/) } })] },
    });
  });

  it("list with a limit builds full views only for the rows it returns", async () => {
    await start("[resources]\ncores = 1\n[queues.q0]\n[queues.q1]\n[queues.q2]\n");
    const { ids: [running] } = await client.call("submit", { jobspecs: [testJob("1h", { queue: "q0" })] });
    await until(async () => (await view(running as string)).state === "RUN", "job to run");
    const { ids: held } = await client.call("submit", { jobspecs: [testJob("0s", { queue: "q1" })], count: 40, urgency: 0 });
    const { ids: [urgent] } = await client.call("submit", { jobspecs: [testJob("0s", { queue: "q2" })], urgency: 20 });
    await until(async () => (await view(urgent as string)).state === "SCHED", "job to queue");
    const eventlogReads = vi.spyOn(daemon!.manager, "eventlogAndJobspec");
    const { jobs } = await client.call("list", { limit: 3 });
    // Pending by priority then submit order, then the running job: full views (queue from
    // the jobspec, t_run from the eventlog) for these rows only.
    expect(jobs.map((j) => j.id)).toEqual([urgent, held[0], held[1]]);
    expect(jobs.map((j) => j.queue)).toEqual(["q2", "q1", "q1"]);
    expect(eventlogReads.mock.calls.map(([id]) => id)).toHaveLength(1 + 3);
    const all = (await client.call("list", {})).jobs;
    expect(all).toHaveLength(42);
    expect(all.at(-1)).toMatchObject({ id: running, state: "RUN", queue: "q0" });
    expect(all.at(-1)!.t_run).toBeGreaterThanOrEqual(all.at(-1)!.t_submit);
    eventlogReads.mockRestore();
  });

  it("a lone submission is acknowledged at once, not at the end of the batch window; several in flight share the window's commit", async () => {
    // A window no test waits out: an acknowledgement that waited for it would time out.
    await start('[resources]\ncores = 1\n[job-manager]\nbatch-window = "1h"\n');
    const commits = vi.spyOn(daemon!.manager, "flush");
    const { ids } = await client.call("submit", { jobspecs: [testJob("0s")], urgency: 0 });
    expect(ids).toHaveLength(1);
    const { ids: more } = await client.call("submit", { jobspecs: [testJob("0s")], count: 3, urgency: 0 });
    expect(more).toHaveLength(3);
    expect(commits).toHaveBeenCalledTimes(2);
    // Two at once: neither commits early; the window (here: a flush standing for its end) acks both.
    commits.mockClear();
    const submits = vi.spyOn(daemon!.manager, "submitMany");
    const other = connectDaemon(join(dir, "jobtap.sock"));
    await other.call("ping", {});
    const both = Promise.all([client, other].map((c) => c.call("submit", { jobspecs: [testJob("0s")], urgency: 0 })));
    await until(async () => submits.mock.calls.length === 2, "both admitted");
    await new Promise((r) => setImmediate(r));
    expect(commits).not.toHaveBeenCalled();
    daemon!.manager.flush();
    expect((await both).map((r) => r.ids.length)).toEqual([1, 1]);
    other.close();
  });

  it("list with stream: true sends the same jobs as JSON lines, in chunks past the first 256", async () => {
    await start("[resources]\ncores = 1\n");
    const { ids } = await client.call("submit", { jobspecs: [testJob("0s")], count: 600, urgency: 0 });
    const { jobs } = await client.call("list", {});
    const streamed: unknown[] = [];
    await client.stream("list", { stream: true }, (line) => streamed.push(line));
    expect(jobs).toHaveLength(600);
    expect(streamed).toEqual(jobs);
    expect(jobs.map((j) => j.id)).toEqual(ids);
    // streamText (jobs --json) hands over the lines as sent: the text JSON.stringify gives.
    const texts: string[] = [];
    await client.streamText("list", { stream: true }, (line) => texts.push(line));
    expect(texts).toEqual(jobs.map((j) => JSON.stringify(j)));
    const limited: unknown[] = [];
    await client.stream("list", { stream: true, limit: 300, states: ["SCHED"] }, (line) => limited.push(line));
    expect(limited).toEqual(jobs.slice(0, 300));
    const none: unknown[] = [];
    await client.stream("list", { stream: true, states: ["RUN"] }, (line) => none.push(line));
    expect(none).toEqual([]);
  });

  it("a streamed listing leaves the daemon serving other clients between its chunks", async () => {
    await start("[resources]\ncores = 1\n");
    await client.call("submit", { jobspecs: [testJob("0s")], count: 6000, urgency: 0 });
    const other = connectDaemon(join(dir, "jobtap.sock"));
    await other.call("ping", {});
    // Each listed job's full view is one eventlogAndJobspec call, made as its line is sent.
    const views = vi.spyOn(daemon!.manager, "eventlogAndJobspec");
    let viewsWhenPinged: number | undefined;
    let ping: Promise<unknown> | undefined;
    let rows = 0;
    await client.stream("list", { stream: true }, () => {
      rows++;
      ping ??= other.call("ping", {}).then(() => (viewsWhenPinged = views.mock.calls.length));
    });
    await ping;
    other.close();
    views.mockRestore();
    expect(rows).toBe(6000);
    // The ping was answered while the daemon was still building the listing's rows.
    expect(viewsWhenPinged).toBeLessThan(6000);
  });

  it("returns rejections and bad fields as coded errors naming what was wrong", async () => {
    await start();
    await expect(client.call("submit", { jobspecs: [{ version: 2 } as never] })).rejects.toMatchObject({
      code: ErrorCode.BAD_JOBSPEC,
      message: expect.stringContaining("version"),
    });
    await expect(client.call("urgency", { id: "ƒ2222", urgency: "high" as never })).rejects.toMatchObject({
      code: ErrorCode.PROTOCOL,
      message: "urgency: urgency must be an integer",
    });
    await expect(client.call("submit", { jobspecs: [testJob("0s"), testJob("0s")], count: 2 })).rejects.toMatchObject({
      message: "submit: count needs exactly one jobspec",
    });
    await expect(client.call("info", { id: "ƒ2222222" })).rejects.toMatchObject({ code: ErrorCode.UNKNOWN_JOB });
    await expect(client.call("plugin.remove", { name: "nothing-here" })).rejects.toMatchObject({ code: ErrorCode.PLUGIN_NOT_FOUND });
  });

  it("streams an eventlog until clean", async () => {
    await start();
    const { ids: [id] } = await client.call("submit", { jobspecs: [testJob("0.2s")] });
    const names: string[] = [];
    await client.stream("eventlog", { id: id as string, follow: true }, (e) => names.push((e as { name: string }).name));
    expect(names[0]).toBe("submit");
    expect(names).toContain("finish");
    expect(names.at(-1)).toBe("clean");
    const plain = (await client.call("eventlog", { id: id as string })).eventlog.map((e) => e.name);
    expect(plain).toEqual(names);
  });

  it("shutdown 'kill' cancels running jobs, keeps pending ones unstarted, and frees the statedir", async () => {
    await start();
    const { ids: [running] } = await client.call("submit", { jobspecs: [testJob("1h")] });
    await until(async () => (await view(running as string)).state === "RUN", "job to run");
    const { ids: [pending] } = await client.call("submit", { jobspecs: [testJob("0s")] });
    await until(async () => (await view(pending as string)).state === "SCHED", "job to wait");
    await stop();
    expect(existsSync(join(dir, "jobtap.sock"))).toBe(false);
    expect(existsSync(join(dir, "jobtap.lock"))).toBe(false);
    expect(log.some((l) => l.includes("cancelling 1 running jobs"))).toBe(true);

    await start();
    expect(await view(running as string)).toMatchObject({
      result: "CANCELED",
      exception: { type: "cancel", note: "jobtap daemon shutdown" },
    });
    // The pending job never got resources from the stopping daemon.
    const events = (await client.call("eventlog", { id: pending as string })).eventlog.map((e) => e.name);
    const restart = events.indexOf("flux-restart");
    expect(restart).toBeGreaterThan(0);
    expect(events.slice(0, restart)).not.toContain("alloc");
  });

  it("shutdown 'wait' lets running jobs finish but starts nothing new", async () => {
    await start(`[resources]\ncores = 2\n[daemon]\nshutdown = "wait"\nshutdown-timeout = "20s"\n`);
    const { ids: [short, long] } = await client.call("submit", { jobspecs: [testJob("0.1s"), testJob("0.6s")] });
    await until(async () => (await view(long as string)).state === "RUN", "jobs to run");
    const { ids: [next] } = await client.call("submit", { jobspecs: [testJob("0s")] });
    await until(async () => (await view(next as string)).state === "SCHED", "job to queue");
    await stop();
    await start();
    for (const id of [short, long]) expect(await view(id as string)).toMatchObject({ state: "INACTIVE", result: "COMPLETED" });
    // The core the short job freed during the grace period was not handed to the queued job.
    const events = (await client.call("eventlog", { id: next as string })).eventlog.map((e) => e.name);
    const restart = events.indexOf("flux-restart");
    expect(restart).toBeGreaterThan(0);
    expect(events.slice(0, restart)).not.toContain("alloc");
  });

  it("refuses a second daemon on the same statedir or socket, and an over-long socket path", async () => {
    await start();
    await expect(startDaemon({ statedir: dir, env: {}, log: () => undefined })).rejects.toThrow(
      `another daemon is already serving ${join(dir, "jobtap.sock")}`,
    );
    await expect(
      startDaemon({ statedir: dir, socketPath: join(dir, "other.sock"), env: {}, log: () => undefined }),
    ).rejects.toThrow(`statedir ${dir} is in use by daemon pid ${process.pid}`);
    await expect(
      startDaemon({ statedir: join(dir, "x"), socketPath: join(dir, "s".repeat(120)), env: {}, log: () => undefined }),
    ).rejects.toThrow("longer than a Unix socket allows");
  });
});
