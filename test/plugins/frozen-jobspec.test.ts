import { describe, expect, it } from "vitest";
import { closeAfterEach } from "../closing.js";
import { createTestHost, type TestHost } from "../../src/testhost.js";
import { withRead, type JobArgs, type PluginContext } from "../../src/plugin.js";

let h: TestHost | undefined;
closeAfterEach(() => h);

/** Writes to the IN jobspec on job.new, catching (and keeping) what the write threw. */
function mutator(caught: unknown[]) {
  return (p: PluginContext) =>
    p.on("job.new", (args: JobArgs) => {
      try {
        (args.jobspec.attributes.system as Record<string, unknown>).duration = 999;
      } catch (e) {
        caught.push(e);
      }
      try {
        args.jobspec.attributes.user = { sneaky: true };
      } catch (e) {
        caught.push(e);
      }
    });
}

describe("plugins get a read-only jobspec", () => {
  it("a write throws TypeError and changes nothing for later plugins or the manager", async () => {
    const caught: unknown[] = [];
    const seen: unknown[] = [];
    const t = (h = await createTestHost({ plugin: mutator(caught), name: "mutator" }));
    await t.plugins.loadDefinition("observer", (p) => {
      p.on("job.new", (args) => void seen.push(args.jobspec.attributes.system?.duration, args.jobspec.attributes.user));
      p.on("job.state.priority", (args) => withRead(p.lookup(args.id), (a) => void seen.push(a?.jobspec.attributes.user)));
    });
    const id = await t.submit({ runDuration: 1, system: { duration: 60 } });
    await t.runToCompletion(id);
    expect(caught).toHaveLength(2);
    for (const e of caught) expect(e).toBeInstanceOf(TypeError);
    expect(seen).toEqual([60, undefined, undefined]);
    expect(t.manager.jobspec(id).attributes.system?.duration).toBe(60);
    expect(t.manager.jobspec(id).attributes.user).toBeUndefined();
    expect(Object.isFrozen(t.manager.jobspec(id))).toBe(false);
  });

  it("an uncaught write is a labelled handler error, and the job still runs", async () => {
    const t = (h = await createTestHost({
      name: "writer",
      plugin: (p) =>
        p.on("job.state.depend", (args) => {
          args.jobspec.tasks.push({ command: ["rm", "-rf", "/"] });
        }),
    }));
    const id = await t.submit({ runDuration: 1 });
    expect((await t.runToCompletion(id)).result).toBe("COMPLETED");
    expect(t.manager.jobspec(id).tasks).toHaveLength(1);
    expect(t.log.some((l) => /plugin writer: job\.state\.depend: job .*(not extensible|read.only|Cannot add)/i.test(l))).toBe(
      true,
    );
  });
});

describe("frozenCopy", () => {
  it("copies JSON data deeply and frozen, keeping a literal __proto__ key as data", async () => {
    const { frozenCopy } = await import("../../src/plugins/shield.js");
    const src = JSON.parse('{"a":[1,{"b":2}],"__proto__":{"polluted":true}}') as Record<string, unknown>;
    const copy = frozenCopy(src);
    expect(copy).toEqual(src);
    expect(Object.getPrototypeOf(copy)).toBe(Object.prototype);
    expect(Object.keys(copy)).toEqual(["a", "__proto__"]);
    expect(Object.isFrozen((copy.a as unknown[])[1])).toBe(true);
    expect(Object.isFrozen(src)).toBe(false);
  });

  it("copies own enumerable keys in order, undefined values and array holes included, nothing inherited", async () => {
    const { frozenCopy } = await import("../../src/plugins/shield.js");
    const src = Object.create({ inherited: 1 }) as Record<string, unknown>;
    Object.assign(src, { z: undefined, 2: "two", a: [1, , { deep: [undefined] }], 1: null });
    Object.defineProperty(src, "hidden", { value: 1, enumerable: false });
    const copy = frozenCopy(src);
    expect(Object.keys(copy)).toEqual(["1", "2", "z", "a"]);
    expect("z" in copy && copy.z === undefined).toBe(true);
    expect("inherited" in copy || "hidden" in copy).toBe(false);
    const a = copy.a as unknown[];
    expect(a).toHaveLength(3);
    expect(1 in a).toBe(false);
    expect(Object.isFrozen(a) && Object.isFrozen(a[2]) && Object.isFrozen((a[2] as { deep: unknown[] }).deep)).toBe(true);
  });
});

describe("the job keeps a frozen copy of what was submitted", () => {
  it("the submitter's object is neither kept nor touched, and every plugin call gets the job's own copy", async () => {
    const seen: unknown[] = [];
    const t = (h = await createTestHost({
      name: "watcher",
      plugin: (p) => {
        p.on("job.new", (args) => void seen.push(args.jobspec));
        p.on("job.state.run", (args) => void seen.push(args.jobspec));
      },
    }));
    const mine = {
      version: 1,
      resources: [{ type: "slot", count: 1, label: "task", with: [{ type: "core", count: 1 }] }],
      tasks: [{ command: ["true"], slot: "task", count: { per_slot: 1 } }],
      attributes: { system: { duration: 60, exec: { test: { run_duration: "1s" } } } },
    };
    const before = JSON.stringify(mine);
    const p = t.manager.submit(mine);
    // Changed right after submit: the job does not see it.
    mine.attributes.system.duration = 1;
    mine.tasks[0]!.command.push("--oops");
    await t.advance(10);
    const id = await p;
    expect((await t.runToCompletion(id)).result).toBe("COMPLETED");
    // Nothing was added to the submitter's object, nothing in it frozen.
    expect(Object.getOwnPropertySymbols(mine)).toEqual([]);
    expect(Object.isFrozen(mine) || Object.isFrozen(mine.tasks[0]!.command)).toBe(false);
    expect(JSON.stringify(t.manager.jobspec(id))).toBe(before);
    // One frozen object, the same for every call of every topic.
    expect(seen).toHaveLength(2);
    expect(seen[0]).toBe(seen[1]);
    expect(Object.isFrozen((seen[0] as { tasks: Array<{ command: string[] }> }).tasks[0]!.command)).toBe(true);
  });
});

