/**
 * The jobtap daemon: the job manager with its plugin host, a SQLite store in the statedir,
 * and the socket server, plus a clean shutdown.
 *
 * Start order: statedir (0700) and its lock → configuration (refused with every problem
 * named by TOML path) → the socket must be free → job manager (store replay, plugins,
 * restart callbacks) → socket server. Shutdown: stop accepting, pause scheduling so nothing
 * new starts, settle running jobs per `[daemon] shutdown`, flush and close the store.
 */
import { chmodSync, chownSync, existsSync, lstatSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { ErrorCode, JobtapError } from "../errors.js";
import { createJobManager, type JobManager } from "../manager/manager.js";
import type { JobId } from "../manager/base/ids.js";
import { RealClock, type TimerHandle } from "../manager/base/clock.js";
import type { JobtapHost } from "../plugins/index.js";
import { jobtapPlugins } from "../../plugins-builtin/index.js";
import { defaultConfig, loadConfigFile, type DaemonConfig, type DaemonSettings } from "./config.js";
import { assertSocketFree, startSocketServer, type SocketServer } from "./server.js";
import { createReloader, type ReloadOutcome } from "./reload.js";
import { createHandlers } from "./service.js";
import { containPluginFaults, type PluginFile } from "./faults.js";
import { packageVersion } from "../version.js";
import { startLauncherClient, type LauncherClient } from "../manager/exec/launcher-client.js";
import { serviceUser, dropPrivileges, prepareSocketDir } from "./service-user.js";
import type { PasswdEntry } from "../manager/exec/run-as.js";
import { openTokenStore } from "./http/tokens.js";
import { startHttpListener, type HttpListener } from "./http/listener.js";
import { rateLimiter } from "./http/ratelimit.js";
import { openapiDocument } from "./http/openapi.js";
import { loginCodes } from "./http/login.js";
import { browsableUrl, staticSite } from "./http/static.js";
import { earlyHookRuns, startLiveData } from "./http/live.js";
import { createMetrics, type Metrics } from "./http/metrics.js";

export interface DaemonOptions {
  statedir: string;
  configPath?: string;
  /** Wins over `[daemon] socket`. */
  socketPath?: string;
  env: Record<string, string | undefined>;
  /** One readable log line (no trailing newline). */
  log: (line: string) => void;
  /** The instance owner's uid (job manager and `p.owner`); default: this process's uid. */
  owner?: number;
  /** The dashboard's built files (tests); default: dist/web beside the compiled daemon. */
  webRoot?: string;
}

/** A running daemon. */
export interface Daemon {
  readonly socketPath: string;
  readonly manager: JobManager;
  /** The loaded plugins, builtins included (to attribute faults to them). */
  plugins(): PluginFile[];
  /** Re-reads the `--config` file (SIGHUP, `jobtap config reload`); see reload.ts. */
  reload(): Promise<ReloadOutcome>;
  /** Stops the daemon (idempotent); resolves once the store is closed. */
  shutdown(reason: string): Promise<void>;
}

/** sun_path is 108 bytes on Linux, including the terminating NUL. */
const MAX_SOCKET_PATH = 107;

/** Grace beyond the executor's SIGTERM→SIGKILL delay before shutdown stops waiting. */
const KILL_GRACE_MS = 10_000;

/**
 * Starts a daemon; throws (CONFIG, STORE_OPEN, ...) if it cannot, having cleaned up and
 * logged why (so a caller that only needs the exit status may drop the error).
 */
export async function startDaemon(opts: DaemonOptions): Promise<Daemon> {
  const log = leveled(opts.log, opts.env.JOBTAP_DEBUG !== undefined);
  let launcher: LauncherClient | undefined;
  try {
    const config = opts.configPath === undefined ? defaultConfig() : loadConfigFile(opts.configPath, opts.env);
    if (opts.configPath !== undefined) log("info", `configuration ${opts.configPath} accepted`);
    // A multi-user instance: the service user must exist and we must be root to become it.
    const service = config.settings.user === undefined ? undefined : serviceUser(config.settings.user);
    prepareStatedir(opts.statedir, log, service);
    const socketPath = opts.socketPath ?? config.settings.socket ?? join(opts.statedir, "jobtap.sock");
    checkSocketPathLength(socketPath);
    await assertSocketFree(socketPath);
    if (service) {
      prepareSocketDir(socketPath, service);
      launcher = startLauncherClient({ allowRoot: config.settings.allowRoot, rootHooks: perilogCommands(config.raw), log: (level, message) => log(level, message) });
      await launcher.ready();
      dropPrivileges(service);
      log("info", `multi-user instance: running as ${service.name} (uid ${service.uid}); jobs start through launcher pid ${launcher.pid}`);
    }
    const unlock = lockStatedir(opts.statedir);
    try {
      return await launch(opts, config, socketPath, log, unlock, launcher, service);
    } catch (e) {
      unlock();
      throw e;
    }
  } catch (e) {
    launcher?.close();
    log("error", `cannot start: ${(e as Error).message}`);
    throw e;
  }
}

/**
 * The statedir holds every job's jobspec (environments included): it is created mode 0700,
 * an existing one is tightened to 0700, and one owned by another user is refused (its
 * owner could read or replace the store under the daemon).
 */
function prepareStatedir(statedir: string, log: Leveled, service?: PasswdEntry): void {
  const made = mkdirSync(statedir, { recursive: true, mode: 0o700 }) !== undefined;
  // A multi-user instance's statedir is the service user's: made for it, never taken over.
  if (made && service) chownSync(statedir, service.uid, service.gid);
  const st = lstatSync(statedir);
  const me = service?.uid ?? process.geteuid?.() ?? 0;
  if (!st.isDirectory()) {
    throw new JobtapError(ErrorCode.INVALID_ARGUMENT, `statedir ${statedir} is not a directory`, { statedir });
  }
  if (st.uid !== me) {
    throw new JobtapError(
      ErrorCode.PERMISSION_DENIED,
      `statedir ${statedir} is owned by uid ${st.uid}, not by the daemon's user (uid ${me}); refusing to use it`,
      { statedir },
    );
  }
  if ((st.mode & 0o077) !== 0) {
    chmodSync(statedir, 0o700);
    log("info", `statedir ${statedir} was mode ${(st.mode & 0o777).toString(8)}; tightened to 700`);
  }
}

function checkSocketPathLength(socketPath: string): void {
  const bytes = Buffer.byteLength(socketPath);
  if (bytes > MAX_SOCKET_PATH) {
    throw new JobtapError(
      ErrorCode.INVALID_ARGUMENT,
      `socket path ${socketPath} is ${bytes} bytes, longer than a Unix socket allows (${MAX_SOCKET_PATH}); use --socket with a shorter path`,
    );
  }
}

async function launch(
  opts: DaemonOptions,
  config: DaemonConfig,
  socketPath: string,
  log: Leveled,
  unlock: () => void,
  launcher: LauncherClient | undefined,
  service: PasswdEntry | undefined,
): Promise<Daemon> {
  const s = config.settings;
  let host: JobtapHost | undefined;
  // One owner for both: the manager's guest rules and the plugins' `p.owner` must agree.
  const owner = opts.owner ?? service?.uid ?? process.getuid?.() ?? 0;
  // The dashboard's statistics count hook runs from the first (a cron probe at plugin load).
  const early = s.http === undefined ? undefined : earlyHookRuns();
  const plugins = jobtapPlugins({
    config: config.raw,
    env: opts.env,
    owner,
    ...(launcher ? { hookLauncher: launcher } : {}),
    // A plugin's messages already start with its name (`NAME: ...`, `plugin NAME: ...`).
    log: (level, message) => log(level, message),
  });
  const manager = await createJobManager({
    statedir: opts.statedir,
    owner,
    store: "sqlite",
    config: config.raw,
    log: (level, message) => log(level, message),
    plugins: async (port) => (host = await plugins(port)),
    ...(launcher ? { launcher } : {}),
    ...managerOptions(s),
  });
  let accepting = true;
  const tokens = openTokenStore(opts.statedir);
  let webUrl: string | undefined;
  // The dashboard's feed and last-hour statistics exist only where a browser can read them.
  const live = s.http === undefined ? undefined : startLiveData(manager, () => host, early);
  const reload = createReloader({
    configPath: opts.configPath,
    env: opts.env,
    host: () => host,
    log,
    // The slots' START/RANK follow the file (their layout does not change without a restart).
    applied: (settings) => {
      manager.hostAds.setPolicy(settings.slotPolicy ?? []);
      manager.periodic.setSystem(settings.systemPeriodic ?? {}, settings.periodicExprIntervalMs ?? 60_000);
    },
  });
  const handlers = createHandlers({
    reload,
    manager,
    host: () => host,
    version: packageVersion(),
    startedAt: Date.now(),
    accepting: () => accepting,
    log: (level, message) => log(level, message),
    tokens,
    web: { codes: loginCodes(), owner, url: () => webUrl, live: () => live },
  });
  log("info", `plugins: ${host?.list({ all: true }).map((p) => p.name).join(" ") ?? "(no host)"}`);
  let server: SocketServer;
  try {
    server = await startSocketServer({
      socketPath,
      handlers,
      maxRequestBytes: s.maxRequestBytes,
      maxConnections: s.maxConnections,
      ...(s.connectionsPerUser === undefined ? {} : { connectionsPerUser: s.connectionsPerUser }),
      owner,
      guests: s.guests,
      log: (l) => log("warn", l),
    });
  } catch (e) {
    live?.stop();
    await manager.close();
    throw e;
  }
  let http: HttpListener | undefined;
  let metrics: Metrics | undefined;
  if (s.http !== undefined) {
    const version = packageVersion();
    // Metrics exist only where something can scrape them: with the listener.
    metrics = createMetrics(manager, () => host, early?.runs);
    early?.stop();
    const deps = { handlers, tokens, owner, maxBytes: s.maxRequestBytes, limiter: rateLimiter(s.http.rateLimit), metricsPublic: s.http.metricsPublic, metrics, openapi: () => openapiDocument(version), site: staticSite(opts.webRoot) };
    try {
      http = await startHttpListener(s.http, deps, (l) => log("warn", l));
    } catch (e) {
      await server.close();
      live?.stop();
      await manager.close();
      throw new JobtapError(ErrorCode.CONFIG, `[daemon].http: cannot listen on ${s.http.host}:${s.http.port}: ${(e as Error).message}`);
    }
    log("info", `http: listening on ${http.url}${deps.site.files === 0 ? " (the web dashboard is not built)" : ""}`);
    webUrl = browsableUrl(http.url);
  }
  log("info", `ready: socket ${socketPath}, statedir ${opts.statedir}, config ${config.source}, ${manager.jobCount()} jobs in the store`);
  let stopping: Promise<void> | undefined;
  const shutdown = (reason: string) => {
    stopping ??= (async () => {
      accepting = false;
      log("info", `shutting down (${reason}): no longer accepting connections`);
      // Each step runs whatever the one before it did: a failure is logged, never allowed
      // to leave running jobs unsettled or the store open (shutdown never hangs on it).
      const failed = [
        await step(log, "closing the socket", () => server.close()),
        await step(log, "closing the http listener", async () => {
          await http?.close();
          metrics?.stop();
          live?.stop();
        }),
        await step(log, "settling running jobs", () => settleRunningJobs(manager, s, log)),
        await step(log, "closing the store", () => manager.close()),
        await step(log, "closing the launcher", async () => launcher?.close()),
      ].filter((ok) => !ok).length;
      unlock();
      if (failed === 0) log("info", "store flushed and closed; stopped");
      else log("warn", `stopped; ${failed} shutdown steps failed (logged above)`);
    })();
    return stopping;
  };
  return { socketPath, manager, reload, shutdown, plugins: () => host?.list({ all: true }) ?? [] };
}

/** Runs one shutdown step; logs its failure instead of throwing. Resolves true if it succeeded. */
async function step(log: Leveled, what: string, run: () => Promise<void>): Promise<boolean> {
  try {
    await run();
    return true;
  } catch (e) {
    log("error", `shutdown: ${what} failed: ${(e as Error).message}`);
    return false;
  }
}

function managerOptions(s: DaemonSettings) {
  return {
    ...(s.resources ? { resources: s.resources } : {}),
    ...(s.slots ? { slots: s.slots } : {}),
    ...(s.slotPolicy ? { slotPolicy: s.slotPolicy } : {}),
    ...(s.systemPeriodic ? { systemPeriodic: s.systemPeriodic } : {}),
    ...(s.periodicExprIntervalMs !== undefined ? { periodicExprIntervalMs: s.periodicExprIntervalMs } : {}),
    ...(s.queueDepth !== undefined ? { queueDepth: s.queueDepth } : {}),
    ...(s.batchWindowMs !== undefined ? { batchWindowMs: s.batchWindowMs } : {}),
    ...(s.inactiveAgeLimitMs !== undefined ? { inactiveAgeLimit: s.inactiveAgeLimitMs / 1000 } : {}),
    ...(s.inactiveNumLimit !== undefined ? { inactiveNumLimit: s.inactiveNumLimit } : {}),
    ...(s.limits ? { limits: s.limits } : {}),
  };
}

/**
 * Running jobs at shutdown. Scheduling is paused first (pending requests stay queued in
 * SCHED, so nothing new starts; they are scheduled again at restart). "wait" gives running
 * jobs `shutdown-timeout` to finish; whatever still runs is then cancelled, and the exec's
 * kill and the job's cleanup are recorded before the store closes.
 */
async function settleRunningJobs(m: JobManager, s: DaemonSettings, log: Leveled): Promise<void> {
  m.pauseScheduling();
  const running = () => m.jobs({ states: ["RUN", "CLEANUP"] }).map((j) => j.id);
  if (s.shutdown === "wait" && running().length > 0) {
    log("info", `waiting up to ${s.shutdownTimeoutMs / 1000}s for ${running().length} running jobs`);
    await waitAll(m, running(), s.shutdownTimeoutMs);
  }
  const left = m.jobs({ states: ["RUN"] }).map((j) => j.id);
  if (left.length > 0) log("info", `cancelling ${left.length} running jobs`);
  for (const id of left) {
    try {
      m.cancel(id, { note: "jobtap daemon shutdown" });
    } catch (e) {
      log("warn", `cancel at shutdown: ${(e as Error).message}`);
    }
  }
  const unfinished = await waitAll(m, running(), KILL_GRACE_MS);
  if (unfinished > 0) log("warn", `${unfinished} jobs did not finish cleanup; their state is recorded as is`);
}

/** Waits for the jobs to become inactive or for `ms`; returns how many are still active. */
async function waitAll(m: JobManager, ids: JobId[], ms: number): Promise<number> {
  // The real clock: a shutdown-timeout of weeks must not overflow a Node timer.
  const clock = new RealClock();
  let timer: TimerHandle | undefined;
  const timeout = new Promise<void>((r) => (timer = clock.setTimeout(r, ms)));
  const done = Promise.all(ids.map((id) => m.wait(id).catch(() => undefined)));
  await Promise.race([done, timeout]);
  if (timer) clock.clearTimeout(timer);
  return m.jobs({ states: ["RUN", "CLEANUP"] }).length;
}

/**
 * One daemon per statedir: a lock file holding the pid. A lock whose process is gone (a
 * SIGKILLed daemon) is taken over.
 */
function lockStatedir(statedir: string): () => void {
  const lock = join(statedir, "jobtap.lock");
  if (existsSync(lock)) {
    const pid = Number(readFileSync(lock, "utf8").trim());
    if (Number.isInteger(pid) && pid > 0 && alive(pid)) {
      throw new JobtapError(ErrorCode.INVALID_ARGUMENT, `statedir ${statedir} is in use by daemon pid ${pid}`, { statedir });
    }
  }
  writeFileSync(lock, `${process.pid}\n`, { mode: 0o600 });
  return () => rmSync(lock, { force: true });
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === "EPERM";
  }
}

