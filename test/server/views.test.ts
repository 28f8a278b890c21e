/** The daemon's job view: what it derives from the eventlog for `jobs` (issue 32's items). */
import { describe, expect, it } from "vitest";
import type { JobId } from "../../src/manager/base/ids.js";
import type { EventEntry } from "../../src/manager/port/records.js";
import { jobView } from "../../src/server/views.js";
import type { JobInfo } from "../../src/manager/engine/views.js";

const info = (over: Partial<JobInfo> = {}): JobInfo => ({
  id: 1n as JobId, userid: 1000, state: "INACTIVE", urgency: 16, priority: 16, t_submit: 100, name: "x", ...over,
});
const ev = (name: string, timestamp: number, context?: Record<string, unknown>): EventEntry => ({ name, timestamp, ...(context ? { context } : {}) }) as EventEntry;

describe("job views", () => {
  it("a routed original names its copy; start time and returncode come with the view", () => {
    const log = [
      ev("submit", 100),
      ev("jobspec-update", 101, { "attributes.user.classad.RoutedToJobId": JSON.stringify("ƒ9Zz") }),
      ev("alloc", 102),
      ev("start", 103),
      ev("finish", 104, { status: 15 }),
    ];
    const v = jobView(info({ result: "FAILED", waitstatus: 15 }), log, undefined);
    expect(v).toMatchObject({ routed: "ƒ9Zz", t_run: 102, t_start: 103, waitstatus: 15, returncode: -15 });
    expect(jobView(info({ result: "FAILED", waitstatus: 2 << 8 }), [ev("alloc", 1)], undefined)).toMatchObject({ returncode: 2 });
    const plain = jobView(info(), [ev("alloc", 1), ev("jobspec-update", 2, { "attributes.user.classad.RoutedToJobId": "not a string literal" })], undefined);
    expect(plain.routed).toBeUndefined();
    expect(plain.t_start).toBeUndefined();
  });
});
