/**
 * The hook runner: many hook programs in flight without blocking the event loop, at most
 * `maxInFlight` at once (the rest wait in FIFO order), each checked, run and reported as a
 * HookResult value. One runner per plugin (or per hook family) is the intended use: its
 * limit, clock, log and defaults are its own; nothing is shared between runners.
 */
import { hookRan, type HookRunReport } from "./observe.js";
import { RealClock, type Clock } from "../manager/base/clock.js";
import { HookPathCache } from "./pathcheck.js";
import { DIRECT, runProcess, type ProcessRun, type ProcessStarter } from "./process.js";
import { SpawnHelpers } from "./spawn-helper.js";
import {
  DEFAULT_KILL_GRACE_MS,
  DEFAULT_MAX_IN_FLIGHT,
  DEFAULT_OUTPUT_CAP,
  DEFAULT_PATH_CHECK_CACHE_MS,
  describeHookResult,
  hookSucceeded,
  type HookLog,
  type HookResult,
  type HookRunnerOptions,
  type HookSpec,
  type HookUsers,
} from "./types.js";

/** Longest stderr text put on one log line; the captured stderr in the result is whole. */
const STDERR_LOG_MAX = 4096;

interface Pending {
  spec: HookSpec;
  resolve: (r: HookResult) => void;
  /** Aborts the run: the caller's signal, or close(). */
  ctl: AbortController;
  state: "queued" | "running" | "done";
  /** Removes our listener from the caller's AbortSignal (which may serve many runs). */
  unlisten: () => void;
}

const NO_LOG: HookLog = { debug() {}, info() {}, warn() {}, error() {} };

/** Runs hook programs; see docs/hooks.md. */
export class HookRunner {
  private readonly clock: Clock;
  private readonly log: HookLog;
  private readonly maxInFlight: number;
  private readonly defaults: NonNullable<HookRunnerOptions["defaults"]>;
  private readonly paths: HookPathCache;
  /** Where processes are started: here, or in spawn helper processes (spawn-helper.ts). */
  private readonly starter: ProcessStarter;
  private readonly users: HookUsers | undefined;
  private readonly plugin: string;
  private queue: Pending[] = [];
  private head = 0;
  private running = new Set<Pending>();
  private waiting = 0;
  private closed = false;

  constructor(opts: HookRunnerOptions = {}) {
    this.clock = opts.clock ?? new RealClock();
    this.log = opts.log ?? NO_LOG;
    const max = opts.maxInFlight ?? DEFAULT_MAX_IN_FLIGHT;
    this.maxInFlight = max === Infinity ? Infinity : Math.max(1, Math.floor(max));
    this.defaults = opts.defaults ?? {};
    this.paths = new HookPathCache(opts.pathCheckCacheMs ?? DEFAULT_PATH_CHECK_CACHE_MS);
    const helpers = Math.floor(opts.spawnHelpers ?? 0);
    this.starter = helpers > 0 ? new SpawnHelpers(helpers) : DIRECT;
    this.users = opts.users;
    this.plugin = opts.plugin ?? "";
  }

  /** Pids of the running spawn helper processes (empty without `spawnHelpers`). */
  get spawnHelperPids(): number[] {
    return this.starter instanceof SpawnHelpers ? this.starter.pids : [];
  }

  /** Hooks running now (path check included). */
  get inFlight(): number {
    return this.running.size;
  }

  /** Hooks waiting for a free place. */
  get queued(): number {
    return this.waiting;
  }

  /**
   * Queues one run of a hook. Resolves when the hook has ended and all its output is read;
   * never rejects: a refused path, a failed spawn, a crash or a time limit is a HookResult.
   */
  run(spec: HookSpec): Promise<HookResult> {
    return new Promise((resolve) => {
      const entry: Pending = { spec, resolve, ctl: new AbortController(), state: "queued", unlisten: () => undefined };
      if (this.closed) return this.cancel(entry, "the hook runner is closed");
      const signal = spec.signal;
      if (signal?.aborted) return this.cancel(entry, "aborted before it started");
      if (signal) {
        const onAbort = () => (entry.state === "queued" ? this.cancel(entry, "aborted while queued") : entry.ctl.abort());
        signal.addEventListener("abort", onAbort, { once: true });
        entry.unlisten = () => signal.removeEventListener("abort", onAbort);
      }
      this.queue.push(entry);
      this.waiting++;
      this.pump();
    });
  }

  /**
   * Stops the runner: queued hooks resolve as cancelled, running ones are killed (SIGTERM,
   * then SIGKILL after their grace). Resolves when every running hook has ended.
   */
  async close(): Promise<void> {
    this.closed = true;
    for (let i = this.head; i < this.queue.length; i++) {
      const e = this.queue[i]!;
      if (e.state === "queued") this.cancel(e, "the hook runner closed");
    }
    this.queue = [];
    this.head = 0;
    const ends = [...this.running].map((e) => new Promise<void>((r) => {
      const resolve = e.resolve;
      e.resolve = (res) => (resolve(res), r());
    }));
    for (const e of this.running) e.ctl.abort();
    await Promise.all(ends);
    if (this.starter instanceof SpawnHelpers) this.starter.close();
  }

  private cancel(entry: Pending, reason: string): void {
    if (entry.state === "queued") this.waiting--;
    entry.state = "done";
    entry.unlisten();
    entry.resolve({ kind: "cancelled", name: entry.spec.name ?? entry.spec.path, path: entry.spec.path, reason });
  }

