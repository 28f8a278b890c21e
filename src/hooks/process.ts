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
 */
import { spawn, type ChildProcess } from "node:child_process";
import { StringDecoder } from "node:string_decoder";
import type { Clock, TimerHandle } from "../manager/clock.js";
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

/** Runs one hook process to completion; resolves, never rejects. */
export function runProcess(run: ProcessRun, clock: Clock, note: ProcessNote): Promise<HookRan | HookSpawnError> {
  return new Promise((resolve) => {
    let child: ChildProcess;
    try {
      child = spawn(run.path, run.args as string[], {
        argv0: run.path,
        env: run.env as NodeJS.ProcessEnv | undefined,
        cwd: run.cwd,
        detached: true,
        stdio: [run.stdin ? "pipe" : "ignore", "pipe", "pipe"],
        windowsHide: true,
      });
    } catch (e) {
      // Invalid arguments (a NUL byte in argv or env) throw synchronously.
      resolve(spawnError(run, e));
      return;
    }
    new Supervisor(run, clock, child, note, resolve).start();
  });
}

function spawnError(run: ProcessRun, e: unknown): HookSpawnError {
  const err = e as NodeJS.ErrnoException;
  const code = err?.code ?? "EUNKNOWN";
  const syscall = err?.syscall ? `${err.syscall}: ` : "";
  return { kind: "spawn-error", name: run.name, path: run.path, code, reason: `${syscall}${code}${err?.message && !err.message.includes(code) ? ` (${err.message})` : ""}` };
}

/** Watches one spawned child: timers, kills, capture, and the final result. */
class Supervisor {
  private readonly out: OutputCapture;
  private readonly err: OutputCapture;
  private readonly startedAt: number;
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
    private readonly child: ChildProcess,
    private readonly note: ProcessNote,
    private readonly resolve: (r: HookRan | HookSpawnError) => void,
  ) {
    this.out = new OutputCapture(run.stdoutCap);
    this.err = new OutputCapture(run.stderrCap);
    this.startedAt = clock.now();
  }

  start(): void {
    const { child, run } = this;
    child.once("error", (e) => this.onSpawnError(e));
    child.once("exit", (code, signal) => this.onExit(code, signal));
    child.once("close", () => this.finish());
    if (child.pid === undefined) return; // the "error" event follows
    if (run.onSpawn) {
      try {
        run.onSpawn(child.pid);
      } catch (e) {
        this.note("error", `onSpawn threw (${e instanceof Error ? e.message : String(e)})`);
      }
    }
    const decoder = run.onStdout ? new StringDecoder("utf8") : undefined;
    child.stdout!.on("data", (b: Buffer) => {
      this.out.push(b);
      if (decoder) this.stream(decoder.write(b));
    });
    if (decoder) child.stdout!.once("end", () => this.stream(decoder.end()));
    child.stderr!.on("data", (b: Buffer) => this.err.push(b));
    if (run.stdin && child.stdin) {
      child.stdin.on("error", () => undefined); // EPIPE: the hook did not read all of stdin
      child.stdin.end(run.stdin);
    }
    if (run.timeLimitMs !== Infinity) {
      this.limitTimer = this.clock.setTimeout(() => this.kill("timeout"), Math.max(0, run.timeLimitMs));
    }
    if (run.signal) run.signal.addEventListener("abort", this.onAbort, { once: true });
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
    if (this.exit || this.timedOut || this.aborted) return;
    if (why === "timeout") this.timedOut = true;
    else this.aborted = true;
    const pgid = this.child.pid!;
    this.note(
      "warn",
      why === "timeout"
        ? `time limit of ${formatMs(this.run.timeLimitMs)} reached: SIGTERM to process group ${pgid}, SIGKILL after ${formatMs(this.run.killGraceMs)}`
        : `aborted: SIGTERM to process group ${pgid}, SIGKILL after ${formatMs(this.run.killGraceMs)}`,
    );
    killGroup(pgid, "SIGTERM");
    this.graceTimer = this.clock.setTimeout(() => killGroup(pgid, "SIGKILL"), this.run.killGraceMs);
  }

  private onSpawnError(e: Error): void {
    // After a successful spawn, "error" only reports a failed kill; the exit still comes.
    if (this.child.pid !== undefined || this.done) return;
    this.done = true;
    this.cleanup();
    this.resolve(spawnError(this.run, e));
  }

  private onExit(code: number | null, signal: NodeJS.Signals | null): void {
    if (this.done || this.child.pid === undefined) return; // a failed spawn also "exits"
    this.exit = { code, signal };
    if (this.limitTimer) this.clock.clearTimeout(this.limitTimer);
    if (this.graceTimer) this.clock.clearTimeout(this.graceTimer);
    killGroup(this.child.pid!, "SIGKILL"); // leftovers of the hook's process family
    // A process that escaped the group may hold our pipes open: stop waiting after the grace.
    this.closeTimer = this.clock.setTimeout(() => {
      this.child.stdout?.destroy();
      this.child.stderr?.destroy();
      this.finish();
    }, this.run.killGraceMs);
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
      pid: this.child.pid!,
      startedAt: this.startedAt,
      durationMs: this.clock.now() - this.startedAt,
    });
  }

  private cleanup(): void {
    for (const t of [this.limitTimer, this.graceTimer, this.closeTimer]) if (t) this.clock.clearTimeout(t);
    this.run.signal?.removeEventListener("abort", this.onAbort);
  }
}

/** `1500` → `1.5 s`, `250` → `250 ms`. */
export function formatMs(ms: number): string {
  return ms >= 1000 ? `${+(ms / 1000).toFixed(3)} s` : `${ms} ms`;
}