type Level = "debug" | "info" | "warn" | "error";
type Leveled = (level: Level, message: string) => void;

function leveled(write: (line: string) => void, debug: boolean): Leveled {
  return (level, message) => {
    if (level === "debug" && !debug) return;
    write(`${new Date().toISOString()} jobtap[${process.pid}] ${level}: ${message}`);
  };
}

/**
 * Runs a daemon until SIGTERM or SIGINT, then shuts it down; SIGHUP reloads the config.
 * Resolves with the exit status: 0 after a clean shutdown.
 */
export async function runDaemonUntilSignal(opts: DaemonOptions): Promise<number> {
  const daemon = await startDaemon(opts);
  const log = leveled(opts.log, false);
  // The reloader logs the outcome; a refused reload leaves the daemon running as it was.
  const hup = () => void daemon.reload().catch(() => undefined);
  process.on("SIGHUP", hup);
  let fatal: ((err: unknown) => void) | undefined;
  const uncontain = containPluginFaults(daemon.plugins, log, (err) => fatal?.(err));
  const reason = await new Promise<string>((resolve) => {
    const on = (sig: NodeJS.Signals) => {
      // Only the first signal shuts down cleanly; a second one gets the default (death).
      process.off("SIGTERM", on);
      process.off("SIGINT", on);
      resolve(sig);
    };
    process.on("SIGTERM", on);
    process.on("SIGINT", on);
    fatal = () => resolve("an uncaught exception in jobtap itself");
  });
  process.off("SIGHUP", hup);
  try {
    await daemon.shutdown(reason);
  } finally {
    uncontain();
  }
  return reason.startsWith("SIG") ? 0 : 1;
}

/**
 * perilog's prolog and epilog commands as the configuration read by root names them: the
 * only programs the launcher runs as root (Flux's IMP likewise runs only its configured
 * prolog); a command changed by a reload is refused until the daemon restarts.
 */
function perilogCommands(raw: Record<string, unknown>): string[][] {
  const jm = raw["job-manager"] as Record<string, { command?: unknown } | undefined> | undefined;
  const out: string[][] = [];
  for (const which of ["prolog", "epilog"]) {
    const cmd = jm?.[which]?.command;
    if (Array.isArray(cmd) && cmd.length > 0 && cmd.every((w) => typeof w === "string")) out.push(cmd as string[]);
  }
  return out;
}
