/**
 * `job why`'s better-analyze part: the matchmaking policy's reasons (policy/analyze-why.ts)
 * through JobManager.why on the real manager with a simulated clock.
 */
import { describe, expect, it } from "vitest";
import { carveSlots } from "../../src/manager/scheduler/slots.js";
import { slotPolicies } from "../../src/manager/policy/slot-policy.js";
import type { Jobspec } from "../../src/manager/port/records.js";
import { simManager, submitNow, testJob } from "../manager/helpers.js";

const GiB = 2 ** 30;
const POOL = { cores: 4, gpus: 0, memory: 4 * GiB };
const LAYOUT = [{ count: 4, cores: 1 }];

function adJob(classad: Record<string, string>): Jobspec {
  const js = testJob("1h");
  js.attributes.user = { classad };
  return js;
}

async function manager(perType: Array<Record<string, unknown>> = []) {
  return simManager({ resources: POOL, slots: LAYOUT, slotPolicy: slotPolicies(carveSlots(POOL, LAYOUT), {}, perType) });
}

const codes = (reasons: Array<{ code: string }>) => reasons.map((r) => r.code);

describe("job why: Requirements and START, as better-analyze", () => {
  it("counts each clause's slots and names the first clause no slot satisfies, with a fix", async () => {
    const s = await manager();
    const id = await submitNow(s, adJob({ Requirements: "TARGET.SlotID >= 2 && TARGET.Cpus >= 8" }));
    await s.clock.advance(1);
    const why = await s.mgr.why(id);
    const policy = why.reasons.filter((r) => r.source === "policy");
    expect(codes(policy)).toEqual(["match-slots", "requirements-clause", "requirements-clause", "unsatisfied-clause"]);
    expect(policy[0]!.figures).toEqual({ matching: 0, slots: 4 });
    expect(policy[1]!.figures).toMatchObject({ clause: 1, matching: 3 });
    expect(policy[2]!.figures).toMatchObject({ clause: 2, matching: 0 });
    expect(policy[3]!.text).toMatch(/no slot satisfies clause 2 .*Cpus >= 8.*; TARGET\.Cpus >= 1 would match/);
  });

  it("names the slots whose START refuses the job", async () => {
    const s = await manager([{ start: "MY.SlotID == 4" }]);
    await submitNow(s, testJob("1h")); // takes slot 4, the only one START admits
    const other = await submitNow(s, testJob("1h"));
    await s.clock.advance(1);
    const why = await s.mgr.why(other);
    const start = why.reasons.find((r) => r.code === "slot-start");
    expect(start?.figures).toEqual({ refusing: 3, slots: 4 });
    expect(start?.text).toContain("slot1@");
  });

  it("says nothing of the policy for a job on the fast path", async () => {
    const s = await manager();
    for (let i = 0; i < 5; i++) await submitNow(s, testJob("1h"));
    const last = await submitNow(s, testJob("1h"));
    await s.clock.advance(1);
    const why = await s.mgr.why(last);
    expect(why.reasons.some((r) => r.source === "policy")).toBe(false);
    expect(codes(why.reasons)).toContain("queue-position");
  });
});
