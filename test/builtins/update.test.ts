import { describe, expect, it } from "vitest";
import { closeAfterEach } from "../closing.js";
import { ErrorCode } from "../../src/errors.js";
import { formatJobId, type JobId } from "../../src/manager/base/ids.js";
import type { PluginContext } from "../../src/plugin.js";
import { ownerAllowAny } from "../../plugins-builtin/update-duration/index.js";
import { host, until, type TestHost } from "./helpers.js";

let h: TestHost;
closeAfterEach(() => h);

const GUEST = 5000;
const DURATION = "attributes.system.duration";
const limits = { queues: { debug: { policy: { limits: { duration: "1h" } } } } };
const durationOf = (id: JobId) => h.manager.jobspec(id).attributes.system?.duration;

async function code(p: Promise<unknown>): Promise<string> {
  try {
    await p;
  } catch (e) {
    return `${(e as { code: string }).code}: ${(e as Error).message}`;
  }
  return "accepted";
}

describe("job update (JobManager.update)", () => {
  it("a guest updates a pending job's duration: jobspec-update, priority recomputed", async () => {
    h = await host(limits);
    const id = await h.submit({ userid: GUEST, urgency: 0, system: { duration: 600, queue: "debug" } });
    expect(h.job(id).state).toBe("SCHED");
    await h.manager.update(id, { [DURATION]: 1200 }, { userid: GUEST });
    const names = h.events(id);
    expect(names.slice(names.indexOf("jobspec-update"))).toEqual(["jobspec-update", "priority"]);
    expect(h.eventlog(id).find((e) => e.name === "jobspec-update")?.context).toEqual({ [DURATION]: 1200 });
    expect(durationOf(id)).toBe(1200);
    expect(h.job(id).state).toBe("SCHED");
  });

  it("a guest's update is re-validated: over the queue limit is refused and nothing changes", async () => {
    h = await host(limits);
    const id = await h.submit({ userid: GUEST, urgency: 0, system: { duration: 600, queue: "debug" } });
    const before = h.events(id);
    const msg = await code(h.manager.update(id, { [DURATION]: 7200 }, { userid: GUEST }));
    expect(msg).toMatch(/^JOB_REJECTED: job .*: requested duration \(2h\) exceeds policy limit of 1h for queue debug$/);
    expect(h.events(id)).toEqual(before);
    expect(durationOf(id)).toBe(600);
  });

  it("owner bypass: validated, applied over the limit, job made immutable for guests", async () => {
    h = await host(limits);
    const id = await h.submit({ userid: GUEST, urgency: 0, system: { duration: 600, queue: "debug" } });
    await h.manager.update(id, { [DURATION]: 7200 });
    expect(durationOf(id)).toBe(7200);
    const flags = h.eventlog(id).find((e) => e.name === "set-flags");
    expect(flags?.context).toEqual({ flags: ["immutable"] });
    expect(h.events(id).indexOf("set-flags")).toBeLessThan(h.events(id).indexOf("jobspec-update"));
    expect(await code(h.manager.update(id, { [DURATION]: 60 }, { userid: GUEST }))).toMatch(
      /^PERMISSION_DENIED: .*job is immutable due to previous instance owner update$/,
    );
  });

  it("is all or nothing: an unsupported key refuses the whole request", async () => {
    h = await host();
    const id = await h.submit({ urgency: 0, system: { duration: 600 } });
    const before = h.events(id);
    expect(await code(h.manager.update(id, { [DURATION]: 60, "attributes.system.job.name": "x" }))).toMatch(
      /^JOB_REJECTED: .*update of attributes\.system\.job\.name not supported$/,
    );
    expect(h.events(id)).toEqual(before);
    expect(durationOf(id)).toBe(600);
  });

  it("duration rules: negative refused; a running job needs the owner; owner moves the expiration", async () => {
    h = await host();
    const id = await h.submit({ userid: GUEST, runDuration: 100, system: { duration: 600 } });
    expect(await code(h.manager.update(id, { [DURATION]: -1 }, { userid: GUEST }))).toMatch(/duration must not be negative$/);
    await until(h, () => h.events(id).includes("start"));
    expect(await code(h.manager.update(id, { [DURATION]: 900 }, { userid: GUEST }))).toMatch(
      /duration update of running job requires instance owner privileges$/,
    );
    await h.manager.update(id, { [DURATION]: 900 });
    const start = (h.eventlog(id).find((e) => e.name === "alloc")?.context?.R as { execution: { starttime: number } }).execution.starttime;
    expect(h.eventlog(id).find((e) => e.name === "resource-update")?.context).toEqual({ expiration: start + 900 });
  });

  it("request checks: bad keys, unknown, inactive, other users' jobs", async () => {
    h = await host();
    const id = await h.submit({ userid: GUEST, urgency: 0 });
    expect(await code(h.manager.update(id, { "system.duration": 5 }))).toMatch(/^INVALID_ARGUMENT: .*one or more jobspec updates are invalid/);
    expect(await code(h.manager.update(id, {}))).toMatch(/^INVALID_ARGUMENT/);
    expect(await code(h.manager.update(id, { [DURATION]: 5 }, { userid: GUEST + 1 }))).toMatch(
      /^PERMISSION_DENIED: .*guests may only update their own jobs$/,
    );
    expect(await code(h.manager.update(12345n as JobId, { [DURATION]: 5 }))).toMatch(/^UNKNOWN_JOB: .*unknown job id$/);
    h.manager.cancel(id);
    await until(h, () => h.job(id).state === "INACTIVE");
    expect(await code(h.manager.update(id, { [DURATION]: 5 }))).toMatch(/^JOB_INACTIVE: .*job is inactive$/);
  });

  it("a plugin's job.update.<key> may add updates; job.update notifies every plugin", async () => {
    const seen: unknown[] = [];
    const plugin = (p: PluginContext) => {
      p.on("job.update.attributes.system.job.name", ({ value }) => ({
        updates: { "attributes.user.renamed": true, "attributes.system.job.name": String(value).toUpperCase() },
      }));
      p.on("job.update", ({ updates }) => void seen.push(updates));
    };
    h = await host({}, { plugin });
    const id = await h.submit({ urgency: 0, name: "a" });
    await h.manager.update(id, { "attributes.system.job.name": "b" });
    expect(h.job(id).name).toBe("B");
    expect(seen).toEqual([{ "attributes.system.job.name": "B", "attributes.user.renamed": true }]);
  });

  it("an update storing attributes.user.classad text that does not parse is refused like at submit", async () => {
    const plugin = (p: PluginContext) => {
      p.on("job.update.attributes.user.classad.Rank", () => ({}));
    };
    h = await host({}, { plugin });
    const id = await h.submit({ urgency: 0 });
    expect(await code(h.manager.update(id, { "attributes.user.classad.Rank": "Memory +* 2" }))).toMatch(
      /^JOB_REJECTED: .*attributes\.user\.classad\.Rank: ClassAd syntax error at column \d+/,
    );
    expect(h.events(id)).not.toContain("jobspec-update");
    await h.manager.update(id, { "attributes.user.classad.Rank": "Memory * 2" });
    expect(h.events(id)).toContain("jobspec-update");
  });

  it("feasibility: the updated job is checked against the whole resource pool", async () => {
    // A site plugin lets the owner resize a pending job and asks for feasibility, as
    // Flux's update-queue does for a queue change.
    const plugin = (p: PluginContext) => {
      p.on("job.update.resources", () => ({ feasibility: true }));
    };
    h = await host({}, { plugin, resources: { cores: 4 } });
    const id = await h.submit({ urgency: 0, cores: 1 });
    const resources = (n: number) => [{ type: "slot", count: 1, label: "task", with: [{ type: "core", count: n }] }];
    expect(await code(h.manager.update(id, { resources: resources(8) }))).toBe(
      `JOB_REJECTED: job ${formatJobId(id)}: unsatisfiable request: 8 cores requested, 4 available`,
    );
    expect(h.events(id)).not.toContain("jobspec-update");
    await h.manager.update(id, { resources: resources(4) });
    expect(h.events(id)).toContain("jobspec-update");
  });

  it("owner-allow-any reads booleans and 0/1 and names the key otherwise", () => {
    expect(ownerAllowAny({})).toBe(true);
    expect(ownerAllowAny({ "owner-allow-any": 0 })).toBe(false);
    expect(() => ownerAllowAny({ "owner-allow-any": "yes" })).toThrow('owner-allow-any: must be a boolean (or 0/1), got "yes"');
  });
});
