/**
 * The manager's close waits for what removed plugins' onRemove functions still do (a promise
 * each: hook processes being killed and reaped), so no plugin process outlives the close.
 */
import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { createTestHost, type PluginContext } from "jobtap/plugin";

let dir: string | undefined;
afterEach(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
  dir = undefined;
});

/** Runs `sh -c script`; resolves on its exit. */
const run = (script: string): Promise<void> =>
  new Promise((resolve) => spawn("sh", ["-c", script], { stdio: "ignore" }).once("exit", () => resolve()));

describe("close waits for onRemove promises", () => {
  it("a process an onRemove waits on has ended, and written its file, when close resolves", async () => {
    dir = mkdtempSync(join(tmpdir(), "jobtap-rmwait-"));
    const marker = join(dir, "ended");
    const t = await createTestHost({
      plugin: (p: PluginContext) => p.onRemove(() => run(`sleep 0.3; echo done > ${marker}`)),
      name: "ender",
      builtins: false,
    });
    await t.close();
    expect(existsSync(marker)).toBe(true);
  });

  it("a rejected onRemove promise is reported and the close completes; later plugins still end", async () => {
    dir = mkdtempSync(join(tmpdir(), "jobtap-rmwait-"));
    const marker = join(dir, "ended");
    const t = await createTestHost({
      plugin: (p: PluginContext) => {
        p.onRemove(() => Promise.reject(new Error("cleanup failed")));
        p.onRemove(() => run(`sleep 0.2; echo done > ${marker}`));
      },
      name: "failer",
      builtins: false,
    });
    await t.close();
    expect(existsSync(marker)).toBe(true);
    expect(t.log.some((l) => l.includes("failer: destructor: cleanup failed"))).toBe(true);
  });
});
