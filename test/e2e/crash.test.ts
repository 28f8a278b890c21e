/**
 * The crash campaign's short version (the full one is `npm run bench -- crash --runs N`):
 * a real daemon under concurrent socket and CLI load with real processes, SIGKILLed at a
 * random moment, restarted on the same statedir: no acknowledged job lost, every state
 * consistent with its eventlog, all run to completion, none twice, no orphaned process,
 * afterok dependencies respected.
 */
import { describe, expect, it } from "vitest";
import { crashRun } from "../../bench/lib/crash.js";
import { requireBuild } from "./harness.js";

describe("crash campaign (short)", () => {
  it("a SIGKILL under load loses nothing and leave nothing inconsistent, stuck, doubled or orphaned", async () => {
    requireBuild();
    for (let run = 0; run < 1; run++) {
      const f = await crashRun({ minMs: 400, maxMs: 1200, clients: 4, settleMs: 60_000 });
      expect(f.acknowledged).toBeGreaterThan(0);
      expect({ ...f, acknowledged: 0 }).toEqual({
        runs: 1, acknowledged: 0, lost: 0, inconsistent: 0, stuck: 0, orphaned: 0, ran_twice: 0, deps_broken: 0, problems: [],
      });
    }
  }, 180_000);
});
