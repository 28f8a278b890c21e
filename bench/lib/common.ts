/**
 * Helpers shared by the job benches (a module under bench/lib/, so bench/run.mjs does not
 * offer it as a bench of its own).
 */
import type { Jobspec } from "../../src/manager/port/records.js";

/** The value after `--NAME` in a bench's arguments, or `fallback`. */
export function arg(args: string[], name: string, fallback: string): string {
  const i = args.indexOf(`--${name}`);
  return i >= 0 && args[i + 1] !== undefined ? args[i + 1]! : fallback;
}

/** One-core job for the test executor that "runs" for 0 s: the manager's cost, nothing else. */
export function testJobspec(): Jobspec {
  return {
    version: 1,
    resources: [{ type: "slot", count: 1, label: "task", with: [{ type: "core", count: 1 }] }],
    tasks: [{ command: ["true"], slot: "task", count: { per_slot: 1 } }],
    attributes: { system: { duration: 0, exec: { test: { run_duration: "0s" } } } },
  };
}
