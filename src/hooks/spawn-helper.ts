/**
 * Starting hook processes from small long-lived helper processes instead of the daemon.
 *
 * Why: Node's spawn forks and execs on the calling thread, and fork copies the caller's
 * page tables, so its cost grows with the daemon's memory (~1.9 ms of the manager's main
 * thread per cron run in bench/cron.ts). A helper is a bare `node -e` process of ~40 MB
 * whose only work is spawning; the daemon pays one IPC message per event instead.
 *
 * The helper only starts processes and forwards what they do (spawned, output, exit,
 * close), in order, over IPC; the daemon's Supervisor keeps the time limits, kills (to
 * the process group, sent by the daemon directly), caps and result, so a run started
 * here has every guarantee of one started directly. Output past a stream's cap is counted
 * in the helper, not sent (unless the caller streams stdout). A helper that dies fails
 * its runs with `EHELPERLOST` (their process groups are killed) and is replaced by a new
 * one at the next run.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { spawnOptions, type ProcessEvents, type ProcessRun, type ProcessStarter } from "./process.js";

/** The helper program (CommonJS for `node -e`, so it runs the same from sources and dist/). */
const HELPER = `
const { spawn } = require("node:child_process");
const kids = new Map();
const paused = new Set();
let backlog = 0;
const drained = () => { if (--backlog < 16) for (const s of paused) { paused.delete(s); s.resume(); } };
const send = (m) => { backlog++; process.send(m, undefined, undefined, drained); };
const failure = (e) => ({ code: e && e.code, syscall: e && e.syscall, message: e && e.message });
function start(m) {
  const id = m.id;
  let child;
  try { child = spawn(m.path, m.args, m.options); } catch (e) { return send({ id, ev: "failed", e: failure(e) }); }
  child.once("error", (e) => { if (child.pid === undefined) send({ id, ev: "failed", e: failure(e) }); });
  if (child.pid === undefined) return;
  const kept = { stdout: 0, stderr: 0 }, dropped = { stdout: 0, stderr: 0 };
  kids.set(id, child);
  send({ id, ev: "spawned", pid: child.pid });
  for (const s of ["stdout", "stderr"]) child[s].on("data", (b) => {
    const room = m.caps[s] - kept[s];
    const part = room >= b.length ? b : b.subarray(0, Math.max(0, room));
    kept[s] += part.length;
    dropped[s] += b.length - part.length;
    if (part.length === 0) return;
    send({ id, ev: "output", stream: s, chunk: part });
    if (backlog >= 64) { child[s].pause(); paused.add(child[s]); }
  });
  child.stdout.once("end", () => send({ id, ev: "stdoutEnd" }));
  child.once("exit", (code, signal) => send({ id, ev: "exited", code, signal }));
  child.once("close", () => { kids.delete(id); send({ id, ev: "closed", dropped }); });
  if (m.stdin && child.stdin) { child.stdin.on("error", () => {}); child.stdin.end(m.stdin); }
}
process.on("message", (m) => {
  if (m.op === "spawn") return start(m);
  const child = kids.get(m.id);
  // Output already in the pipes is read and sent first (two turns: a poll phase between).
  if (m.op === "release" && child) setImmediate(() => setImmediate(() => { child.stdout.destroy(); child.stderr.destroy(); }));
});
process.on("disconnect", () => process.exit(0));
`;

/** A message from a helper about one run. */
type HelperEvent =
  | { id: number; ev: "spawned"; pid: number }
  | { id: number; ev: "failed"; e: { code?: string; syscall?: string; message?: string } }
  | { id: number; ev: "output"; stream: "stdout" | "stderr"; chunk: Uint8Array }
  | { id: number; ev: "stdoutEnd" }
  | { id: number; ev: "exited"; code: number | null; signal: NodeJS.Signals | null }
  | { id: number; ev: "closed"; dropped: { stdout: number; stderr: number } };

interface Helper {
  child: ChildProcess;
  runs: Map<number, ProcessEvents>;
  gone: boolean;
}

