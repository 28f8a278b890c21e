/**
 * Plugin faults, as a campaign: in-process plugins misbehave in every way the interface
 * allows, on every job topic, while real jobs run through the manager (SQLite store, the
 * builtins loaded, a simulated clock). Each job carries the fault it provokes in its jobspec
 * (`attributes.user.fault = "topic/mode"`); the plugin for that topic misbehaves for it and
 * behaves for every other job. Afterwards: the manager still works, every job's state is the
 * fold of its own eventlog, every job can still be ended, and every error a fault caused is
 * labelled with the faulty plugin's name.
 */
import { describe, expect, it } from "vitest";
import { SimulatedClock } from "../../src/manager/base/clock.js";
import { formatJobId, type JobId } from "../../src/manager/base/ids.js";
import { createJobManager, type JobManager } from "../../src/manager/manager.js";
import type { JobArgs, Jobspec } from "../../src/manager/port/records.js";
import { replayJob } from "../../src/manager/stored-job.js";
import type { JobtapHost } from "../../src/plugins/host.js";
import type { PluginContext } from "../../src/plugins/context.js";
import { jobtapPlugins } from "../../plugins-builtin/index.js";
import { closeAfterEach } from "../closing.js";
import { tempDir } from "../manager/helpers.js";

/** Every job topic a plugin can handle (job.dependency.* through a "chaos" scheme). */
const TOPICS = [
  "job.validate",
  "job.create",
  "job.new",
  "job.dependency.chaos",
  "job.state.depend",
  "job.state.priority",
  "job.priority.get",
  "job.state.sched",
  "job.state.run",
  "job.state.cleanup",
  "job.state.inactive",
  "job.event.start",
  "job.inactive-add",
  "job.inactive-remove",
  "job.destroy",
] as const;
type Topic = (typeof TOPICS)[number];

/** The ways a handler can misbehave. `marker` is in every message a fault produces. */
const MARKER = "chaos fault";
const MODES = ["throw", "throw-string", "throw-nothing", "reject", "hang", "bad-out", "bad-reject", "bad-out-type", "wrong-phase", "vanished-job", "late-post", "fatal-self"] as const;
type Mode = (typeof MODES)[number];

const DEADLINE_MS = 2_000;

/** A misbehaving handler for `topic`, run only for jobs that ask for it. */
function misbehave(p: PluginContext, mode: Mode, args: JobArgs, vanished: () => JobId | undefined): unknown {
  switch (mode) {
    case "throw":
      throw new Error(`${MARKER}: thrown`);
    case "throw-string":
      throw `${MARKER}: a thrown string`;
    case "throw-nothing":
      throw undefined;
    case "reject":
      return Promise.reject(new Error(`${MARKER}: rejected`));
    case "hang":
      return new Promise(() => undefined);
    case "bad-out":
      return { priority: `${MARKER}: not a number`, annotations: 7, R: "no" };
    case "bad-reject":
      return { reject: 12 };
    case "bad-out-type":
      return `${MARKER}: a string as OUT`;
    case "wrong-phase":
      // Events only the manager may post, and an event in the wrong state.
      p.postEvent(args.id, args.state === "RUN" ? "alloc" : "finish", { status: 0 });
      return undefined;
    case "vanished-job": {
      const gone = vanished() ?? (123456789n as JobId);
      p.raiseException(gone, "chaos", 0, `${MARKER}: on a vanished job`);
      p.postEvent(gone, "memo", { chaos: true });
      return undefined;
    }
    case "late-post":
      // After the job has moved on (or ended): a post and an exception on it, late.
      return new Promise<void>((resolve, reject) =>
        p.clock.setTimeout(() => {
          resolve();
          try {
            p.raiseException(args.id, "chaos", 0, `${MARKER}: late`);
            p.prologFinish(args.id, "never-started", 0);
          } catch (e) {
            reject(e);
          }
        }, 5_000),
      );
    case "fatal-self":
      p.raiseException(args.id, "chaos", 0, `${MARKER}: a fatal exception by the plugin`);
      return undefined;
  }
}

