/**
 * Driving a test host whose plugins answer from worker threads (real time) while the
 * manager runs on a simulated clock: time moves only when no isolated call is in flight,
 * so no deadline passes by accident.
 */
import { afterEach, expect } from "vitest";
import type { JobId } from "../../src/manager/base/ids.js";
import { createTestHost, type TestHost } from "../../src/testhost.js";
import type { LoadOptions } from "../../src/plugins/host.js";

export const fixture = (name: string) => new URL(`../fixtures/plugins/${name}`, import.meta.url).pathname;

let t: TestHost | undefined;
afterEach(async () => {
  await t?.close();
  t = undefined;
});

/** A test host with `plugin` loaded isolated (deadline 5 s of simulated time). */
export function isolatedHost(plugin: string, opts: LoadOptions = {}): Promise<TestHost> {
  return hostWith([[plugin, { isolate: { heapMb: 64 }, deadlineMs: 5000, ...opts }]]);
}

/** A test host with fixture plugins loaded in order, each with its load options. */
export async function hostWith(plugins: Array<[string, LoadOptions, Record<string, unknown>?]>): Promise<TestHost> {
  t = await createTestHost({});
  for (const [plugin, opts, conf] of plugins) await t.plugins.load(fixture(plugin), conf ?? {}, opts);
  return t;
}

/**
 * Drives the simulated clock while answers from the worker (real time) are awaited: time
 * moves only when no isolated call is in flight, so no deadline passes by accident.
 */
export async function until(host: TestHost, done: () => boolean, maxMs = 60_000): Promise<void> {
  const end = host.clock.now() + maxMs;
  while (!done() && host.clock.now() < end) {
    const realEnd = Date.now() + 200;
    while (host.plugins.isolatedInFlight() > 0 && Date.now() < realEnd) await new Promise((r) => setTimeout(r, 1));
    await host.advance(100);
  }
}

export async function complete(host: TestHost, id: JobId, maxMs = 60_000): Promise<void> {
  await until(host, () => host.job(id).state === "INACTIVE", maxMs);
  expect(host.job(id).state).toBe("INACTIVE");
}

/** Submits a job named `name`; the returned function drives the clock until it is accepted
 *  (a submit waits for job.new). */
export function startSubmit(host: TestHost, name?: string, runFor = 0, extra: Record<string, unknown> = {}): () => Promise<JobId> {
  let id: JobId | undefined;
  let err: unknown;
  const system = { exec: { test: { run_duration: runFor } }, ...(name ? { job: { name } } : {}), ...extra };
  host.manager.submit({ ...testSpec(), attributes: { system } }).then((v) => (id = v), (e: unknown) => (err = e));
  return async () => {
    await until(host, () => id !== undefined || err !== undefined);
    if (err !== undefined) throw err;
    return id!;
  };
}

export function submit(host: TestHost, name?: string, runFor = 0, extra: Record<string, unknown> = {}): Promise<JobId> {
  return startSubmit(host, name, runFor, extra)();
}

/** Real time until `cond` holds. */
export async function realUntil(cond: () => boolean): Promise<void> {
  const end = Date.now() + 10_000;
  while (!cond() && Date.now() < end) await new Promise((r) => setTimeout(r, 2));
  expect(cond()).toBe(true);
}

export function testSpec() {
  return {
    version: 1,
    resources: [{ type: "slot", count: 1, label: "task", with: [{ type: "core", count: 1 }] }],
    tasks: [{ command: ["true"], slot: "task", count: { per_slot: 1 } }],
    attributes: { system: {} },
  };
}

/** Waits (real time) until the host log has a line matching `re`. */
export async function logged(host: TestHost, re: RegExp): Promise<string> {
  const end = Date.now() + 10_000;
  for (;;) {
    const line = host.log.find((l) => re.test(l));
    if (line !== undefined) return line;
    if (Date.now() > end) throw new Error(`nothing logged matching ${re}:\n${host.log.join("\n")}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

