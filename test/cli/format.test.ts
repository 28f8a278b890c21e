import { describe, expect, it } from "vitest";
import { DEFAULT_FORMAT, formatTable, parseFormat } from "../../src/cli/format.js";
import { parseStateFilter } from "../../src/cli/jobs.js";
import { confFromPairs } from "../../src/cli/plugin.js";
import { parseUrgency } from "../../src/cli/jobspec.js";
import type { JobView } from "../../src/server/protocol.js";
import { loadUserTable } from "../../src/manager/base/users.js";

const users = { name: (uid: number) => (uid === 1000 ? "alice" : String(uid)), uid: () => undefined };

function job(over: Partial<JobView>): JobView {
  return {
    id: "ƒ2Ab", userid: 1000, name: "sleep", state: "SCHED", urgency: 16, priority: 16,
    t_submit: 100, ntasks: 1, annotations: null, dependencies: [], ...over,
  };
}

describe("jobs table", () => {
  it("prints flux-like columns with status abbreviations and contextual info", () => {
    const out = formatTable(
      [
        job({ state: "DEPEND", priority: -1, dependencies: ["after-finish=ƒ1"] }),
        job({ state: "RUN", t_run: 110, t_start: 110 }),
        job({ state: "INACTIVE", result: "CANCELED", t_run: 110, t_start: 110, t_cleanup: 200, exception: { type: "cancel", severity: 0, note: "" } }),
        job({ urgency: 0, priority: 0 }),
      ],
      DEFAULT_FORMAT,
      { users, now: 125 },
    );
    expect(out.split("\n")).toEqual([
      "       JOBID USER     NAME       ST URG        PRI     TIME INFO",
      "        ƒ2Ab alice    sleep       D  16          -        - depends:after-finish=ƒ1",
      "        ƒ2Ab alice    sleep       R  16         16      15s",
      "        ƒ2Ab alice    sleep      CA  16         16     1.5m cancel",
      "        ƒ2Ab alice    sleep       S   0          0        - held",
      "",
    ]);
  });

  it("names the signal that killed a job, says where a routed job went, and TIME is - until a start", () => {
    const out = formatTable(
      [
        job({ state: "INACTIVE", result: "FAILED", waitstatus: 15, returncode: -15, t_run: 110, t_start: 110, t_cleanup: 112 }),
        job({ state: "INACTIVE", result: "FAILED", waitstatus: 3 << 8, returncode: 3, t_run: 110, t_start: 110, t_cleanup: 112 }),
        job({ state: "INACTIVE", result: "FAILED", t_run: 110, t_cleanup: 110, exception: { type: "exec", severity: 0, note: "no such command" } }),
        job({ state: "INACTIVE", result: "COMPLETED", waitstatus: 0, returncode: 0, routed: "ƒ9Zz", t_run: 110, t_start: 111, t_cleanup: 115 }),
      ],
      "{runtime:>5} {returncode:>3} {info}",
      { users, now: 125 },
    );
    expect(out.split("\n")).toEqual([" TIME  RC INFO", "   2s -15 killed by SIGTERM", "   2s   3 status=3", "    -     exec: no such command", "   5s   0 routed: ƒ9Zz", ""]);
  });

  it("accepts -o formats and rejects unknown fields by name", () => {
    expect(formatTable([job({ name: "averyveryverylongname" })], "{id} {name:<8.8}|", { users, now: 0 }, false)).toBe(
      "ƒ2Ab averyve+|\n",
    );
    expect(() => parseFormat("{id} {bogus}")).toThrow('-o: unknown field "bogus"');
  });
});

describe("small parsers", () => {
  it("maps --filter words to states and results", () => {
    expect(parseStateFilter("pending")).toEqual({ states: ["DEPEND", "PRIORITY", "SCHED"], results: [] });
    expect(parseStateFilter("run,completed")).toEqual({ states: ["RUN"], results: ["COMPLETED"] });
    expect(() => parseStateFilter("sleeping")).toThrow('--filter: unknown state or result "sleeping"');
  });

  it("builds nested plugin conf from dotted KEY=VAL pairs", () => {
    expect(confFromPairs(["a.b=1", "a.c=x", "d=[1,2]", "e=true"])).toEqual({ a: { b: 1, c: "x" }, d: [1, 2], e: true });
    expect(() => confFromPairs(["a=1", "a.b=2"])).toThrow('"a" is already a value');
    expect(() => confFromPairs(["novalue"])).toThrow('"novalue" is not KEY=VALUE');
  });

  it("reads urgency values and names", () => {
    expect([parseUrgency("hold"), parseUrgency("expedite"), parseUrgency("default"), parseUrgency("7")]).toEqual([0, 31, 16, 7]);
    expect(() => parseUrgency("32")).toThrow('urgency "32": expected 0..31');
  });

  it("maps uids to names through a passwd file", () => {
    const t = loadUserTable("/etc/passwd");
    expect(t.name(0)).toBe("root");
    expect(t.uid("root")).toBe(0);
    expect(t.name(987654)).toBe("987654");
  });
});
