/**
 * The daemon's side of the privileged launcher (a multi-user instance, docs/site.md): starts
 * the keeper (launcher-keeper.ts) as root with two pipes as its only channel, before the
 * daemon drops its rights, and from then on is the local executor's UserLauncher.
 *
 * While the launcher is down (not yet synchronised, or dead and being restarted by its
 * keeper) requests wait in order, so no job starts and none is lost; a task whose start was
 * in flight when it died fails with an `exec` exception (it is not known to have started),
 * and the tasks already running are handed to the executor's /proc watch (`lost`) and
 * adopted by the next launcher, with every job's authorisation sent again.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { EventEmitter } from "node:events";
import { fileURLToPath } from "node:url";
import { ErrorCode, JobtapError } from "../../errors.js";
import { LauncherHooks, type HookProcessStarter } from "./launcher-hook-client.js";
import { lineReader, parseMessage, type LauncherAnswer, type LauncherRequest } from "./launcher-proto.js";
import type { TaskHandle, UserLauncher } from "./run-as.js";

export interface LauncherClientOptions {
  /** Lets the launcher start jobs of uid 0 (`[exec] allow-root`). */
  allowRoot: boolean;
  /** The argvs the launcher may run as root: perilog's prolog and epilog commands. */
  rootHooks?: readonly (readonly string[])[];
  log: (level: "info" | "warn" | "error", message: string) => void;
}

/** The launcher as the daemon holds it. */
export interface LauncherClient extends UserLauncher {
  /** The current launcher's pid (undefined while there is none). */
  readonly pid: number | undefined;
  /** Resolves once the first launcher answers; rejects if the keeper ends first. */
  ready(): Promise<void>;
  /** Closes the channel: the launcher and its keeper exit; running tasks run on. */
  close(): void;
  /** Runs hook programs as `uid` for `job` (f58; "" with uid 0: a root hook). */
  hookStarter(job: string, uid: number): HookProcessStarter;
}

/** A task the launcher started (or is starting) for us. */
class RemoteTask extends EventEmitter implements TaskHandle {
  pid: number | undefined;
  starttime: number | undefined;
  constructor(
    readonly job: string,
    readonly uid: number,
    readonly setupFailed: (why: string) => void,
  ) {
    super();
  }
}

/** Starts the keeper (and through it the launcher): call as root, before dropping rights. */
export function startLauncherClient(opts: LauncherClientOptions): LauncherClient {
  const keeperPath = fileURLToPath(new URL("./launcher-keeper.js", import.meta.url));
  const roots = opts.rootHooks?.length ? [`--root-hooks=${Buffer.from(JSON.stringify(opts.rootHooks)).toString("base64")}`] : [];
  const keeper = spawn(process.execPath, [keeperPath, ...(opts.allowRoot ? ["--allow-root"] : []), ...roots], { stdio: ["pipe", "pipe", "inherit"] });
  return new Client(keeper, opts);
}

class Client implements LauncherClient {
  readonly canSwitchUsers = true;
  readonly deferred = true;
  readonly refusesRoot: boolean;
  pid: number | undefined;
  private up = false;
  private everUp = false;
  private closed = false;
  private syncN = 0;
  private nextReq = 1;
  private readonly waiting: LauncherRequest[] = [];
  private readonly starting = new Map<number, RemoteTask>();
  /** Running tasks by request number: their exit comes from the launcher. */
  private readonly running = new Map<number, RemoteTask>();
  /** Tasks a dead launcher started, still running until their job ends: adopted again. */
  private readonly orphans = new Set<RemoteTask>();
  private readonly authorised = new Map<string, number>();
  /** Jobs the executor authorised (its tasks); a hook's hold does not end theirs. */
  private readonly forTasks = new Set<string>();
  /** Hook runs in flight per job: its authorisation stays until the last ends. */
  private readonly hookHolds = new Map<string, number>();
  private readonly hooks = new LauncherHooks({
    nextReq: () => this.nextReq++,
    send: (m) => this.send(m),
    hold: (job, uid) => this.hold(job, uid),
    unhold: (job) => this.unhold(job),
  });
  private readonly readyP: Promise<void>;
  private readyCb: { ok: () => void; fail: (e: Error) => void } = { ok: () => undefined, fail: () => undefined };

  constructor(
    private readonly keeper: ChildProcess,
    private readonly opts: LauncherClientOptions,
  ) {
    this.refusesRoot = !opts.allowRoot;
    this.readyP = new Promise((ok, fail) => (this.readyCb = { ok, fail }));
    this.readyP.catch(() => undefined);
    keeper.stdout!.on("data", lineReader((t) => this.onLine(t)));
    keeper.stdin!.on("error", () => undefined);
    keeper.on("error", (e) => this.keeperGone(`cannot start it: ${e.message}`));
    keeper.on("exit", (code, signal) => this.keeperGone(signal ? `killed by ${signal}` : `exited with status ${code}`));
  }

  ready(): Promise<void> {
    return this.readyP;
  }

  spawn(uid: number, task: Parameters<UserLauncher["spawn"]>[1], setupFailed: (why: string) => void): TaskHandle {
    const job = task.job ?? "";
    const h = new RemoteTask(job, uid, setupFailed);
    const req = this.nextReq++;
    this.starting.set(req, h);
    const { argv, cwd, env, stdout, stderr, umask, stdin } = task;
    this.send({ op: "start", req, job, uid, argv: [...argv], cwd, env, stdout, stderr, ...(umask === undefined ? {} : { umask }), ...(stdin === undefined ? {} : { stdin }) });
    return h;
  }