describe("jobs submitted with the same jobspec text share one frozen copy", () => {
  it("shares the copy between equal jobspecs, never between different ones, and a change after submit starts a new one", async () => {
    const seen = new Map<string, unknown>();
    const t = (h = await createTestHost({
      name: "watcher",
      plugin: (p) => p.on("job.new", (args) => void seen.set(String(args.id), args.jobspec)),
    }));
    const spec = (duration: number) => ({
      version: 1,
      resources: [{ type: "slot", count: 1, label: "task", with: [{ type: "core", count: 1 }] }],
      tasks: [{ command: ["true"], slot: "task", count: { per_slot: 1 } }],
      attributes: { system: { duration, exec: { test: { run_duration: "1s" } } } },
    });
    const mine = spec(60);
    const pa = t.manager.submit(mine);
    const pb = t.manager.submit(spec(60)); // another object, the same text
    mine.attributes.system.duration = 61; // the same object, changed after its submit
    const pc = t.manager.submit(mine);
    const pd = t.manager.submit(spec(60));
    await t.advance(10);
    const [a, b, c, d] = await Promise.all([pa, pb, pc, pd]);
    const js = (id: unknown) => seen.get(String(id)) as ReturnType<typeof spec>;
    expect(js(a)).toBe(js(b));
    expect(js(c)).not.toBe(js(a));
    expect(js(a).attributes.system.duration).toBe(60);
    expect(js(c).attributes.system.duration).toBe(61);
    // Only the last text is remembered: back to the first one, a new copy.
    expect(js(d)).not.toBe(js(a));
    expect(js(d)).toEqual(js(a));
    for (const id of [a, b, c, d]) expect((await t.runToCompletion(id)).result).toBe("COMPLETED");
    expect(t.manager.jobspec(b).attributes.system?.duration).toBe(60);
    expect(t.manager.jobspec(c).attributes.system?.duration).toBe(61);
  });
});

describe("sameData", () => {
  it("is true only for data that serializes to the copy's text, key order included", async () => {
    const { frozenCopy, sameData, shapeOf } = await import("../../src/manager/core/frozen.js");
    const make = () => ({ a: 1, b: [1, "x", { c: null, d: [true] }], e: { f: "g" } });
    const copy = frozenCopy(make());
    const shape = shapeOf(copy)!;
    const same = (v: unknown) => sameData(v, copy, shape);
    expect(same(make())).toBe(true);
    expect(same(copy)).toBe(true);
    // Each of these serializes differently (or may): not the same.
    const variants: Array<(o: ReturnType<typeof make>) => unknown> = [
      (o) => ({ b: o.b, a: o.a, e: o.e }), // key order
      (o) => ({ ...o, z: 1 }),
      (o) => ({ a: o.a, b: o.b }),
      (o) => ((o.b[2] as { d: boolean[] }).d.push(false), o),
      (o) => ((o.b[2] as { c: unknown }).c = 0, o),
      (o) => ((o.e as Record<string, unknown>).f = new Date(0), o),
      (o) => ({ ...o, a: NaN }),
      (o) => Object.assign(Object.create({ toJSON: () => "x" }), o),
      (o) => ((o.b as unknown[]).length = 2, o),
      (o) => ({ ...o, e: ["g"] }),
      (o) => [o],
      () => "a string",
      () => null,
    ];
    for (const v of variants) expect(same(v(make()))).toBe(false);
    // What JSON leaves out anyway.
    const withUndefined = frozenCopy({ a: 1, u: undefined });
    expect(sameData({ a: 1, u: undefined }, withUndefined, shapeOf(withUndefined)!)).toBe(true);
    expect(sameData({ a: 1 }, withUndefined, shapeOf(withUndefined)!)).toBe(false);
  });

  it("a job submitted with the same values in another key order keeps its own order", async () => {
    const t = (h = await createTestHost({ name: "none", plugin: () => undefined }));
    const spec = () => ({
      version: 1,
      resources: [{ type: "slot", count: 1, label: "task", with: [{ type: "core", count: 1 }] }],
      tasks: [{ command: ["true"], slot: "task", count: { per_slot: 1 } }],
      attributes: { system: { duration: 60, exec: { test: { run_duration: "1s" } } } },
    });
    const reordered = { ...spec(), attributes: { system: { exec: { test: { run_duration: "1s" } }, duration: 60 } } };
    const ps = [t.manager.submit(spec()), t.manager.submit(spec()), t.manager.submit(spec()), t.manager.submit(reordered)];
    await t.advance(10);
    const ids = await Promise.all(ps);
    expect(JSON.stringify(t.manager.jobspec(ids[2]!))).toBe(JSON.stringify(spec()));
    expect(JSON.stringify(t.manager.jobspec(ids[3]!))).toBe(JSON.stringify(reordered));
    for (const id of ids) expect((await t.runToCompletion(id)).result).toBe("COMPLETED");
  });
});