/** The plugin for one topic: misbehaves as the job asks, else does nothing. */
function chaosPlugin(topic: Topic, vanished: () => JobId | undefined) {
  return (p: PluginContext) => {
    const handler = (args: JobArgs) => {
      const fault = (args.jobspec?.attributes?.user as { fault?: string } | undefined)?.fault;
      if (fault === undefined || !fault.startsWith(`${topic}/`)) return undefined;
      if (topic === "job.new") p.subscribe(args.id);
      return misbehave(p, fault.slice(topic.length + 1) as Mode, args, vanished);
    };
    p.on(topic, handler as never);
    // job.event.start needs a subscription: every job that asks for an event fault gets one.
    if (topic === "job.event.start") {
      p.on("job.state.depend", ((args: JobArgs) => {
        const fault = (args.jobspec?.attributes?.user as { fault?: string } | undefined)?.fault;
        if (fault?.startsWith("job.event.start/")) p.subscribe(args.id);
      }) as never);
    }
  };
}

function jobFor(fault: string | undefined, runSeconds: number): Jobspec {
  const attributes: Jobspec["attributes"] = { system: { duration: 0, exec: { test: { run_duration: `${runSeconds}s` } } } };
  if (fault !== undefined) attributes.user = { fault };
  if (fault?.startsWith("job.dependency.chaos/")) attributes.system!.dependencies = [{ scheme: "chaos", value: "x" }];
  return {
    version: 1,
    resources: [{ type: "slot", count: 1, label: "task", with: [{ type: "core", count: 1 }] }],
    tasks: [{ command: ["true"], slot: "task", count: { per_slot: 1 } }],
    attributes,
  };
}

/** The state the job's own eventlog folds to. */
function foldedState(mgr: JobManager, id: JobId): string {
  const eventlog = mgr.eventlog(id).map((e) => `${JSON.stringify(e)}\n`).join("");
  const r = replayJob({ id, jobspec: JSON.stringify(mgr.jobspec(id)), eventlog });
  if ("error" in r) throw new Error(`job ${formatJobId(id)}: its eventlog does not fold: ${r.error}`);
  return r.core.state;
}

let opened: JobManager | undefined;
let cleanup: (() => void) | undefined;
closeAfterEach(() => opened, () => cleanup && { close: cleanup });

