import { describe, expect, it } from "vitest";
import { EVENT_NAMES } from "../../src/manager/core/events.js";
import { asJobId } from "../../src/manager/base/ids.js";
import type { EventEntry } from "../../src/manager/port/records.js";
import { STATES, STRICT_EVENTS, TRANSITIONS, type State } from "../../src/manager/base/states.js";
import { applyEvent, eventPosted, newJobCore, resultOf, transition, type JobCore } from "../../src/manager/core/transition.js";
import { jobspec } from "./helpers.js";

/** A valid context for every known event. */
const CONTEXTS: Record<string, Record<string, unknown> | undefined> = {
  submit: { urgency: 16, userid: 1, flags: 0, version: 1 },
  "dependency-add": { description: "d" },
  "dependency-remove": { description: "d" },
  priority: { priority: 7 },
  urgency: { urgency: 20, userid: 1 },
  alloc: { R: { version: 1 } },
  "prolog-start": { description: "p" },
  "prolog-finish": { description: "p", status: 0 },
  finish: { status: 0 },
  release: { ranks: "all", final: true },
  "epilog-start": { description: "e" },
  "epilog-finish": { description: "e", status: 0 },
  exception: { type: "test", severity: 0, note: "" },
  memo: { a: 1 },
  "jobspec-update": { "attributes.system.duration": 10 },
  "resource-update": { expiration: 100 },
  "set-flags": { flags: ["debug"] },
  annotations: { annotations: { sched: { x: 1 } } },
};

const ev = (name: string, context = CONTEXTS[name], timestamp = 1): EventEntry =>
  context === undefined ? { timestamp, name } : { timestamp, name, context };

/** Drives a fresh job to `state` along the normal path. */
function jobIn(state: State): JobCore {
  const path: Array<[string, Record<string, unknown>?]> = [
    ["submit"],
    ["validate"],
    ["depend"],
    ["priority"],
    ["alloc"],
    ["finish"],
    ["clean"],
  ];
  let job = newJobCore(asJobId(1n), jobspec());
  for (const [name] of path) {
    if (job.state === state) return job;
    const r = transition(job, ev(name));
    if (!r.ok) throw new Error(r.error);
    job = r.job;
  }
  if (job.state !== state) throw new Error(`could not reach ${state}`);
  return job;
}

describe("TRANSITIONS table", () => {
  it("every (state, event) pair behaves as the table and STRICT_EVENTS say", () => {
    let walked = 0;
    for (const state of STATES) {
      for (const name of EVENT_NAMES) {
        if (name === "invalidate") continue; // read-only marker, checked below
        const job = jobIn(state);
        const r = transition(job, ev(name));
        const table = TRANSITIONS[state] as Record<string, State>;
        const strict = STRICT_EVENTS[name];
        const label = `${state} + ${name}`;
        walked++;
        if (state === "INACTIVE") {
          expect(r.ok, label).toBe(false); // eventlog is read-only
        } else if (name === "exception" && state === "NEW") {
          expect(r.ok, label).toBe(false); // fatal exception refused in NEW
        } else if (name === "dependency-remove" && (state === "NEW" || state === "DEPEND")) {
          expect(r.ok, label).toBe(false); // "d" is not outstanding
        } else if (strict && !strict.includes(state)) {
          expect(r.ok, label).toBe(false);
        } else {
          expect(r.ok, label).toBe(true);
          if (r.ok) expect(r.job.state, label).toBe(table[name] ?? state);
        }
      }
    }
    expect(walked).toBe(STATES.length * (EVENT_NAMES.length - 1));
  });

  it("applyEvent (the engine's in-place path) folds every (state, event) pair exactly as transition() does", () => {
    for (const state of STATES) {
      for (const name of [...EVENT_NAMES, "plugin-event"]) {
        const label = `${state} + ${name}`;
        const pure = jobIn(state);
        const before = structuredClone(pure);
        const r = transition(pure, ev(name));
        expect(pure, `${label}: transition() left its input alone`).toEqual(before);
        const inPlace = jobIn(state);
        const error = applyEvent(inPlace, ev(name));
        if (r.ok) {
          expect(error, label).toBeUndefined();
          expect(inPlace, label).toEqual(r.job);
        } else {
          expect(error, label).toBe(r.error);
          expect(inPlace, `${label}: a refused event leaves the job untouched`).toEqual(before);
        }
      }
    }
  });

  it("non-fatal exceptions never change state and are recorded as posted", () => {
    for (const state of ["DEPEND", "PRIORITY", "SCHED", "RUN", "CLEANUP"] as const) {
      const r = transition(jobIn(state), ev("exception", { type: "x", severity: 3, note: "n" }));
      expect(r.ok && r.job.state).toBe(state);
      expect(r.ok && eventPosted(r.job, "exception")).toBe(true);
    }
  });

  it("a fatal exception in CLEANUP keeps the first end event", () => {
    const cleanup = jobIn("CLEANUP");
    const r = transition(cleanup, ev("exception", { type: "cancel", severity: 0, note: "" }));
    expect(r.ok && r.job.state).toBe("CLEANUP");
    expect(r.ok && r.job.endEvent?.name).toBe("finish");
  });

  it("invalidate makes the eventlog read-only", () => {
    const r = transition(jobIn("NEW"), ev("invalidate"));
    expect(r.ok && r.job.readonly).toBe(true);
    const after = r.ok ? transition(r.job, ev("validate")) : r;
    expect(after.ok).toBe(false);
  });

  it("refuses bad contexts naming the event", () => {
    const r = transition(jobIn("PRIORITY"), ev("priority", { priority: -5 }));
    expect(r.ok).toBe(false);
    expect(!r.ok && r.error).toMatch(/"priority".*0\.\.4294967295/);
    expect(transition(jobIn("RUN"), ev("set-flags", { flags: ["waitable"] })).ok).toBe(false);
  });
});

