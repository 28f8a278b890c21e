/**
 * One hook process from spawn to its last byte of output: argv without a shell, its own
 * process group, stdin written and closed, stdout/stderr captured up to their caps, the time
 * limit and abort as SIGTERM then SIGKILL to the whole group.
 *
 * Why a process group: a hook is often a shell script whose children (a `sleep`, a `curl`)
 * would outlive a kill aimed at the script alone and keep its pipes open. The hook is spawned
 * detached (setsid: pgid = its pid) and every kill goes to -pgid. When the hook itself
 * exits, any process left in its group gets SIGKILL — HTCondor kills a hook's leftover
 * process family when it reaps the hook, and so do we. (A process that leaves the group with
 * setsid escapes this; its hold on our pipes ends after the kill grace period.)
 *
 * The process is started either here (`spawnDirect`) or by a spawn helper process
 * (spawn-helper.ts); either way one Supervisor owns the timers, kills and capture, so the
 * guarantees are the same.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { StringDecoder } from "node:string_decoder";
import type { Clock, TimerHandle } from "../manager/base/clock.js";
import type { HookRan, HookSpawnError } from "./types.js";

/** A fully-defaulted run, as the runner hands it over. */
export interface ProcessRun {
  name: string;
  path: string;
  args: readonly string[];
  env: Readonly<Record<string, string>> | undefined;
  cwd: string | undefined;
  stdin: Uint8Array | undefined;
  timeLimitMs: number;
  killGraceMs: number;
  stdoutCap: number;
  stderrCap: number;
  onStdout: ((text: string) => void) | undefined;
  onSpawn: ((pid: number) => void) | undefined;
  signal: AbortSignal | undefined;
}

/** Keeps the first `cap` bytes of a stream and counts the rest. */
export class OutputCapture {
  private chunks: Buffer[] = [];
  private kept = 0;
  dropped = 0;

  constructor(private readonly cap: number) {}

  push(chunk: Buffer): void {
    const room = this.cap - this.kept;
    if (room >= chunk.length) {
      this.chunks.push(chunk);
      this.kept += chunk.length;
    } else {
      if (room > 0) {
        this.chunks.push(chunk.subarray(0, room));
        this.kept += room;
      }
      this.dropped += chunk.length - Math.max(0, room);
    }
  }

  text(): string {
    return this.chunks.length === 1 ? this.chunks[0]!.toString("utf8") : Buffer.concat(this.chunks, this.kept).toString("utf8");
  }
}

/** Sends `sig` to the process group `pgid`; a group already gone is not an error. */
export function killGroup(pgid: number, sig: NodeJS.Signals): void {
  try {
    process.kill(-pgid, sig);
  } catch {
    // ESRCH: nothing left in the group. EPERM cannot happen for our own children.
  }
}

/** Where a run reports what the caller should log: kills (warn), a failing onStdout (error). */
export type ProcessNote = (level: "warn" | "error", message: string) => void;

/** How a spawn failed: the fields of a Node spawn error that the result keeps. */
export interface SpawnFailure {
  code?: string;
  syscall?: string;
  message?: string;
}

/**
 * What starts a hook process and feeds its events to a Supervisor, in this order: `spawned`
 * (or `failed`), `output`/`stdoutEnd` and `exited` in any order, then `closed`. `release`
 * stops reading the pipes when a process that escaped the group keeps them open.
 */
export interface ProcessStarter {
  start(run: ProcessRun, events: ProcessEvents): void;
}

/** The Supervisor's side of a started process. */
export interface ProcessEvents {
  /** `kill`: how to signal the process group when this process may not (another user's hook). */
  spawned(pid: number, release: () => void, kill?: (sig: NodeJS.Signals) => void): void;
  failed(e: SpawnFailure): void;
  output(stream: "stdout" | "stderr", chunk: Buffer): void;
  stdoutEnd(): void;
  exited(code: number | null, signal: NodeJS.Signals | null): void;
  /** Both pipes are closed; `dropped` counts bytes a helper read past the caps and did not send. */
  closed(dropped?: { stdout: number; stderr: number }): void;
  /** The process was started by a helper that died: its fate is unknown. */
  lost(reason: string): void;
}

/** Runs one hook process to completion; resolves, never rejects. */
export function runProcess(run: ProcessRun, clock: Clock, note: ProcessNote, starter: ProcessStarter = DIRECT): Promise<HookRan | HookSpawnError> {
  return new Promise((resolve) => {
    const sup = new Supervisor(run, clock, note, resolve);
    try {
      starter.start(run, sup);
    } catch (e) {
      sup.failed(e as SpawnFailure);
    }
  });
}