describe("plugin fault campaign", () => {
  it("every fault on every topic: the manager survives, jobs stay consistent and can end, errors name the plugin", { timeout: 120_000 }, async () => {
    const tmp = tempDir("jobtap-faults-");
    cleanup = tmp.cleanup;
    const dir = tmp.dir;
    const clock = new SimulatedClock();
    const logs: string[] = [];
    let host!: JobtapHost;
    let lastInactive: JobId | undefined;
    const factory = jobtapPlugins({ config: {}, deadlineMs: DEADLINE_MS, log: (level, message) => void logs.push(`${level}: ${message}`) });
    const mgr = await createJobManager({
      statedir: dir,
      store: "sqlite",
      clock,
      resources: { cores: 8 },
      log: (level, message) => void logs.push(`${level}: ${message}`),
      plugins: async (m) => (host = await factory(m)),
    });
    opened = mgr;
    mgr.on("event", (j) => {
      if (j.entry.name === "clean") lastInactive = j.id;
    });
    for (const topic of TOPICS) await host.loadDefinition(`chaos-${topic}`, chaosPlugin(topic, () => lastInactive));

    const faults = TOPICS.flatMap((t) => MODES.map((m) => `${t}/${m}`));
    const accepted = new Map<JobId, string>();
    const refused: Array<{ fault: string; message: string }> = [];
    // Three rounds, each fault once per round, with plain jobs in between.
    for (let round = 0; round < 3; round++) {
      const batch = faults.flatMap((f, i) => [f, ...(i % 4 === 0 ? [undefined] : [])]);
      const outcomes = mgr.submitMany(batch.map((f, i) => ({ jobspec: jobFor(f, (i % 3) + round) })));
      // A hung job.validate holds its submission until the handler deadline.
      let settled = false;
      void outcomes.then(() => (settled = true));
      for (let t = 0; t < 100 && !settled; t++) await clock.advance(100);
      (await outcomes).forEach((o, i) => {
        const f = batch[i] ?? "none";
        if ("id" in o) accepted.set(o.id, f);
        else refused.push({ fault: f, message: o.error.message });
      });
      for (let t = 0; t < 30; t++) await clock.advance(1_000);
    }
    for (let t = 0; t < 60; t++) await clock.advance(1_000);

    // Refusals happen only for faults in admission (validate, create, the dependency
    // callback at submit) and name the plugin, but for Flux's default message of a
    // dependency rejection (an OUT `reject` that is not a string is a rejection).
    expect(refused.length).toBeGreaterThan(0);
    for (const r of refused) {
      const topic = r.fault.slice(0, r.fault.indexOf("/"));
      expect(["job.validate", "job.create", "job.dependency.chaos"], `${r.fault}: ${r.message}`).toContain(topic);
      if (r.fault === "job.dependency.chaos/bad-reject") expect(r.message).toBe("rejected by job-manager dependency plugin");
      else expect(r.message).toContain(`chaos-${topic}`);
    }
    // Every job still known is in the state its eventlog folds to; plain jobs completed.
    const known = [...accepted];
    expect(known.length).toBeGreaterThan(faults.length);
    for (const [id, f] of known) {
      expect(foldedState(mgr, id), `${formatJobId(id)} (${f})`).toBe(mgr.job(id).state);
      if (f === "none") expect(mgr.job(id), formatJobId(id)).toMatchObject({ state: "INACTIVE", result: "COMPLETED" });
    }
    const exceptions = known.flatMap(([id]) => mgr.eventlog(id).filter((e) => e.name === "exception" && String(e.context?.note).includes(MARKER)));
    expect(exceptions.length).toBeGreaterThan(0);
    // Every job left pending by a fault can still be ended.
    for (const [id] of known) if (mgr.job(id).state !== "INACTIVE") mgr.cancel(id);
    for (let t = 0; t < 10; t++) await clock.advance(1_000);
    for (const [id, f] of known) expect(mgr.job(id).state, `${formatJobId(id)} (${f})`).toBe("INACTIVE");

    // Purging fires job.inactive-remove (its faults) for every job.
    expect(mgr.purgeJobs({ numLimit: 0, force: true }).length).toBe(known.length);
    expect(mgr.jobs({})).toEqual([]);

    // Every error a fault caused names the faulty plugin.
    // (Only the faults log at warn or error level here: every such line names a plugin.)
    const faultLines = logs.filter((l) => l.startsWith("warn:") || l.startsWith("error:"));
    expect(faultLines.length).toBeGreaterThan(TOPICS.length * 4);
    for (const l of faultLines) expect(l, l).toMatch(/chaos-job\./);

    // The manager works: a plain job after all that completes, and the plugins can go.
    const after = mgr.submit(jobFor(undefined, 1));
    await clock.advance(10);
    await clock.advance(10);
    const id = await after;
    for (let t = 0; t < 5; t++) await clock.advance(1_000);
    expect(mgr.job(id)).toMatchObject({ state: "INACTIVE", result: "COMPLETED" });
    for (const topic of TOPICS) host.remove(`chaos-${topic}`);
  });

  it("faults outside job topics (setup, conf.update, timers, services, a removed plugin's context) leave running jobs alone", { timeout: 60_000 }, async () => {
    const tmp = tempDir("jobtap-faults-");
    cleanup = tmp.cleanup;
    const clock = new SimulatedClock();
    const logs: string[] = [];
    let host!: JobtapHost;
    const factory = jobtapPlugins({ config: {}, deadlineMs: DEADLINE_MS, log: (level, message) => void logs.push(`${level}: ${message}`) });
    const mgr = await createJobManager({ statedir: tmp.dir, store: "sqlite", clock, resources: { cores: 4 }, log: (level, message) => void logs.push(`${level}: ${message}`), plugins: async (m) => (host = await factory(m)) });
    opened = mgr;
    const submitted = mgr.submitMany(Array.from({ length: 6 }, (_, i) => ({ jobspec: jobFor(undefined, 5 + i) })));
    await clock.advance(10);
    const ids = (await submitted).map((o) => ("id" in o ? o.id : undefined)).filter((id) => id !== undefined);
    expect(ids).toHaveLength(6);

    await expect(host.loadDefinition("chaos-setup", () => {
      throw new Error(`${MARKER}: in setup`);
    })).rejects.toThrow(`chaos-setup: setup failed: ${MARKER}: in setup`);
    const hung = host.loadDefinition("chaos-setup-hang", () => new Promise(() => undefined)).then(() => undefined, (e: unknown) => e);
    await clock.advance(DEADLINE_MS + 1);
    expect(String(await hung)).toMatch(/chaos-setup-hang: setup failed: .*2000 ms/);
    await expect(host.loadDefinition("chaos-conf", (p) => p.on("conf.update", () => {
      throw new Error(`${MARKER}: in conf.update`);
    }))).rejects.toThrow(/chaos-conf/);

    let kept: PluginContext | undefined;
    await host.loadDefinition("chaos-misc", (p) => {
      kept = p;
      p.clock.setTimeout(() => {
        throw new Error(`${MARKER}: in a timer`);
      }, 1_000);
      p.clock.setTimeout(() => Promise.reject(new Error(`${MARKER}: a timer's rejection`)), 1_000);
      // Fires only after the plugin is removed: must never run.
      p.clock.setTimeout(() => p.raiseException(ids[0]!, "chaos", 0, `${MARKER}: from the grave`), 3_000);
      p.serviceRegister("boom", () => {
        throw new Error(`${MARKER}: in a service`);
      });
      p.serviceRegister("boom-async", () => Promise.reject(new Error(`${MARKER}: an async service`)));
    });
    await clock.advance(1_500);
    const owner = { userid: mgr.owner, owner: true };
    await expect(host.callService("chaos-misc", "boom", {}, owner)).rejects.toThrow(`${MARKER}: in a service`);
    await expect(host.callService("chaos-misc", "boom-async", {}, owner)).rejects.toThrow(`${MARKER}: an async service`);
    expect(host.remove("chaos-misc")).toEqual(["chaos-misc"]);
    // The removed plugin's context refuses everything, naming the plugin.
    const p = kept!;
    const calls: Array<() => unknown> = [
      () => p.postEvent(ids[1]!, "memo", { x: 1 }),
      () => p.raiseException(ids[1]!, "chaos", 0, MARKER),
      () => p.reprioritizeAll(),
      () => p.reprioritizeJob(ids[1]!, 5),
      () => p.subscribe(ids[1]!),
      () => p.dependencyAdd(ids[1]!, "x"),
      () => p.setFlag(ids[1]!, "debug"),
      () => p.jobspecUpdate(ids[1]!, { "attributes.system.duration": 5 }),
      () => p.auxSet(ids[1]!, "k", 1),
      () => p.on("job.new", () => undefined),
      () => p.serviceRegister("late", () => undefined),
    ];
    for (const call of calls) expect(call).toThrow(/chaos-misc.*removed|removed.*chaos-misc/);

    for (let t = 0; t < 15; t++) await clock.advance(1_000);
    for (const id of ids) expect(mgr.job(id), formatJobId(id)).toMatchObject({ state: "INACTIVE", result: "COMPLETED" });
    expect(mgr.eventlog(ids[0]!).some((e) => e.name === "exception")).toBe(false);
    const timerLines = logs.filter((l) => l.includes(`${MARKER}: in a timer`) || l.includes(`${MARKER}: a timer's rejection`));
    expect(timerLines).toHaveLength(2);
    for (const l of timerLines) expect(l).toContain("chaos-misc");
    expect(logs.some((l) => l.includes("from the grave"))).toBe(false);
  });
});

