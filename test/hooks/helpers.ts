/** Shared helpers for the hook tests: owner-only temp dirs, hook scripts, process checks, a log. */
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { HookLog } from "../../src/hooks/index.js";

/** A fresh temp dir: mkdtemp makes it 0700, so hooks in it pass the path checks. */
export function hookDir(): { dir: string; cleanup: () => void } {
  const dir = mkdtempSync(join(tmpdir(), "jobtap-hooks-"));
  return { dir, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

/** Writes a /bin/sh hook script `name` into `dir` with `mode` (default 0755); returns its path. */
export function hookScript(dir: string, name: string, body: string, mode = 0o755): string {
  const path = join(dir, name);
  writeFileSync(path, `#!/bin/sh\n${body}\n`);
  chmodSync(path, mode);
  return path;
}

/** True while `pid` is a live process (a zombie counts as dead: it runs nothing). */
export function alive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2)[0] !== "Z";
  } catch {
    return false;
  }
}

/** Waits (polling real time) until `cond()` holds; fails after `ms`. */
export async function until(cond: () => boolean, what: string, ms = 10_000): Promise<void> {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

/** Waits until the file at `path` exists and holds a pid; returns it. */
export async function pidFrom(path: string): Promise<number> {
  await until(() => existsSync(path) && /^\d+\n/.test(readFileSync(path, "utf8")), path);
  return Number(readFileSync(path, "utf8").trim());
}

/** A HookLog that keeps its lines as "level: message". */
export function memoryLog(): HookLog & { lines: string[] } {
  const lines: string[] = [];
  return {
    lines,
    debug: (m) => lines.push(`debug: ${m}`),
    info: (m) => lines.push(`info: ${m}`),
    warn: (m) => lines.push(`warn: ${m}`),
    error: (m) => lines.push(`error: ${m}`),
  };
}

/**
 * Waits until `pid` is dead. A SIGKILLed process closes its pipes a moment before it is
 * gone from the process table, so "dead" is awaited (bounded), not sampled once.
 */
export async function dead(pid: number): Promise<boolean> {
  await until(() => !alive(pid), `process ${pid} to die`);
  return true;
}
