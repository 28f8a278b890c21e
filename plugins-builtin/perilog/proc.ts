/**
 * One prolog or epilog process: spawned without a shell, output lines handed to a logger,
 * a time limit and a kill timeout on the manager's clock. Cancel sends SIGTERM and, after
 * the kill timeout, SIGKILL.
 */
import { spawn, type ChildProcess } from "node:child_process";
import type { Clock } from "jobtap/plugin";

export type ProcState = "running" | "canceled" | "timeout";

/** How the process ended. */
export interface ProcExit {
  state: ProcState;
  /** Exit code, when it exited. */
  code: number | null;
  /** Signal name, when it was killed. */
  signal: NodeJS.Signals | null;
  /** SIGKILL had to be sent after the kill timeout. */
  killed: boolean;
  /** Could not be started at all. */
  spawnError?: string;
}

export interface ProcOptions {
  name: "prolog" | "epilog";
  command: string[];
  env: Record<string, string>;
  clock: Clock;
  timeoutMs: number;
  killTimeoutMs: number;
  onLine: (stream: "stdout" | "stderr", line: string) => void;
  onExit: (exit: ProcExit) => void;
}

type TimerHandle = ReturnType<Clock["setTimeout"]>;

export class PerilogProc {
  state: ProcState = "running";
  readonly name: "prolog" | "epilog";
  readonly startedAt: number;
  private readonly child: ChildProcess;
  private timer: TimerHandle | undefined;
  private killTimer: TimerHandle | undefined;
  private killed = false;
  private done = false;

  constructor(private readonly o: ProcOptions) {
    this.name = o.name;
    this.startedAt = o.clock.now();
    this.child = spawn(o.command[0]!, o.command.slice(1), {
      env: { ...process.env, ...o.env },
      stdio: ["ignore", "pipe", "pipe"],
    });
    this.lines("stdout");
    this.lines("stderr");
    this.child.on("error", (e) => this.finish({ code: null, signal: null, spawnError: e.message }));
    this.child.on("close", (code, signal) => this.finish({ code, signal }));
    if (o.timeoutMs > 0) {
      this.timer = o.clock.setTimeout(() => {
        this.timer = undefined;
        this.stop("timeout");
      }, o.timeoutMs);
    }
  }

  /** Milliseconds left before the time limit, or undefined when there is none. */
  remainingMs(): number | undefined {
    if (this.o.timeoutMs <= 0) return undefined;
    return Math.max(0, this.startedAt + this.o.timeoutMs - this.o.clock.now());
  }

  /** SIGTERM now, SIGKILL after the kill timeout (the job was cancelled). */
  cancel(): void {
    this.stop("canceled");
  }

  private stop(why: ProcState): void {
    if (this.done || this.state !== "running") return;
    this.state = why;
    this.child.kill("SIGTERM");
    this.killTimer = this.o.clock.setTimeout(() => {
      this.killed = true;
      this.child.kill("SIGKILL");
    }, this.o.killTimeoutMs);
  }

  private lines(stream: "stdout" | "stderr"): void {
    let buf = "";
    const s = this.child[stream];
    s?.setEncoding("utf8");
    s?.on("data", (chunk: string) => {
      buf += chunk;
      const parts = buf.split("\n");
      buf = parts.pop() ?? "";
      for (const l of parts) this.o.onLine(stream, l);
    });
    s?.on("end", () => buf.length > 0 && this.o.onLine(stream, buf));
  }

  private finish(x: { code: number | null; signal: NodeJS.Signals | null; spawnError?: string }): void {
    if (this.done) return;
    this.done = true;
    if (this.timer) this.o.clock.clearTimeout(this.timer);
    if (this.killTimer) this.o.clock.clearTimeout(this.killTimer);
    this.o.onExit({ state: this.state, killed: this.killed, ...x });
  }
}