describe("recorded fields", () => {
  it("dependencies form a grudge set: duplicates ignored, re-adding after removal does not re-block", () => {
    let job = jobIn("DEPEND");
    const step = (name: string, description: string) => {
      const r = transition(job, ev(name, { description }));
      if (!r.ok) throw new Error(r.error);
      job = r.job;
    };
    step("dependency-add", "a");
    step("dependency-add", "a");
    expect(job.dependencies).toEqual(["a"]);
    step("dependency-remove", "a");
    step("dependency-add", "a");
    expect(job.dependencies).toEqual([]);
  });

  it("memo merges into annotations.user with null deleting", () => {
    let r = transition(jobIn("SCHED"), ev("memo", { a: 1, b: 2 }));
    r = r.ok ? transition(r.job, ev("memo", { a: null })) : r;
    expect(r.ok && r.job.annotations).toEqual({ user: { b: 2 } });
  });

  it("jobspec-update sets dotted paths without touching the original", () => {
    const before = jobIn("SCHED");
    const r = transition(before, ev("jobspec-update", { "attributes.system.duration": 60 }));
    expect(r.ok && r.job.jobspec.attributes.system?.duration).toBe(60);
    expect(before.jobspec.attributes.system?.duration).toBe(0);
    expect(r.ok && r.job.state).toBe("PRIORITY");
  });

  it("priority is ignored outside PRIORITY/SCHED; urgency only kicks SCHED back", () => {
    const run = transition(jobIn("RUN"), ev("priority", { priority: 99 }));
    expect(run.ok && run.job.priority).toBe(7);
    const dep = transition(jobIn("DEPEND"), ev("urgency"));
    expect(dep.ok && [dep.job.state, dep.job.urgency]).toEqual(["DEPEND", 20]);
  });

  it("results: COMPLETED, FAILED, CANCELED, TIMEOUT", () => {
    const end = (name: string, context: Record<string, unknown>) => {
      const r = transition(jobIn("RUN"), ev(name, context));
      return r.ok ? resultOf(r.job) : undefined;
    };
    expect(end("finish", { status: 0 })).toBe("COMPLETED");
    expect(end("finish", { status: 256 })).toBe("FAILED");
    expect(end("exception", { type: "cancel", severity: 0, note: "" })).toBe("CANCELED");
    expect(end("exception", { type: "timeout", severity: 0, note: "" })).toBe("TIMEOUT");
    expect(end("exception", { type: "exec", severity: 0, note: "" })).toBe("FAILED");
    expect(resultOf(jobIn("RUN"))).toBeUndefined();
  });
});

describe("smallInt", () => {
  it("keeps every number's value: whole ones in V8's small-integer range, and all the others as they are", async () => {
    const { smallInt } = await import("../../src/manager/base/numbers.js");
    const doubles = new Float64Array([0, 16, -1, 31, 2 ** 30 - 1, -(2 ** 30), 2 ** 30, 4294967295, -(2 ** 31) - 1, 0.5, -0, 1e300, NaN, Infinity]);
    for (const n of doubles) expect(Object.is(smallInt(n), n === 0 ? 0 : n)).toBe(true);
    expect(smallInt(4294967295)).toBe(4294967295); // PRIORITY_MAX: not wrapped to -1
  });
});
