/** Shared set-up for builtin plugin scenarios: a real in-memory manager with every builtin. */
import { createTestHost, type TestHost, type TestHostOptions, type TestJob } from "../../src/testhost.js";
import { chmodSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { ErrorCode, isJobtapError } from "../../src/errors.js";
import type { JobId } from "../../src/manager/base/ids.js";

export type { TestHost, TestJob };

/** A test host with the builtins loaded and the given instance configuration. */
export function host(config: Record<string, unknown> = {}, opts: TestHostOptions = {}): Promise<TestHost> {
  return createTestHost({ config, ...opts });
}

/** Submits and returns the rejection message (fails the test if the job was accepted). */
export async function rejected(h: TestHost, job: TestJob): Promise<string> {
  try {
    const id = await h.submit(job);
    throw new Error(`job ${String(id)} was accepted`);
  } catch (e) {
    if (!isJobtapError(e, ErrorCode.JOB_REJECTED)) throw e;
    return e.message;
  }
}

/** Runs simulated time forward in small steps until `cond` holds (or `maxMs` passes). */
export async function until(h: TestHost, cond: () => boolean, maxMs = 3_600_000): Promise<void> {
  const end = h.clock.now() + maxMs;
  while (!cond() && h.clock.now() < end) await h.advance(10);
}

/** The exception events of a job, as `type:severity:note`. */
export function exceptions(h: TestHost, id: JobId): string[] {
  return h
    .eventlog(id)
    .filter((e) => e.name === "exception")
    .map((e) => `${String(e.context?.type)}:${String(e.context?.severity)}:${String(e.context?.note)}`);
}

/** Writes an executable shell script `name` in `dir`; returns its path. */
export function writeScript(dir: string, name: string, body: string): string {
  const path = join(dir, name);
  writeFileSync(path, `#!/bin/sh\n${body}\n`);
  chmodSync(path, 0o755);
  return path;
}

/**
 * Advances simulated time in steps of `stepMs`, letting real processes run, until `cond`
 * holds; fails after `realMs` of real time, with `detail()` in the message when given.
 */
export async function settle(t: TestHost, cond: () => boolean, stepMs = 10, realMs = 15_000, detail?: () => string): Promise<void> {
  const end = Date.now() + realMs;
  while (!cond() && Date.now() < end) {
    await t.advance(stepMs);
    await new Promise((r) => setTimeout(r, 5));
  }
  if (!cond()) throw new Error(detail ? `condition not reached; ${detail()}` : "condition not reached");
}