  private pump(): void {
    while (this.running.size < this.maxInFlight && this.head < this.queue.length) {
      const entry = this.queue[this.head++]!;
      if (entry.state !== "queued") continue;
      entry.state = "running";
      this.waiting--;
      this.running.add(entry);
      void this.execute(entry)
        .catch((e: unknown): HookResult => this.misuse(entry, e))
        .then((result) => {
          if (result.kind !== "cancelled") hookRan(this.reportOf(entry.spec, result));
          entry.state = "done";
          entry.unlisten();
          this.running.delete(entry);
          entry.resolve(result);
          this.pump();
        });
    }
    if (this.head > 1024 && this.head * 2 > this.queue.length) {
      this.queue = this.queue.slice(this.head);
      this.head = 0;
    }
  }

  /** What observers (observe.ts) learn of one ended run. */
  private reportOf(spec: HookSpec, r: HookResult): HookRunReport {
    const ran = r.kind === "exited" || r.kind === "signaled";
    return {
      durationMs: ran ? r.durationMs : 0,
      plugin: this.plugin,
      hookType: spec.hookType ?? "",
      ran,
      failed: !ran || (!r.aborted && !hookSucceeded(r)),
    };
  }

  /** A spec the runner could not use (a bad stdin type, ...): a result, never a lost slot. */
  private misuse(entry: Pending, e: unknown): HookResult {
    const reason = `invalid hook spec: ${e instanceof Error ? e.message : String(e)}`;
    this.log.error(`hook ${entry.spec.name ?? entry.spec.path}: ${reason}`);
    return { kind: "spawn-error", name: entry.spec.name ?? String(entry.spec.path), path: entry.spec.path, code: "EINVAL", reason };
  }

  private async execute(entry: Pending): Promise<HookResult> {
    const run = this.resolveSpec(entry);
    const label = run.name === run.path ? `hook ${run.path}` : `hook ${run.name} (${run.path})`;
    const starter = entry.spec.runAs === undefined || this.users === undefined ? undefined : this.users.starter(entry.spec.runAs);
    if (typeof starter === "string") {
      this.log.error(`${label}: ${starter}`);
      return { kind: "spawn-error", name: run.name, path: run.path, code: "EPERM", reason: starter };
    }
    if (entry.spec.checkPath !== false) {
      const check = await this.paths.check(run.path, starter !== undefined);
      if (!check.ok) {
        this.log.warn(`${label}: refused: ${check.reason}`);
        return { kind: "refused", name: run.name, path: run.path, reason: check.reason };
      }
    }
    if (run.signal?.aborted) return { kind: "cancelled", name: run.name, path: run.path, reason: "aborted before it started" };
    const result = await runProcess(run, this.clock, (level, msg) => this.log[level](`${label}: ${msg}`), starter ?? this.starter);
    this.report(label, run, result, entry.spec.logStderr ?? this.defaults.logStderr ?? true);
    return result;
  }

  private report(label: string, run: ProcessRun, r: HookResult, logStderr: boolean): void {
    if (r.kind === "spawn-error") {
      this.log.error(`${label}: ${describeHookResult(r)}`);
      return;
    }
    if (r.kind !== "exited" && r.kind !== "signaled") return;
    if (r.stdoutDropped > 0) this.log.warn(`${label}: stdout over its cap of ${run.stdoutCap} bytes: ${r.stdoutDropped} bytes discarded`);
    if (r.stderrDropped > 0) this.log.warn(`${label}: stderr over its cap of ${run.stderrCap} bytes: ${r.stderrDropped} bytes discarded`);
    const text = r.stderr.trimEnd();
    if (logStderr && text !== "") {
      const ok = hookSucceeded(r);
      const shown = text.length > STDERR_LOG_MAX ? `${text.slice(0, STDERR_LOG_MAX)} [... ${text.length - STDERR_LOG_MAX} more characters]` : text;
      const line = `${label}: ${ok ? "" : `${r.kind === "exited" ? `exit ${r.exitCode}` : r.signal}, `}stderr: ${shown}`;
      if (ok) this.log.debug(line);
      else this.log.warn(line);
    }
  }

  private resolveSpec(entry: Pending): ProcessRun {
    const s = entry.spec;
    const d = this.defaults;
    const stdin = typeof s.stdin === "string" ? (s.stdin === "" ? undefined : Buffer.from(s.stdin, "utf8")) : s.stdin?.length ? s.stdin : undefined;
    return {
      name: s.name ?? s.path,
      path: s.path,
      args: s.args ?? [],
      env: s.env ?? d.env,
      cwd: s.cwd,
      stdin,
      timeLimitMs: nonNegative(s.timeLimitMs ?? d.timeLimitMs, Infinity),
      killGraceMs: nonNegative(s.killGraceMs ?? d.killGraceMs, DEFAULT_KILL_GRACE_MS),
      stdoutCap: nonNegative(s.stdoutCap ?? d.stdoutCap, DEFAULT_OUTPUT_CAP),
      stderrCap: nonNegative(s.stderrCap ?? d.stderrCap, DEFAULT_OUTPUT_CAP),
      onStdout: s.onStdout,
      onSpawn: s.onSpawn,
      signal: entry.ctl.signal,
    };
  }
}

function nonNegative(v: number | undefined, fallback: number): number {
  return v === undefined || Number.isNaN(v) ? fallback : Math.max(0, v);
}

/** A new HookRunner (the same as `new HookRunner(opts)`). */
export function createHookRunner(opts: HookRunnerOptions = {}): HookRunner {
  return new HookRunner(opts);
}