/**
 * Up to `size` helper processes, started when first needed; each run goes to the helper
 * with the fewest runs. Idle helpers do not keep the daemon's event loop alive.
 */
export class SpawnHelpers implements ProcessStarter {
  private readonly helpers: Helper[] = [];
  private seq = 0;
  private closed = false;

  constructor(private readonly size: number) {}

  /** Processes the helpers run now (for tests). */
  get pids(): number[] {
    return this.helpers.map((h) => h.child.pid!).filter((p) => p !== undefined);
  }

  start(run: ProcessRun, events: ProcessEvents): void {
    if (this.closed) return events.failed({ code: "EHELPERLOST", message: "the spawn helpers are closed" });
    const helper = this.pick();
    const id = ++this.seq;
    helper.runs.set(id, events);
    if (helper.runs.size === 1) helper.child.channel?.ref();
    const options = { ...spawnOptions(run), env: run.env ?? { ...process.env }, cwd: run.cwd ?? process.cwd() };
    const caps = { stdout: run.onStdout ? Infinity : run.stdoutCap, stderr: run.stderrCap };
    helper.child.send({ op: "spawn", id, path: run.path, args: run.args, options, stdin: run.stdin, caps }, (err: Error | null) => {
      if (err) this.retire(helper, `the spawn helper could not be reached (${err.message})`);
    });
  }

  /** Ends every helper; runs still in one fail as lost. */
  close(): void {
    this.closed = true;
    for (const h of [...this.helpers]) this.retire(h, "the spawn helpers were closed");
  }

  private pick(): Helper {
    let best: Helper | undefined;
    for (const h of this.helpers) if (!best || h.runs.size < best.runs.size) best = h;
    if (best && (best.runs.size === 0 || this.helpers.length >= this.size)) return best;
    return this.startHelper();
  }

  private startHelper(): Helper {
    const child = spawn(process.execPath, ["-e", HELPER], { stdio: ["ignore", "ignore", "inherit", "ipc"], serialization: "advanced" });
    const helper: Helper = { child, runs: new Map(), gone: false };
    child.on("message", (m: HelperEvent) => this.onEvent(helper, m));
    child.on("exit", (code, signal) => this.retire(helper, `the spawn helper process ${child.pid} ${signal ? `was killed by ${signal}` : `exited with status ${code}`}`));
    child.on("error", (e) => this.retire(helper, `the spawn helper process failed (${e.message})`));
    child.unref();
    child.channel?.unref();
    this.helpers.push(helper);
    return helper;
  }

  private onEvent(helper: Helper, m: HelperEvent): void {
    const events = helper.runs.get(m.id);
    if (!events) return;
    switch (m.ev) {
      case "spawned":
        // Released: the helper stops reading once it has sent what it already read; its
        // `closed` follows that output (one channel, in order). A helper that dies meanwhile
        // fails the run as lost.
        return events.spawned(m.pid, () => {
          helper.child.send({ op: "release", id: m.id }, () => undefined);
        });
      case "failed":
        this.forget(helper, m.id);
        return events.failed(m.e);
      case "output":
        return events.output(m.stream, Buffer.isBuffer(m.chunk) ? m.chunk : Buffer.from(m.chunk.buffer, m.chunk.byteOffset, m.chunk.byteLength));
      case "stdoutEnd":
        return events.stdoutEnd();
      case "exited":
        return events.exited(m.code, m.signal);
      case "closed":
        this.forget(helper, m.id);
        return events.closed(m.dropped);
    }
  }

  private forget(helper: Helper, id: number): void {
    helper.runs.delete(id);
    if (helper.runs.size === 0) helper.child.channel?.unref();
  }

  /** A helper that exited, failed or is closed: its runs are lost, the next run starts a new one. */
  private retire(helper: Helper, why: string): void {
    if (helper.gone) return;
    helper.gone = true;
    const i = this.helpers.indexOf(helper);
    if (i >= 0) this.helpers.splice(i, 1);
    if (helper.child.connected) helper.child.disconnect();
    const runs = [...helper.runs.values()];
    helper.runs.clear();
    for (const events of runs) events.lost(`${why} while the hook ran`);
  }
}
