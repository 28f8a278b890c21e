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
import type { EventArgs, JobId, PluginContext } from "jobtap/plugin";
import { formatJobId } from "jobtap/plugin";
import { queryConf, readPerilogConfig, type PerilogConf, type PerilogConfig } from "./config.js";
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

/** Registers the perilog topics and plugin.query. */
export default function perilog(p: PluginContext): void {
  let cfg: PerilogConfig = { prolog: undefined, epilog: undefined, logIgnore: [] };
  const procs = new Map<JobId, PerilogProc>();
  /** Jobs whose prolog failed: their epilog starts from the exception callback. */
  const prologFailed = new Set<JobId>();
  const host = hostname();

  p.on("conf.update", ({ conf }) => {
    try {
      cfg = readPerilogConfig(conf);
    } catch (e) {
      return p.reject((e as Error).message);
    }
    return undefined;
  });

  const spawn = (id: JobId, userid: number, which: "prolog" | "epilog", c: PerilogConf, done: (x: ProcExit) => void) => {
    const proc = new PerilogProc({
      name: which,
      command: c.command,
      env: { FLUX_JOB_ID: formatJobId(id), JOBTAP_JOB_ID: formatJobId(id), FLUX_JOB_USERID: String(userid) },
      clock: p.clock,
      timeoutMs: c.timeout * 1000,
      killTimeoutMs: c.killTimeout * 1000,
      onLine: (stream, line) => {
        if (line.trim() === "" || cfg.logIgnore.some((r) => r.test(line))) return;
        p.log.info(`${formatJobId(id)}: ${which}: ${stream}: ${line}`);
      },
      onExit: (x) => {
        procs.delete(id);
        done(x);
      },
    });
    procs.set(id, proc);
    return proc;
  };

  /** Runs the epilog; call only inside a callback for the job, in CLEANUP. */
  const startEpilog = (job: EventArgs): void => {
    const c = cfg.epilog;
    if (c === undefined || procs.has(job.id)) return;
    spawn(job.id, job.userid, "epilog", c, (x) => {
      const why = failureNote("epilog", x, host);
      guard(job.id, () => {
        if (why !== undefined) p.raiseException(job.id, "epilog", 2, why);
        p.epilogFinish(job.id, EPILOG, waitStatus(x));
      });
    });
    p.epilogStart(job.id, EPILOG);
  };

  const guard = (id: JobId, fn: () => void): void => {
    try {
      fn();
    } catch (e) {
      p.log.error(`${formatJobId(id)}: ${(e as Error).message}`);
    }
  };

  p.on("job.state.run", (job) => {
    if (cfg.prolog === undefined && cfg.epilog === undefined) return;
    p.subscribe(job.id);
    const c = cfg.prolog;
    if (c === undefined) return;
    spawn(job.id, job.userid, "prolog", c, (x) => {
      const why = failureNote("prolog", x, host);
      guard(job.id, () => {
        if (why !== undefined) {
          prologFailed.add(job.id);
          p.raiseException(job.id, "prolog", 0, why);
        }
        p.prologFinish(job.id, PROLOG, waitStatus(x));
      });
    });
    p.prologStart(job.id, PROLOG);
  });

  p.on("job.event.exception", (job) => {
    const ctx = job.entry.context ?? {};
    if (ctx.severity !== 0) return;
    if (prologFailed.delete(job.id)) {
      startEpilog(job);
      return;
    }
    const proc = procs.get(job.id);
    const c = proc === undefined ? undefined : cfg[procName(proc)];
    if (proc !== undefined && c?.cancelOnException) proc.cancel();
  });

  p.on("job.event.finish", (job) => startEpilog(job));

  p.on("plugin.query", () => ({
    conf: { prolog: queryConf(cfg.prolog), epilog: queryConf(cfg.epilog) },
    procs: Object.fromEntries(
      [...procs].map(([id, proc]) => [
        formatJobId(id),
        {
          name: procName(proc),
          state: proc.state,
          total: 1,
          active: 1,
          active_ranks: "0",
          remaining_time: (proc.remainingMs() ?? 0) / 1000,
        },
      ]),
    ),
  }));

  p.onRemove(() => {
    for (const proc of procs.values()) proc.cancel();
  });
}

function procName(proc: PerilogProc): "prolog" | "epilog" {
  return proc.name;
}