/** Spawns the process from this (the daemon's) process. */
export const DIRECT: ProcessStarter = {
  start(run, events) {
    let child: ChildProcess;
    try {
      child = spawn(run.path, run.args as string[], spawnOptions(run));
    } catch (e) {
      // Invalid arguments (a NUL byte in argv or env) throw synchronously.
      events.failed(e as SpawnFailure);
      return;
    }
    child.once("error", (e) => {
      // After a successful spawn, "error" only reports a failed kill; the exit still comes.
      if (child.pid === undefined) events.failed(e);
    });
    if (child.pid === undefined) return; // the "error" event follows
    child.once("exit", (code, signal) => events.exited(code, signal));
    child.once("close", () => events.closed());
    events.spawned(child.pid, () => {
      child.stdout?.destroy();
      child.stderr?.destroy();
      events.closed();
    });
    child.stdout!.on("data", (b: Buffer) => events.output("stdout", b));
    child.stdout!.once("end", () => events.stdoutEnd());
    child.stderr!.on("data", (b: Buffer) => events.output("stderr", b));
    if (run.stdin && child.stdin) {
      child.stdin.on("error", () => undefined); // EPIPE: the hook did not read all of stdin
      child.stdin.end(run.stdin);
    }
  },
};

/** The options of the spawn call itself (the same here and in a spawn helper). */
export function spawnOptions(run: Pick<ProcessRun, "path" | "env" | "cwd" | "stdin">) {
  return {
    argv0: run.path,
    env: run.env as NodeJS.ProcessEnv | undefined,
    cwd: run.cwd,
    detached: true,
    stdio: [run.stdin ? "pipe" : "ignore", "pipe", "pipe"] as ("pipe" | "ignore")[],
    windowsHide: true,
  };
}

/** The result of a spawn that failed. */
export function spawnError(run: Pick<ProcessRun, "name" | "path">, err: SpawnFailure | undefined): HookSpawnError {
  const code = err?.code ?? "EUNKNOWN";
  const syscall = err?.syscall ? `${err.syscall}: ` : "";
  return { kind: "spawn-error", name: run.name, path: run.path, code, reason: `${syscall}${code}${err?.message && !err.message.includes(code) ? ` (${err.message})` : ""}` };
}

/** Watches one started process: timers, kills, capture, and the final result. */
class Supervisor implements ProcessEvents {
  private readonly out: OutputCapture;
  private readonly err: OutputCapture;
  private readonly startedAt: number;
  private readonly decoder: StringDecoder | undefined;
  private pid: number | undefined;
  private release: (() => void) | undefined;
  private killer: (sig: NodeJS.Signals) => void = () => undefined;
  private limitTimer: TimerHandle | undefined;
  private graceTimer: TimerHandle | undefined;
  private closeTimer: TimerHandle | undefined;
  private timedOut = false;
  private aborted = false;
  private exit: { code: number | null; signal: NodeJS.Signals | null } | undefined;
  private done = false;

  constructor(
    private readonly run: ProcessRun,
    private readonly clock: Clock,
    private readonly note: ProcessNote,
    private readonly resolve: (r: HookRan | HookSpawnError) => void,
  ) {
    this.out = new OutputCapture(run.stdoutCap);
    this.err = new OutputCapture(run.stderrCap);
    this.startedAt = clock.now();
    this.decoder = run.onStdout ? new StringDecoder("utf8") : undefined;
    // The time limit counts from the request: a spawn helper reports the pid a moment after
    // the process started, and a limit armed only then could miss the clock moving meanwhile.
    if (run.timeLimitMs !== Infinity) {
      this.limitTimer = this.clock.setTimeout(() => this.kill("timeout"), Math.max(0, run.timeLimitMs));
    }
    if (run.signal) {
      if (run.signal.aborted) this.aborted = true;
      else run.signal.addEventListener("abort", this.onAbort, { once: true });
    }
  }

  spawned(pid: number, release: () => void, kill?: (sig: NodeJS.Signals) => void): void {
    if (this.done) return;
    this.pid = pid;
    this.release = release;
    // A starter's kill that throws (a group already gone) must not stop the run's ending.
    this.killer = kill === undefined ? (sig) => killGroup(pid, sig) : (sig) => {
      try {
        kill(sig);
      } catch {
        // gone already
      }
    };
    const { run } = this;
    if (run.onSpawn) {
      try {
        run.onSpawn(pid);
      } catch (e) {
        this.note("error", `onSpawn threw (${e instanceof Error ? e.message : String(e)})`);
      }
    }
    // A limit or abort that came before the pid was known is carried out now.
    if (this.timedOut || this.aborted) this.signalGroup(this.timedOut ? "timeout" : "abort");
  }

  failed(e: SpawnFailure): void {
    if (this.pid !== undefined || this.done) return;
    this.done = true;
    this.cleanup();
    this.resolve(spawnError(this.run, e));
  }

  output(stream: "stdout" | "stderr", chunk: Buffer): void {
    if (this.done) return;
    if (stream === "stderr") return this.err.push(chunk);
    this.out.push(chunk);
    if (this.decoder) this.stream(this.decoder.write(chunk));
  }

