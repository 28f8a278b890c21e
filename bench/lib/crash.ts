/**
 * The crash campaign (issue 21), shared by `npm run bench -- crash` and its short version
 * in the test suite. One run: a real daemon (`bin/jobtap daemon`, its own process) on a
 * fresh statedir, loaded by concurrent clients — raw socket clients submitting single jobs
 * and batches, jobs depending (afterok) on earlier ones, cancels and urgency changes in
 * flight, and CLI processes (`jobtap submit --cc`) — running real processes. At a random
 * moment the daemon is SIGKILLed, restarted on the same statedir, and checked:
 *
 * - lost: an acknowledged job the restarted daemon does not know;
 * - inconsistent: a job whose state differs from the fold of its own eventlog;
 * - stuck: an acknowledged job not INACTIVE within the deadline after the restart;
 * - ran_twice: a job whose command started more than once (each start appends the job id
 *   to a file);
 * - orphaned: a process of the run still alive once every job is inactive and the daemon
 *   has stopped;
 * - deps_broken: a job that ran although the job it depended on (afterok) did not succeed.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { connectDaemon, type DaemonClient } from "../../src/server/client.js";
import { newJobCore, transition } from "../../src/manager/core/transition.js";
import type { EventEntry, Jobspec } from "../../src/manager/port/records.js";

/** bin/jobtap of this checkout, from the source (tests) or from dist/bench/lib (the bench). */
const BIN = [new URL("../../bin/jobtap", import.meta.url), new URL("../../../bin/jobtap", import.meta.url)]
  .map((u) => fileURLToPath(u))
  .find((p) => existsSync(p))!;

export interface CrashFigures {
  runs: number;
  acknowledged: number;
  lost: number;
  inconsistent: number;
  stuck: number;
  orphaned: number;
  ran_twice: number;
  deps_broken: number;
  /** What went wrong, for a human (ids and reasons), at most a few per run. */
  problems: string[];
}

export interface CrashOptions {
  /** Load before the kill: a random moment in [minMs, maxMs]. */
  minMs: number;
  maxMs: number;
  /** Concurrent socket clients; one CLI client runs besides them. */
  clients: number;
  /** How long jobs may take to finish after the restart. */
  settleMs: number;
  log?: (line: string) => void;
}

export const DEFAULT_CRASH: CrashOptions = { minMs: 300, maxMs: 2500, clients: 6, settleMs: 60_000 };

/** A job running `sh`: records its start, then sleeps 0..0.3 s (or fails, when asked). */
function shellJob(runs: string, sleep: number, fail: boolean, dependsOn?: string): Jobspec {
  const system: Record<string, unknown> = {
    duration: 0,
    cwd: tmpdir(),
    environment: { PATH: process.env.PATH ?? "/usr/bin:/bin" },
  };
  if (dependsOn !== undefined) system.dependencies = [{ scheme: "afterok", value: dependsOn }];
  return {
    version: 1,
    resources: [{ type: "slot", count: 1, label: "task", with: [{ type: "core", count: 1 }] }],
    tasks: [{ command: ["sh", "-c", `echo "$JOBTAP_JOB_ID" >> '${runs}'; sleep ${sleep.toFixed(2)}; exit ${fail ? 1 : 0}`], slot: "task", count: { per_slot: 1 } }],
    attributes: { system },
  };
}

function startDaemon(statedir: string, config: string): ChildProcess {
  const env: NodeJS.ProcessEnv = { ...process.env, JOBTAP_SOCKET: join(statedir, "jobtap.sock") };
  delete env.NODE_OPTIONS;
  return spawn(process.execPath, [BIN, "daemon", "--statedir", statedir, "--config", config], { env, stdio: ["ignore", "ignore", "pipe"] });
}

async function waitReady(client: DaemonClient, child: ChildProcess, what: string): Promise<void> {
  const end = Date.now() + 30_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`${what}: the daemon exited (${child.exitCode})`);
    try {
      await client.call("ping", {});
      return;
    } catch {
      if (Date.now() > end) throw new Error(`${what}: the daemon did not answer within 30 s`);
      await new Promise((r) => setTimeout(r, 50));
    }
  }
}

