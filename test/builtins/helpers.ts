/** Shared set-up for builtin plugin scenarios: a real in-memory manager with every builtin. */
import { createTestHost, type TestHost, type TestHostOptions, type TestJob } from "../../src/plugins/testhost.js";
import { ErrorCode, isJobtapError } from "../../src/errors.js";
import type { JobId } from "../../src/manager/ids.js";

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
