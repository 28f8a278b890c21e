/**
 * perilog (loadable by name, not a builtin): job-manager prolog and epilog commands run as
 * real processes (spec flux-jobtap §11).
 *
 * - Prolog: at `job.state.run` the plugin subscribes to the job, starts the command and
 *   posts `prolog-start`, which holds the exec start until `prolog-finish`. A failure
 *   (exit code, signal, time limit) raises a fatal `prolog` exception; the epilog still
 *   runs, its `epilog-start` posted before `prolog-finish` so the job cannot go straight to
 *   INACTIVE.
 * - A fatal exception during the prolog (e.g. a cancel) terminates it when
 *   `cancel-on-exception` is set (the prolog default): SIGTERM, then SIGKILL after
 *   `kill-timeout`. So a job stuck in a prolog can always be cancelled (Flux #3994).
 * - Epilog: at `job.event.finish`, holding `free` until `epilog-finish`. A failure raises a
 *   non-fatal `epilog` exception (severity 2).
 */
import { constants, hostname } from "node:os";
import type { ConfigCheck, EventArgs, JobArgs, JobId, PluginContext } from "jobtap/plugin";
import { HookRunner, formatJobId } from "jobtap/plugin";
import { checkWith } from "../common/config.js";
import { queryConf, readPerilogConfig, type PerilogConfig } from "./config.js";
import { PerilogProc, type ProcExit } from "./proc.js";

const PROLOG = "job-manager.prolog";
const EPILOG = "job-manager.epilog";

/** Flux's wording of a failed prolog/epilog, or undefined on success. */
export function failureNote(name: string, x: ProcExit, host: string): string | undefined {
  const where = `on ${host} (rank 0)`;
  if (x.spawnError !== undefined) return `${name} could not be started ${where}: ${x.spawnError}`;
  if (x.state === "timeout") return `${name} timed out ${where}`;
  if (x.state === "canceled") return x.killed ? `${name} canceled then timed out ${where}` : undefined;
  if (x.signal !== null) return `${name} killed by signal ${constants.signals[x.signal] ?? x.signal} ${where}`;
  if (x.code !== 0) return `${name} exited with code=${x.code} ${where}`;
  return undefined;
}

/** A wait status for the `*-finish` event: exit code << 8, or the signal number. */
function waitStatus(x: ProcExit): number {
  if (x.signal !== null) return constants.signals[x.signal] ?? 1;
  if (x.code === null) return 1 << 8;
  return x.code << 8;
}

/** The plugin's state: configuration and the one running process per job. */
class Perilog {
  cfg: PerilogConfig = { prolog: undefined, epilog: undefined, logIgnore: [] };
  readonly procs = new Map<JobId, PerilogProc>();
  /** Jobs whose prolog failed: their epilog starts from the exception callback. */
  private readonly prologFailed = new Set<JobId>();
  private readonly host = hostname();

  readonly runner: HookRunner;

  constructor(private readonly p: PluginContext) {
    this.runner = new HookRunner({ plugin: "perilog", clock: p.clock, log: p.log, maxInFlight: Infinity, users: p.hookUsers });
  }

  private spawn(id: JobId, userid: number, which: "prolog" | "epilog", done: (x: ProcExit) => void): void {
    const c = this.cfg[which]!;
    const proc = new PerilogProc({
      name: which,
      command: c.command,
      env: { FLUX_JOB_ID: formatJobId(id), JOBTAP_JOB_ID: formatJobId(id), FLUX_JOB_USERID: String(userid) },
      clock: this.p.clock,
      runner: this.runner,
      timeoutMs: c.timeout * 1000,
      killTimeoutMs: c.killTimeout * 1000,
      onLine: (stream, line) => this.logLine(id, which, stream, line),
      onExit: (x) => {
        this.procs.delete(id);
        this.guard(id, () => done(x));
      },
    });
    this.procs.set(id, proc);
  }

  private logLine(id: JobId, which: string, stream: string, line: string): void {
    if (line.trim() === "" || this.cfg.logIgnore.some((r) => r.test(line))) return;
    this.p.log.info(`${formatJobId(id)}: ${which}: ${stream}: ${line}`);
  }

  /** Process exits happen outside callbacks: a refused call is logged, never thrown. */
  private guard(id: JobId, fn: () => void): void {
    try {
      fn();
    } catch (e) {
      this.p.log.error(`${formatJobId(id)}: ${(e as Error).message}`);
    }
  }

  /** `job.state.run`: subscribe (for the epilog) and start the prolog if configured. */
  onRun(job: JobArgs): void {
    if (this.cfg.prolog === undefined && this.cfg.epilog === undefined) return;
    this.p.subscribe(job.id);
    if (this.cfg.prolog === undefined) return;
    this.spawn(job.id, job.userid, "prolog", (x) => {
      const why = failureNote("prolog", x, this.host);
      if (why !== undefined) {
        this.prologFailed.add(job.id);
        this.p.raiseException(job.id, "prolog", 0, why);
      }
      this.p.prologFinish(job.id, PROLOG, waitStatus(x));
    });
    this.p.prologStart(job.id, PROLOG);
  }

  /** Starts the epilog; only inside a callback for the job, in CLEANUP. */
  startEpilog(job: EventArgs): void {
    if (this.cfg.epilog === undefined || this.procs.has(job.id)) return;
    this.spawn(job.id, job.userid, "epilog", (x) => {
      const why = failureNote("epilog", x, this.host);
      if (why !== undefined) this.p.raiseException(job.id, "epilog", 2, why);
      this.p.epilogFinish(job.id, EPILOG, waitStatus(x));
    });
    this.p.epilogStart(job.id, EPILOG);
  }

  /** A fatal exception: the failed prolog's epilog, or cancel a running process. */
  onException(job: EventArgs): void {
    if (job.entry.context?.severity !== 0) return;
    if (this.prologFailed.delete(job.id)) {
      this.startEpilog(job);
      return;
    }
    const proc = this.procs.get(job.id);
    if (proc !== undefined && this.cfg[proc.name]?.cancelOnException) proc.cancel();
  }

  query(): Record<string, unknown> {
    const procs = [...this.procs].map(([id, proc]) => [
      formatJobId(id),
      {
        name: proc.name,
        state: proc.state,
        total: 1,
        active: 1,
        active_ranks: "0",
        remaining_time: (proc.remainingMs() ?? 0) / 1000,
      },
    ]);
    return { conf: { prolog: queryConf(this.cfg.prolog), epilog: queryConf(this.cfg.epilog) }, procs: Object.fromEntries(procs) };
  }
}

/** What conf.update would refuse in `[job-manager.prolog]`/`[job-manager.epilog]`. */
export const checkConfig: ConfigCheck = checkWith(readPerilogConfig);

/** Registers the perilog topics and plugin.query. */
export default function perilog(p: PluginContext): void {
  const pl = new Perilog(p);
  p.on("conf.update", ({ conf }) => {
    try {
      pl.cfg = readPerilogConfig(conf);
    } catch (e) {
      return p.reject((e as Error).message);
    }
    return undefined;
  });
  p.on("job.state.run", (job) => pl.onRun(job));
  p.on("job.event.exception", (job) => pl.onException(job));
  p.on("job.event.finish", (job) => pl.startEpilog(job));
  p.on("plugin.query", () => pl.query());
  // Processes of a removed plugin are terminated rather than left behind.
  p.onRemove(() => {
    for (const proc of pl.procs.values()) proc.cancel();
    void pl.runner.close();
  });
}
