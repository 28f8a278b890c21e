/**
 * `[policy]`'s own plain keys are checked at config check: a misspelt one is an error naming
 * its TOML path, while the tables Flux and the plugins keep there pass untouched.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { checkConfigFile } from "../../src/server/config.js";
import { tempDir } from "./helpers.js";

const check = (toml: string) => {
  const { dir, cleanup } = tempDir();
  try {
    const file = join(dir, "jobtap.toml");
    writeFileSync(file, toml);
    return checkConfigFile(file, {}).errors.map((e) => e.message);
  } finally {
    cleanup();
  }
};

describe("[policy] keys", () => {
  it("a misspelt plain key is an error naming [policy].KEY and the keys that are read", () => {
    const errors = check('[policy]\nsystem-periodic-holds = "NumJobStarts > 3"\nstart = "true"\n');
    expect(errors).toEqual([expect.stringMatching(/^\[policy\]\.system-periodic-holds: unknown key; \[policy\] reads start, rank, preempt, startd-attrs, condor_config, system-periodic-hold,/)]);
  });

  it("Flux's and the plugins' tables under [policy] and every key jobtap reads pass", () => {
    const toml = [
      "[policy]",
      'start = "true"', 'rank = "0"', 'preempt = "false"',
      'system-periodic-hold = "false"', 'system-periodic-hold-reason = "\\"site\\""', 'system-periodic-hold-subcode = "1"',
      "periodic-expr-interval = 30",
      "[policy.startd-attrs]", 'HasThing = "true"',
      "[policy.limits]", 'duration = "1h"',
      "[policy.jobspec.defaults.system]", 'duration = "30m"',
      "[policy.site-plugin]", "anything = 1",
    ].join("\n");
    expect(check(`${toml}\n`)).toEqual([]);
  });

  it("a knob refused by name keeps its own message, not an unknown-key one", () => {
    const errors = check('[policy]\nsuspend = "true"\n');
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatch(/^\[policy\]\.suspend: .*SUSPEND/);
    expect(check('[policy]\nsystem-periodic-vacate = "true"\n')).toEqual([expect.stringMatching(/^\[policy\]\.system-periodic-vacate: SYSTEM_PERIODIC_VACATE is not supported/)]);
  });
});
