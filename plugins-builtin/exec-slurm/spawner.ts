/**
 * sbatch started from small helper processes instead of the daemon itself. Starting a
 * process costs in proportion to the parent's memory (fork copies its page tables), and a
 * daemon holding thousands of jobs is large: from a ~40 MB helper each sbatch starts about
 * twice as fast, which is most of jobtap's cost per Slurm job (bench/slurm.ts).
 *
 * Each helper (`node -e`, so it runs the same from sources and from dist/) takes one
 * command at a time over IPC and answers with its status and output. A helper that dies
 * answers its command with `status: null` (the caller then treats the submission as
 * uncertain and looks the job up before any retry) and is replaced on the next command.
 */
import { spawn, type ChildProcess } from "node:child_process";
import type { CommandResult } from "./commands.js";

const HELPER = `
const { spawn } = require("node:child_process");
process.on("message", (m) => {
  let out = "", err = "", done = false;
  const finish = (status) => { if (!done) { done = true; process.send({ id: m.id, status, stdout: out, stderr: err.trim() }); } };
  let c;
  try {
    c = spawn(m.file, m.args, { env: m.env, stdio: ["pipe", "pipe", "pipe"], timeout: m.timeoutMs });
  } catch (e) {
    err = "cannot run " + m.file + ": " + e.message;
    return finish(null);
  }
  c.stdout.setEncoding("utf8").on("data", (d) => (out += d));
  c.stderr.setEncoding("utf8").on("data", (d) => (err += d));
  c.stdin.on("error", () => {});
  c.stdin.end(m.input || "");
  c.on("error", (e) => (err += "cannot run " + m.file + ": " + e.message));
  c.on("close", (code, signal) => {
    if (signal && !err) err = m.file + " killed by " + signal + " (time limit " + m.timeoutMs + " ms)";
    finish(signal ? null : code);
  });
});
process.on("disconnect", () => process.exit(0));
`;

/** One command for a helper. */
export interface SpawnRequest {
  file: string;
  args: readonly string[];
  env: NodeJS.ProcessEnv;
  input: string;
  timeoutMs: number;
}

interface Helper {
  child: ChildProcess;
  busy?: { id: number; resolve: (r: CommandResult) => void };
}

/** A pool of helper processes; `run` waits for a free one. */
export class SpawnPool {
  private readonly helpers: Helper[] = [];
  private readonly waiting: (() => void)[] = [];
  private seq = 0;
  private closed = false;

  constructor(private size: number) {}

  /** A new pool size (extra helpers retire when idle). */
  resize(size: number): void {
    this.size = size;
  }

  /** Runs one command in a helper. Never rejects: a lost helper is `status: null`. */
  async run(req: SpawnRequest): Promise<CommandResult> {
    for (;;) {
      if (this.closed) return { status: null, stdout: "", stderr: "executor closed" };
      const helper = this.helpers.find((h) => !h.busy) ?? (this.helpers.length < this.size ? this.startHelper() : undefined);
      if (helper) return this.send(helper, req);
      await new Promise<void>((r) => this.waiting.push(r));
    }
  }

  /** Ends every helper (their commands answer `status: null`). */
  close(): void {
    this.closed = true;
    for (const h of this.helpers.splice(0)) this.retire(h, "executor closed");
    for (const w of this.waiting.splice(0)) w();
  }

  private startHelper(): Helper {
    const child = spawn(process.execPath, ["-e", HELPER], { stdio: ["ignore", "ignore", "inherit", "ipc"] });
    const helper: Helper = { child };
    child.on("message", (m: { id: number; status: number | null; stdout: string; stderr: string }) => {
      const busy = helper.busy;
      if (!busy || busy.id !== m.id) return;
      helper.busy = undefined;
      busy.resolve({ status: m.status, stdout: m.stdout, stderr: m.stderr });
      this.released(helper);
    });
    child.on("exit", () => this.retire(helper, "helper process exited"));
    child.on("error", () => this.retire(helper, "helper process failed"));
    child.unref();
    child.channel?.unref();
    this.helpers.push(helper);
    return helper;
  }

  private send(helper: Helper, req: SpawnRequest): Promise<CommandResult> {
    return new Promise((resolve) => {
      const id = ++this.seq;
      helper.busy = { id, resolve };
      helper.child.channel?.ref();
      helper.child.send({ id, ...req }, (err) => {
        if (err) this.retire(helper, `cannot reach helper process: ${err.message}`);
      });
    });
  }

  private released(helper: Helper): void {
    helper.child.channel?.unref();
    if (this.helpers.length > this.size) this.retire(helper, "pool shrunk");
    this.waiting.shift()?.();
  }

  private retire(helper: Helper, why: string): void {
    const i = this.helpers.indexOf(helper);
    if (i >= 0) this.helpers.splice(i, 1);
    const busy = helper.busy;
    helper.busy = undefined;
    if (helper.child.connected) helper.child.disconnect();
    busy?.resolve({ status: null, stdout: "", stderr: why });
    this.waiting.shift()?.();
  }
}
