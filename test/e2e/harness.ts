/**
 * Drives the real daemon and the real CLI as separate processes: `node bin/jobtap daemon`
 * on a temp statedir, and `node bin/jobtap ...` for every action. Waits are polls of a
 * condition with a bounded deadline, never sleeps of a guessed length.
 */
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, expect } from "vitest";

export const ROOT = fileURLToPath(new URL("../..", import.meta.url));
export const BIN = join(ROOT, "bin", "jobtap");

export interface CliResult {
  status: number;
  stdout: string;
  stderr: string;
}

/** Fails fast when the compiled CLI is missing (`npm test` builds before vitest runs). */
export function requireBuild(): void {
  if (!existsSync(join(ROOT, "dist", "src", "cli", "main.js"))) {
    throw new Error("dist/ is missing: run `npm run build` (npm test does) before the e2e tests");
  }
}

/** One daemon on its own statedir; `stop`/`kill` end it, `start` (re)starts it. */
export class DaemonUnderTest {
  readonly statedir: string;
  readonly socket: string;
  private child: ChildProcess | undefined;
  /** Everything the daemon wrote to stderr (its log), across restarts. */
  log = "";

  constructor(readonly configPath?: string) {
    this.statedir = mkdtempSync(join(tmpdir(), "jobtap-e2e-"));
    this.socket = join(this.statedir, "jobtap.sock");
  }

  /** Starts the daemon and resolves once it answers `jobs`. */
  async start(extraArgs: string[] = []): Promise<void> {
    const args = [BIN, "daemon", "--statedir", this.statedir, ...extraArgs];
    if (this.configPath) args.push("--config", this.configPath);
    const child = spawn(process.execPath, args, { stdio: ["ignore", "ignore", "pipe"], env: this.env() });
    child.stderr?.on("data", (d) => (this.log += d.toString()));
    this.child = child;
    let exited = false;
    const closed = new Promise<void>((r) => child.once("close", () => r()));
    child.once("exit", () => (exited = true));
    await waitFor(() => exited || (existsSync(this.socket) && this.cli(["jobs"]).status === 0), 30_000, "daemon to answer");
    if (exited) {
      await closed;
      throw new Error(`daemon exited at start; its log:\n${this.log}`);
    }
  }

  /** `jobtap submit ARGS` that must be accepted: fails the test on any stderr; the ids printed. */
  submit(args: string[]): string {
    const r = this.cli(["submit", ...args]);
    expect(r.stderr).toBe("");
    return r.stdout.trim();
  }

  /** Runs `jobtap ARGS` against this daemon (synchronously: one short-lived process). */
  cli(args: string[], opts: { cwd?: string } = {}): CliResult {
    const r = spawnSync(process.execPath, [BIN, ...args], {
      env: this.env(),
      cwd: opts.cwd ?? this.statedir,
      encoding: "utf8",
      timeout: 30_000,
    });
    return { status: r.status ?? -1, stdout: r.stdout, stderr: r.stderr };
  }

  /** Runs `jobtap ARGS` in the background (for --wait / --follow). */
  cliAsync(args: string[]): Promise<CliResult> {
    return new Promise((resolve) => {
      const c = spawn(process.execPath, [BIN, ...args], { env: this.env(), cwd: this.statedir });
      let stdout = "";
      let stderr = "";
      c.stdout.on("data", (d) => (stdout += d.toString()));
      c.stderr.on("data", (d) => (stderr += d.toString()));
      c.on("exit", (code) => resolve({ status: code ?? -1, stdout, stderr }));
    });
  }

  /** `jobs -a --json` as objects. */
  jobs(): Record<string, unknown>[] {
    const r = this.cli(["jobs", "-a", "--json"]);
    if (r.status !== 0) throw new Error(`jobs failed: ${r.stderr}`);
    return JSON.parse(r.stdout) as Record<string, unknown>[];
  }

  job(id: string): Record<string, unknown> | undefined {
    return this.jobs().find((j) => j.id === id);
  }

  /** SIGTERM and wait for a clean exit; resolves with the exit code. */
  async stop(): Promise<number | null> {
    return this.signal("SIGTERM");
  }

  /** SIGTERM; rejects (and SIGKILLs) if the process is still alive after `deadlineMs`. */
  async stopWithin(deadlineMs: number): Promise<number | null> {
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        this.child?.kill("SIGKILL");
        reject(new Error(`daemon still running ${deadlineMs} ms after SIGTERM; its log:\n${this.log}`));
      }, deadlineMs);
    });
    try {
      return await Promise.race([this.stop(), late]);
    } finally {
      clearTimeout(timer);
    }
  }

  /** SIGKILL: the daemon gets no chance to clean up. */
  async kill(): Promise<number | null> {
    return this.signal("SIGKILL");
  }

  /** SIGHUP: the daemon reloads its config and keeps running. */
  hup(): void {
    this.child?.kill("SIGHUP");
  }

  private async signal(sig: NodeJS.Signals): Promise<number | null> {
    const child = this.child;
    if (!child || child.exitCode !== null || child.signalCode !== null) return child?.exitCode ?? null;
    // "close" (not "exit"): its stderr, the daemon's log, has been read to the end by then.
    const exited = new Promise<number | null>((r) => child.once("close", (code) => r(code)));
    child.kill(sig);
    const code = await exited;
    this.child = undefined;
    return code;
  }

  /** Stops the daemon if running and removes the statedir. */
  async dispose(): Promise<void> {
    await this.kill();
    rmSync(this.statedir, { recursive: true, force: true });
  }

  private env(): NodeJS.ProcessEnv {
    const env: NodeJS.ProcessEnv = { ...process.env, JOBTAP_SOCKET: this.socket, JOBTAP_STATEDIR: this.statedir };
    delete env.NODE_OPTIONS;
    return env;
  }
}

/** Polls `cond` every 25 ms until it holds; fails naming `what` after `deadlineMs`. */
export async function waitFor(cond: () => boolean, deadlineMs: number, what: string): Promise<void> {
  const end = Date.now() + deadlineMs;
  for (;;) {
    if (cond()) return;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

/**
 * One daemon for a whole describe block: built before the first test (after `before`, which
 * may write a config into the statedir and return the daemon's extra arguments), disposed of
 * after the last.
 */
export function daemonForSuite(before: (d: DaemonUnderTest) => string[] = () => []): DaemonUnderTest {
  const d = new DaemonUnderTest();
  beforeAll(async () => {
    requireBuild();
    await d.start(before(d));
  }, 60_000);
  afterAll(async () => {
    await d.dispose();
  });
  return d;
}
