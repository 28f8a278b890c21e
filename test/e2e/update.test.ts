/** `jobtap update` end to end: duration updates through the real daemon and its plugins. */
import { describe, expect, it } from "vitest";
import { daemonForSuite, waitFor } from "./harness.js";

describe("jobtap update", { timeout: 90_000 }, () => {
  const d = daemonForSuite();

  const duration = (id: string) => JSON.parse(d.cli(["job", "info", id, "jobspec"]).stdout).attributes.system.duration as number;

  it("sets absolute, relative and unlimited durations", () => {
    const id = d.cli(["submit", "--urgency", "hold", "-t", "10m", "true"]).stdout.trim();
    expect(d.cli(["update", id, "duration=+1m"])).toMatchObject({ status: 0, stderr: "" });
    expect(duration(id)).toBe(660);
    expect(d.cli(["update", "-v", id, "duration=-30s"]).stdout).toBe(`${id}: updated attributes.system.duration to 630\n`);
    expect(duration(id)).toBe(630);
    expect(d.cli(["update", id, "duration=1h"]).status).toBe(0);
    expect(duration(id)).toBe(3600);
    expect(d.cli(["update", "-n", id, "duration=+1m"]).stdout).toBe('{"attributes.system.duration":3660}\n');
    expect(duration(id)).toBe(3600);
    expect(d.cli(["update", id, "duration=inf"]).status).toBe(0);
    expect(duration(id)).toBe(0);
    const rel = d.cli(["update", id, "duration=+1m"]);
    expect(rel.status).toBe(1);
    expect(rel.stderr).toBe(`jobtap update: ${id}: the job's duration is unlimited; a relative duration update needs a finite one\n`);
    const events = d.cli(["eventlog", "--json", id]).stdout.trim().split("\n").map((l) => JSON.parse(l));
    expect(events.filter((e) => e.name === "jobspec-update").map((e) => e.context)).toEqual([
      { "attributes.system.duration": 660 },
      { "attributes.system.duration": 630 },
      { "attributes.system.duration": 3600 },
      { "attributes.system.duration": 0 },
    ]);
    d.cli(["cancel", id]);
  });

  it("prints the refusal of a key no plugin allows, and of an inactive job", async () => {
    const id = d.cli(["submit", "--urgency", "hold", "true"]).stdout.trim();
    const r = d.cli(["update", id, "myattr=1"]);
    expect(r.status).toBe(1);
    expect(r.stderr).toMatch(/^jobtap update: .*attributes\.system\.myattr.*\n$/);
    expect(d.cli(["update", id, "duration=soon"]).status).toBe(2);
    d.cli(["cancel", id]);
    await waitFor(() => d.job(id)?.state === "INACTIVE", 20_000, "the job to end");
    const late = d.cli(["update", id, "duration=1m"]);
    expect(late.status).toBe(1);
    expect(late.stderr).toMatch(/inactive/);
  });
});