  stdoutEnd(): void {
    if (this.decoder && !this.done) this.stream(this.decoder.end());
  }

  exited(code: number | null, signal: NodeJS.Signals | null): void {
    if (this.done || this.pid === undefined || this.exit) return;
    this.exit = { code, signal };
    if (this.limitTimer) this.clock.clearTimeout(this.limitTimer);
    if (this.graceTimer) this.clock.clearTimeout(this.graceTimer);
    this.killer("SIGKILL"); // leftovers of the hook's process family
    // A process that escaped the group may hold our pipes open: stop waiting after the
    // grace, but only once output already in the pipes is read (afterPendingReads).
    this.closeTimer = this.clock.setTimeout(
      () => afterPendingReads(() => {
        if (!this.done) this.release?.();
      }),
      this.run.killGraceMs,
    );
  }

  closed(dropped?: { stdout: number; stderr: number }): void {
    if (dropped) {
      this.out.dropped += dropped.stdout;
      this.err.dropped += dropped.stderr;
    }
    this.finish();
  }

  lost(reason: string): void {
    if (this.done) return;
    if (this.exit) return this.finish(); // only the end of its output was not seen
    this.done = true;
    this.cleanup();
    // The process may still run, beyond anything that could reap it: end its group.
    if (this.pid !== undefined) this.killer("SIGKILL");
    const pid = this.pid === undefined ? "" : ` (pid ${this.pid}, its process group sent SIGKILL)`;
    this.resolve({ kind: "spawn-error", name: this.run.name, path: this.run.path, code: "EHELPERLOST", reason: `${reason}${pid}` });
  }

  private readonly onAbort = (): void => this.kill("abort");

  /** Hands stdout to the caller's onStdout; a throwing callback is logged and not called again. */
  private stream(text: string): void {
    const fn = this.run.onStdout;
    if (!fn || text === "") return;
    try {
      fn(text);
    } catch (e) {
      this.run.onStdout = undefined;
      this.note("error", `onStdout threw (${e instanceof Error ? e.message : String(e)}); the rest of stdout is only captured`);
    }
  }

  private kill(why: "timeout" | "abort"): void {
    if (this.exit || this.timedOut || this.aborted || this.done) return;
    if (why === "timeout") this.timedOut = true;
    else this.aborted = true;
    if (this.pid !== undefined) this.signalGroup(why);
  }

  /** SIGTERM to the group now, SIGKILL after the grace period. */
  private signalGroup(why: "timeout" | "abort"): void {
    const pgid = this.pid!;
    this.note(
      "warn",
      why === "timeout"
        ? `time limit of ${formatMs(this.run.timeLimitMs)} reached: SIGTERM to process group ${pgid}, SIGKILL after ${formatMs(this.run.killGraceMs)}`
        : `aborted: SIGTERM to process group ${pgid}, SIGKILL after ${formatMs(this.run.killGraceMs)}`,
    );
    this.killer("SIGTERM");
    this.graceTimer = this.clock.setTimeout(() => this.killer("SIGKILL"), this.run.killGraceMs);
  }

  private finish(): void {
    if (this.done || !this.exit) return;
    this.done = true;
    this.cleanup();
    const { code, signal } = this.exit;
    this.resolve({
      kind: signal ? "signaled" : "exited",
      name: this.run.name,
      path: this.run.path,
      exitCode: signal ? null : code,
      signal,
      timedOut: this.timedOut,
      aborted: this.aborted,
      stdout: this.out.text(),
      stderr: this.err.text(),
      stdoutDropped: this.out.dropped,
      stderrDropped: this.err.dropped,
      truncated: this.out.dropped + this.err.dropped > 0,
      pid: this.pid!,
      startedAt: this.startedAt,
      durationMs: this.clock.now() - this.startedAt,
    });
  }

  private cleanup(): void {
    for (const t of [this.limitTimer, this.graceTimer, this.closeTimer]) if (t) this.clock.clearTimeout(t);
    this.run.signal?.removeEventListener("abort", this.onAbort);
  }
}

/**
 * Runs `fn` after the event loop has been through its I/O phase once more. A loop stalled
 * past a timer's time (a loaded machine) runs that timer before it reads the pipes that
 * became readable meanwhile: output a hook wrote before the grace ended would be dropped,
 * and a FETCH_WORK's job ad read as "no work". Two turns of setImmediate always have a poll
 * phase between them, whichever phase this is called from.
 */
export function afterPendingReads(fn: () => void): void {
  setImmediate(() => setImmediate(fn));
}

/** `1500` → `1.5 s`, `250` → `250 ms`. */
export function formatMs(ms: number): string {
  return ms >= 1000 ? `${+(ms / 1000).toFixed(3)} s` : `${ms} ms`;
}