/** The state a job's eventlog folds to (the manager's own transition rules). */
function foldState(events: EventEntry[]): string | undefined {
  let core = newJobCore(0n as never, {} as Jobspec);
  for (const e of events) {
    const r = transition(core, e);
    if (!r.ok) return undefined;
    core = r.job;
  }
  return core.state;
}

/** Pids of live processes whose command line holds `marker`. */
function processesWith(marker: string): number[] {
  const pids: number[] = [];
  for (const p of readdirSync("/proc")) {
    if (!/^\d+$/.test(p) || Number(p) === process.pid) continue;
    try {
      if (readFileSync(`/proc/${p}/cmdline`, "utf8").includes(marker)) pids.push(Number(p));
    } catch {
      // gone meanwhile
    }
  }
  return pids;
}

const rand = (n: number) => Math.floor(Math.random() * n);

/** One run: load, SIGKILL, restart, check. */
export async function crashRun(o: CrashOptions = DEFAULT_CRASH): Promise<CrashFigures> {
  const log = o.log ?? (() => undefined);
  const dir = mkdtempSync(join(tmpdir(), "jobtap-crash-"));
  const statedir = join(dir, "state");
  const runs = join(dir, "runs.log");
  const config = join(dir, "crash.toml");
  writeFileSync(config, "[resources]\ncores = 4\n[job-manager]\nbatch-window = \"5ms\"\n");
  writeFileSync(runs, "");
  const f: CrashFigures = { runs: 1, acknowledged: 0, lost: 0, inconsistent: 0, stuck: 0, orphaned: 0, ran_twice: 0, deps_broken: 0, problems: [] };
  const acked: string[] = [];
  const dependsOn = new Map<string, string>();
  let daemon = startDaemon(statedir, config);
  let client = connectDaemon(join(statedir, "jobtap.sock"));
  try {
    await waitReady(client, daemon, "start");
    let loading = true;
    const worker = async () => {
      const c = connectDaemon(join(statedir, "jobtap.sock"));
      try {
        while (loading) {
          const roll = rand(10);
          if (roll < 5) {
            const n = roll < 2 ? 1 + rand(8) : 1;
            const spec = shellJob(runs, Math.random() * 0.3, rand(8) === 0);
            const { ids } = await c.call("submit", { jobspecs: Array.from({ length: n }, () => spec as never) });
            acked.push(...ids);
          } else if (roll < 7 && acked.length > 0) {
            const parent = acked[rand(acked.length)]!;
            const { ids } = await c.call("submit", { jobspecs: [shellJob(runs, Math.random() * 0.2, false, parent) as never] });
            for (const id of ids) dependsOn.set(id, parent);
            acked.push(...ids);
          } else if (roll < 8 && acked.length > 0) {
            await c.call("cancel", { ids: [acked[rand(acked.length)]!] } as never).catch(() => undefined);
          } else if (acked.length > 0) {
            await c.call("urgency", { id: acked[rand(acked.length)]!, urgency: 1 + rand(16) } as never).catch(() => undefined);
          }
        }
      } catch {
        // the daemon was killed under us: what was acknowledged is recorded
      } finally {
        c.close();
      }
    };
    const cli = async () => {
      while (loading) {
        const out = await new Promise<string>((resolve) => {
          const env: NodeJS.ProcessEnv = { ...process.env, JOBTAP_SOCKET: join(statedir, "jobtap.sock") };
          delete env.NODE_OPTIONS;
          const p = spawn(process.execPath, [BIN, "submit", "--cc", `1-${1 + rand(5)}`, "sh", "-c", `echo "$JOBTAP_JOB_ID" >> '${runs}'; sleep 0.1`], { env, stdio: ["ignore", "pipe", "ignore"] });
          let text = "";
          p.stdout.on("data", (d) => (text += d.toString()));
          p.on("close", () => resolve(text));
        });
        acked.push(...out.split(/\s+/).filter((t) => t.length > 0));
      }
    };
    const load = [...Array.from({ length: o.clients }, worker), cli()];
    await new Promise((r) => setTimeout(r, o.minMs + rand(o.maxMs - o.minMs)));
    daemon.kill("SIGKILL");
    await new Promise((r) => daemon.once("exit", r));
    loading = false;
    await Promise.all(load);
    client.close();
    f.acknowledged = new Set(acked).size;
    log(`killed with ${f.acknowledged} acknowledged`);

    daemon = startDaemon(statedir, config);
    let daemonLog = "";
    daemon.stderr!.on("data", (d) => (daemonLog += d.toString()));
    client = connectDaemon(join(statedir, "jobtap.sock"));
    await waitReady(client, daemon, "restart");

    const ids = [...new Set(acked)];
    const present: string[] = [];
    for (const id of ids) {
      try {
        await client.call("info", { id });
        present.push(id);
      } catch (e) {
        f.lost++;
        if (f.problems.length < 5) f.problems.push(`${id}: lost (${(e as Error).message})`);
      }
    }
    const end = Date.now() + o.settleMs;
    let pending = present;
    while (pending.length > 0 && Date.now() < end) {
      const next: string[] = [];
      for (const id of pending) if ((await client.call("info", { id })).job.state !== "INACTIVE") next.push(id);
      pending = next;
      if (pending.length > 0) await new Promise((r) => setTimeout(r, 100));
    }
    f.stuck = pending.length;
    for (const id of pending.slice(0, 3)) f.problems.push(`${id}: stuck in ${(await client.call("info", { id })).job.state}`);
    const eventlogs = new Map<string, EventEntry[]>();
    for (const id of present) {
      const { job } = await client.call("info", { id });
      const { eventlog } = await client.call("eventlog", { id });
      eventlogs.set(id, eventlog);
      const folded = foldState(eventlog);
      if (folded !== job.state) {
        f.inconsistent++;
        if (f.problems.length < 10) f.problems.push(`${id}: state ${job.state}, eventlog folds to ${folded ?? "an invalid sequence"}`);
      }
    }
    const starts = new Map<string, number>();
    for (const line of readFileSync(runs, "utf8").split("\n")) if (line) starts.set(line, (starts.get(line) ?? 0) + 1);
    for (const [id, n] of starts) {
      if (n > 1) {
        f.ran_twice++;
        if (f.problems.length < 10) f.problems.push(`${id}: started ${n} times`);
      }
    }
    const succeeded = (id: string) => eventlogs.get(id)?.some((e) => e.name === "finish" && e.context?.status === 0) ?? false;
    for (const [child, parent] of dependsOn) {
      const ran = eventlogs.get(child)?.some((e) => e.name === "alloc") ?? false;
      if (ran && !succeeded(parent)) {
        f.deps_broken++;
        if (f.problems.length < 10) f.problems.push(`${child}: ran though ${parent} (afterok) did not succeed`);
      }
    }
    client.close();
    daemon.kill("SIGTERM");
    await new Promise((r) => daemon.once("exit", r));
    await new Promise((r) => setTimeout(r, 200));
    const left = processesWith(runs);
    f.orphaned = left.length;
    for (const pid of left) {
      if (f.problems.length < 10) f.problems.push(`pid ${pid} left running`);
      try {
        process.kill(pid, "SIGKILL");
      } catch {
        // gone
      }
    }
    if (f.problems.length > 0 && daemonLog) log(daemonLog.split("\n").filter((l) => /error|warn/i.test(l)).slice(0, 5).join("\n"));
    return f;
  } finally {
    client.close();
    if (daemon.exitCode === null) daemon.kill("SIGKILL");
    for (const pid of processesWith(runs)) {
      try {
        process.kill(pid, "SIGKILL");
      } catch {
        // gone
      }
    }
    if (existsSync(dir)) rmSync(dir, { recursive: true, force: true });
  }
}

/** Sums the figures of several runs. */
export function addFigures(a: CrashFigures, b: CrashFigures): CrashFigures {
  return {
    runs: a.runs + b.runs,
    acknowledged: a.acknowledged + b.acknowledged,
    lost: a.lost + b.lost,
    inconsistent: a.inconsistent + b.inconsistent,
    stuck: a.stuck + b.stuck,
    orphaned: a.orphaned + b.orphaned,
    ran_twice: a.ran_twice + b.ran_twice,
    deps_broken: a.deps_broken + b.deps_broken,
    problems: [...a.problems, ...b.problems].slice(0, 30),
  };
}
