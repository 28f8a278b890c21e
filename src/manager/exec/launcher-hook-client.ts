/**
 * The daemon's side of hook runs through the privileged launcher (launcher-hooks.ts): a
 * ProcessStarter for the hook runner (src/hooks) that asks the launcher to start the
 * program as a job's user (or root), and feeds the launcher's answers to the runner's
 * Supervisor, which keeps the time limit, caps and result as for any hook. Kills go back
 * to the launcher as `signal` requests: the daemon may not signal another user's processes.
 */
import type { LauncherAnswer, LauncherRequest } from "./launcher-proto.js";

/** The part of a hook run the launcher needs (src/hooks' ProcessRun; the manager may not import it). */
export interface HookProcessRun {
  path: string;
  args: readonly string[];
  env: Readonly<Record<string, string>> | undefined;
  cwd: string | undefined;
  stdin: Uint8Array | undefined;
  stdoutCap: number;
  stderrCap: number;
  onStdout: ((text: string) => void) | undefined;
}

/** The runner's Supervisor, as src/hooks' ProcessEvents declares it. */
export interface HookProcessEvents {
  spawned(pid: number, release: () => void, kill?: (sig: NodeJS.Signals) => void): void;
  failed(e: { code?: string; message?: string }): void;
  output(stream: "stdout" | "stderr", chunk: Buffer): void;
  stdoutEnd(): void;
  exited(code: number | null, signal: NodeJS.Signals | null): void;
  closed(dropped?: { stdout: number; stderr: number }): void;
  lost(reason: string): void;
}

/** src/hooks' ProcessStarter, structurally. */
export interface HookProcessStarter {
  start(run: HookProcessRun, events: HookProcessEvents): void;
}

interface HookRun {
  events: HookProcessEvents;
  job: string;
  pid?: number;
  starttime?: number | undefined;
  exited: boolean;
  released: boolean;
}

type Answer = Extract<LauncherAnswer, { req: number }>;

/** What the hook side needs of the launcher client. */
export interface HookChannel {
  nextReq(): number;
  send(m: LauncherRequest): void;
  /** The job's hook runs as `uid`: authorised at the launcher until `unhold`. */
  hold(job: string, uid: number): void;
  unhold(job: string): void;
}

/** Hook runs in flight through the launcher, by request number. */
export class LauncherHooks {
  private readonly runs = new Map<number, HookRun>();

  constructor(private readonly ch: HookChannel) {}

  /** A starter running hooks as `uid` for `job` (f58; "" and uid 0 for a root hook). */
  starter(job: string, uid: number): HookProcessStarter {
    return { start: (run, events) => this.start(job, uid, run, events) };
  }

  has(req: number): boolean {
    return this.runs.has(req);
  }

  private start(job: string, uid: number, run: HookProcessRun, events: HookProcessEvents): void {
    const req = this.ch.nextReq();
    if (job !== "") this.ch.hold(job, uid);
    this.runs.set(req, { events, job, exited: false, released: false });
    const env: Record<string, string> = {};
    for (const [k, v] of Object.entries(run.env ?? process.env)) if (typeof v === "string") env[k] = v;
    const caps = { stdout: run.onStdout ? null : finite(run.stdoutCap), stderr: finite(run.stderrCap) ?? 0 };
    this.ch.send({
      op: "hook", req, job, uid, path: run.path, args: [...run.args], env, caps,
      ...(run.cwd === undefined ? {} : { cwd: run.cwd }),
      ...(run.stdin === undefined ? {} : { stdin: Buffer.from(run.stdin).toString("base64") }),
    });
  }

  /** One answer about a hook run. */
  answer(m: Answer): void {
    const h = this.runs.get(m.req);
    if (!h) return;
    switch (m.op) {
      case "error":
        this.done(m.req, h);
        return h.events.failed({ code: m.code ?? "EPERM", message: m.message });
      case "spawned":
        h.pid = m.pid;
        h.starttime = m.starttime;
        return h.events.spawned(m.pid, () => this.release(m.req, h), (sig) => this.kill(h, sig));
      case "out":
        if (!h.released) h.events.output(m.stream, Buffer.from(m.data, "base64"));
        return;
      case "hookexit":
        h.exited = true;
        return h.events.exited(m.code, m.signal as NodeJS.Signals | null);
      case "closed":
        this.done(m.req, h);
        if (!h.released) h.events.stdoutEnd();
        return h.events.closed(m.dropped);
      default:
        return;
    }
  }

  /** The launcher died: every hook run through it is lost (the runner says so). */
  lostAll(why: string): void {
    for (const [req, h] of [...this.runs]) {
      this.done(req, h);
      h.exited = true; // its process group is beyond our reach now: no kill requests
      h.events.lost(why);
    }
  }

  /** The group's leftovers are the launcher's to kill once the hook has exited. */
  private kill(h: HookRun, sig: NodeJS.Signals): void {
    if (h.exited || h.pid === undefined) return;
    this.ch.send({ op: "signal", pid: h.pid, starttime: h.starttime, signal: sig });
  }

  /** The runner stops waiting for the output (a process escaped the group and holds the pipes). */
  private release(req: number, h: HookRun): void {
    h.released = true;
    this.done(req, h);
    h.events.closed();
  }

  private done(req: number, h: HookRun): void {
    if (!this.runs.delete(req)) return;
    if (h.job !== "") this.ch.unhold(h.job);
  }
}

function finite(n: number): number | null {
  return Number.isFinite(n) ? n : null;
}