  signal(pid: number, starttime: number | undefined, signal: NodeJS.Signals | number): void {
    this.send({ op: "signal", pid, starttime, signal });
  }

  authorise(job: string, uid: number): void {
    this.forTasks.add(job);
    this.authorised.set(job, uid);
    this.send({ op: "authorise", job, uid });
  }

  forget(job: string): void {
    for (const t of this.orphans) if (t.job === job) this.orphans.delete(t);
    this.forTasks.delete(job);
    if (this.hookHolds.has(job) || !this.authorised.delete(job)) return;
    this.send({ op: "forget", job });
  }

  hookStarter(job: string, uid: number): HookProcessStarter {
    return this.hooks.starter(job, uid);
  }

  /** A hook of `job` runs as `uid` (the job's user, as the manager records it). */
  private hold(job: string, uid: number): void {
    this.hookHolds.set(job, (this.hookHolds.get(job) ?? 0) + 1);
    if (this.authorised.get(job) === uid) return;
    this.authorised.set(job, uid);
    this.send({ op: "authorise", job, uid });
  }

  private unhold(job: string): void {
    const n = (this.hookHolds.get(job) ?? 1) - 1;
    if (n > 0) return void this.hookHolds.set(job, n);
    this.hookHolds.delete(job);
    if (this.forTasks.has(job) || !this.authorised.delete(job)) return;
    this.send({ op: "forget", job });
  }

  adopt(job: string, uid: number, tasks: ReadonlyArray<{ pid: number; starttime: number }>): void {
    if (tasks.length > 0) this.send({ op: "adopt", job, uid, tasks: [...tasks] });
  }

  close(): void {
    this.closed = true;
    this.keeper.stdin!.end();
  }

  private send(m: LauncherRequest): void {
    if (this.up) this.keeper.stdin!.write(`${JSON.stringify(m)}\n`);
    else this.waiting.push(m);
  }

  private onLine(text: string): void {
    const m = parseMessage<LauncherAnswer>(text);
    if (!m) return;
    switch (m.op) {
      case "launcher":
        this.pid = m.pid;
        // A newline first: whatever a dead launcher left half-read ends before the sync line.
        this.keeper.stdin!.write(`\n${JSON.stringify({ op: "sync", n: ++this.syncN })}\n`);
        return;
      case "synced":
        if (m.n === this.syncN) this.synced();
        return;
      case "died":
        return this.died(`launcher pid ${m.pid} ${m.why}`);
      case "log":
        return this.opts.log(m.level, m.message);
      default:
        return this.answer(m);
    }
  }

  private answer(m: Extract<LauncherAnswer, { req: number }>): void {
    if (this.hooks.has(m.req)) return this.hooks.answer(m);
    if (m.op === "exit") {
      const h = this.running.get(m.req);
      this.running.delete(m.req);
      h?.emit("close", m.code, m.signal);
      return;
    }
    if (m.op === "setup") {
      // Found once running as the user: after `spawned`, before `exit`.
      (this.running.get(m.req) ?? this.starting.get(m.req))?.setupFailed(m.why);
      return;
    }
    const h = this.starting.get(m.req);
    if (!h) return;
    if (m.op === "error") {
      this.starting.delete(m.req);
      h.emit("error", Object.assign(new Error(m.message), m.code === undefined ? {} : { code: m.code }));
    } else if (m.op === "spawned") {
      this.starting.delete(m.req);
      h.pid = m.pid;
      h.starttime = m.starttime;
      this.running.set(m.req, h);
      h.emit("spawn");
    }
  }

  /** The launcher answers: re-authorise, re-adopt the running tasks, then what waited. */
  private synced(): void {
    const restarted = this.everUp;
    this.up = this.everUp = true;
    const w = (m: LauncherRequest) => this.keeper.stdin!.write(`${JSON.stringify(m)}\n`);
    if (restarted) {
      for (const [job, uid] of this.authorised) w({ op: "authorise", job, uid });
      for (const t of this.orphans) w({ op: "adopt", job: t.job, uid: t.uid, tasks: [{ pid: t.pid!, starttime: t.starttime ?? 0 }] });
    }
    for (const m of this.waiting.splice(0)) w(m);
    this.opts.log("info", restarted ? `launcher pid ${this.pid} started again; starting jobs again` : `launcher pid ${this.pid} ready`);
    this.readyCb.ok();
  }

  /** The launcher is gone: jobs wait; starts in flight fail; running tasks are watched. */
  private died(why: string): void {
    this.up = false;
    this.pid = undefined;
    if (this.closed) return;
    this.opts.log("error", `${why}: no job starts until it is back; its keeper starts it again`);
    for (const h of this.starting.values()) {
      h.emit("error", new JobtapError(ErrorCode.INTERNAL, "the launcher died while starting this task (it may not have started)"));
    }
    this.starting.clear();
    this.hooks.lostAll(`${why} while the hook ran`);
    for (const h of this.running.values()) {
      this.orphans.add(h);
      h.emit("lost");
    }
    this.running.clear();
  }

  private keeperGone(why: string): void {
    const wasUp = this.up;
    this.died(`launcher keeper ${why}`);
    if (!this.closed) this.opts.log("error", "the launcher's keeper is gone: no job can start until the daemon is restarted");
    if (!wasUp) this.readyCb.fail(new JobtapError(ErrorCode.INTERNAL, `the privileged launcher did not start: keeper ${why}`));
  }
}
